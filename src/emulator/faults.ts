import { seededRandom } from './random.js';

/** One fault rule; without `route` (and `method`) it applies to every API request. */
export interface FaultRule {
  /** Route template, exactly as in the spec (`/v1/projects/{ref}/secrets`). */
  route?: string;
  /** HTTP method; all methods when absent. */
  method?: string;
  /** Probability (0..1) of answering a 5xx without applying the request. */
  errorRate?: number;
  /** Status of those answers (500..599, default 500). */
  errorStatus?: number;
  /** Real milliseconds added before the request is served. */
  latencyMs?: number;
  /** Probability of never answering: the socket is held open until the client gives up. */
  timeoutRate?: number;
  /** Probability of resetting the connection before the request is applied. */
  resetRate?: number;
  /** Probability of applying the request, then destroying the socket instead of answering. */
  lostAnswerRate?: number;
  /** Probability of starting a rate-limit block for the caller (429 now and for a whole window). */
  rateLimitRate?: number;
  /** Stop injecting after this many faults from this rule (latency excluded). */
  maxFaults?: number;
}

export interface FaultConfig {
  /** With a seed, the same sequence of requests meets the same faults. */
  seed?: number;
  rules?: FaultRule[];
  /** Starts a 429 block now for every user (or the users named) lasting `ms` (default: one window). */
  rateLimitBlock?: { users?: string[]; ms?: number };
  /**
   * Probabilities that a lifecycle operation started from now on ends in failure: create ->
   * INIT_FAILED, pause -> PAUSE_FAILED, restore -> RESTORE_FAILED, upgrade -> an upgrade error.
   */
  lifecycleFailures?: Partial<Record<LifecycleKind, number>>;
}

type LifecycleKind = 'create' | 'pause' | 'restore' | 'upgrade';
const LIFECYCLE_KINDS: readonly LifecycleKind[] = ['create', 'pause', 'restore', 'upgrade'];

type FaultOutcome = 'error' | 'timeout' | 'reset' | 'lost-answer' | 'rate-limit';

interface FaultDecision {
  latencyMs: number;
  outcome?: FaultOutcome;
  errorStatus: number;
}

const RATE_FIELDS = ['errorRate', 'timeoutRate', 'resetRate', 'lostAnswerRate', 'rateLimitRate'] as const;
const ALLOWED_FIELDS = new Set(['route', 'method', 'errorStatus', 'latencyMs', 'maxFaults', ...RATE_FIELDS]);

/** Validates a fault configuration up front; the message names the field. */
export function validateFaultConfig(input: unknown): FaultConfig {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new TypeError('Expected the fault configuration to be an object');
  const config = input as Record<string, unknown>;
  for (const key of Object.keys(config)) {
    if (!['seed', 'rules', 'rateLimitBlock', 'lifecycleFailures'].includes(key)) {
      throw new TypeError(`Unknown fault option \`${key}\`; expected seed, rules, rateLimitBlock or lifecycleFailures`);
    }
  }
  if (config.seed !== undefined && (typeof config.seed !== 'number' || !Number.isInteger(config.seed))) {
    throw new TypeError(`Expected \`seed\` to be an integer, got \`${String(config.seed)}\``);
  }
  if (config.rules !== undefined && !Array.isArray(config.rules)) throw new TypeError('Expected `rules` to be an array');
  (config.rules as unknown[] | undefined)?.forEach((rule, index) => {
    if (!rule || typeof rule !== 'object') throw new TypeError(`Expected \`rules[${index}]\` to be an object`);
    for (const [key, value] of Object.entries(rule)) {
      const at = `rules[${index}].${key}`;
      if (!ALLOWED_FIELDS.has(key)) throw new TypeError(`Unknown fault rule field \`${at}\``);
      if ((RATE_FIELDS as readonly string[]).includes(key) && (typeof value !== 'number' || value < 0 || value > 1)) {
        throw new TypeError(`Expected \`${at}\` to be a probability between 0 and 1, got \`${String(value)}\``);
      }
      if ((key === 'latencyMs' || key === 'maxFaults') && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
        throw new TypeError(`Expected \`${at}\` to be a number >= 0, got \`${String(value)}\``);
      }
      if (key === 'errorStatus' && (typeof value !== 'number' || !Number.isInteger(value) || value < 500 || value > 599)) {
        throw new TypeError(`Expected \`${at}\` to be a status between 500 and 599, got \`${String(value)}\``);
      }
      if ((key === 'route' || key === 'method') && typeof value !== 'string') throw new TypeError(`Expected \`${at}\` to be a string`);
    }
  });
  const block = config.rateLimitBlock as Record<string, unknown> | undefined;
  if (block !== undefined) {
    if (!block || typeof block !== 'object') throw new TypeError('Expected `rateLimitBlock` to be an object');
    if (block.ms !== undefined && (typeof block.ms !== 'number' || block.ms < 0)) throw new TypeError('Expected `rateLimitBlock.ms` to be a number >= 0');
    if (block.users !== undefined && !(Array.isArray(block.users) && block.users.every((u) => typeof u === 'string'))) {
      throw new TypeError('Expected `rateLimitBlock.users` to be an array of user ids');
    }
  }
  const lifecycle = config.lifecycleFailures as Record<string, unknown> | undefined;
  if (lifecycle !== undefined) {
    if (!lifecycle || typeof lifecycle !== 'object') throw new TypeError('Expected `lifecycleFailures` to be an object');
    for (const [kind, rate] of Object.entries(lifecycle)) {
      if (!(LIFECYCLE_KINDS as readonly string[]).includes(kind)) throw new TypeError(`Unknown lifecycle \`lifecycleFailures.${kind}\`; expected ${LIFECYCLE_KINDS.join(', ')}`);
      if (typeof rate !== 'number' || rate < 0 || rate > 1) throw new TypeError(`Expected \`lifecycleFailures.${kind}\` to be a probability between 0 and 1, got \`${String(rate)}\``);
    }
  }
  return config as FaultConfig;
}

/** Decides, per request, which fault (if any) it meets. Rules are consulted in order. */
export class FaultInjector {
  #rules: Array<FaultRule & { injected: number }> = [];
  #random: () => number = Math.random;
  #config: FaultConfig = {};

  configure(config: FaultConfig): void {
    this.#config = config;
    this.#rules = (config.rules ?? []).map((rule) => ({ ...rule, method: rule.method?.toUpperCase(), injected: 0 }));
    this.#random = config.seed === undefined ? Math.random : seededRandom(config.seed);
  }

  get config(): FaultConfig {
    return this.#config;
  }

  /** Whether a lifecycle operation starting now should end in failure. */
  lifecycleFails(kind: LifecycleKind): boolean {
    const rate = this.#config.lifecycleFailures?.[kind];
    if (!rate) return false;
    return this.#random() < rate;
  }

  /** A uniform draw from the fault sequence (so a seed fixes it too). */
  draw(): number {
    return this.#random();
  }

  decide(method: string, route: string): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0, errorStatus: 500 };
    for (const rule of this.#rules) {
      if (rule.route !== undefined && rule.route !== route) continue;
      if (rule.method !== undefined && rule.method !== method) continue;
      decision.latencyMs += rule.latencyMs ?? 0;
      if (decision.outcome) continue;
      if (rule.maxFaults !== undefined && rule.injected >= rule.maxFaults) continue;
      // One draw per rule and request keeps a seeded sequence stable whatever the rates are.
      const draw = this.#random();
      let threshold = 0;
      const pick: Array<[FaultOutcome, number | undefined]> = [
        ['reset', rule.resetRate],
        ['timeout', rule.timeoutRate],
        ['rate-limit', rule.rateLimitRate],
        ['error', rule.errorRate],
        ['lost-answer', rule.lostAnswerRate],
      ];
      for (const [outcome, rate] of pick) {
        threshold += rate ?? 0;
        if (draw < threshold) {
          decision.outcome = outcome;
          decision.errorStatus = rule.errorStatus ?? 500;
          rule.injected++;
          break;
        }
      }
    }
    return decision;
  }
}
