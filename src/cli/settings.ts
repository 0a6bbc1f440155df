// The command's options, parsed and validated once, at the edge, into one typed value: main.ts
// makes it from the command line and the environment (flags over environment over defaults)
// before any command runs, with messages that name the option and the value. Everything the
// commands hand to the layers below comes from it; nothing below `cli/` sees the options.
import { resolve } from 'node:path';
import { parseRateModel, type RateModel } from '../api/rate-model.js';
import { InvalidScheduleError, validateSchedule } from '../daemon/schedule.js';
import { parseListenAddress } from '../daemon/listen-address.js';
import { parseObserveList } from '../daemon/observe-list.js';
import type { ObservedResource } from '../reconcile/kinds/observed.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../util/log-options.js';
import { parseDuration, parseRate, type RateSpec } from '../util/rate.js';
import { UsageError } from './usage-error.js';
import { OPTIONS, commandTakes, type CommandName, type OptionName, type OptionsOf, type ParsedLists, type ParsedValues } from './options.js';

/** Every option of the command line, typed; paths are as given (the commands resolve them against the working directory). */
export interface Settings {
  /** `--manifests`, as given. */
  manifests?: string;
  dryRun: boolean;
  watch: boolean;
  sandbox: boolean;
  /** `--seed`, resolved against the working directory. */
  seed?: string;
  /** `--output`, as given (each command knows its formats). */
  output: string;
  detailedExitcode: boolean;
  apiUrl?: string;
  tokenFile?: string;
  /** `--token-file` was given as a flag (not MANAGEMENT_API_TOKEN_FILE), as messages name it. */
  tokenFileFlag: boolean;
  /**
   * `--rate-limit` or RECONCILE_RATE_LIMIT when either is given (a command without it uses its
   * own default: the daemon's, a one-shot run's or the sandbox's).
   */
  rateLimit?: RateSpec;
  /** `--rate-limit` when given as a flag (the emulator's own limit: the environment variable is the reconciler's). */
  rateLimitFlag?: RateSpec;
  /** The request budget of a real API: `rateLimit`, else the default of a daemon (`--watch`) or a one-shot run. */
  budget: RateSpec;
  rateModel: RateModel;
  /** `--rate-model` when given as a flag (the emulator's). */
  rateModelFlag?: RateModel;
  secretDirs?: string;
  /** `--state-dir`, resolved against the working directory. */
  stateDir: string;
  /** `--state-dir` or RECONCILE_STATE_DIR was given (not the default). */
  stateDirGiven: boolean;
  /**
   * Where the state directory was by default before it followed the manifests directory (the
   * working directory's `.reconcile`), when that is another place: a state found there is moved
   * or used, never replaced by an empty one (cli/state-dir.ts).
   */
  legacyStateDir?: string;
  /** `continuous` or a cron expression that node-cron accepts. */
  resync: string;
  maxObservationAgeMs?: number;
  observe: ObservedResource[];
  metricsAddress: ReturnType<typeof parseListenAddress>;
  httpTimeoutMs: number;
  logLevel: string;
  /** Absent: pretty on a terminal, JSON otherwise. */
  logFormat?: LogFormat;
  metricsPerResource: boolean;
  allowEmpty: boolean;
  /** `--yes`: a one-shot apply does not ask for confirmation. */
  yes: boolean;
  shard?: string;
  shards?: string;
  lockTimeoutMs: number;
  /** `--organization-wait`: with `--shard`, how long an apply waits for an organization another shard creates (0: not at all). */
  organizationWaitMs: number;
  /** `--notify` URLs, in order. */
  notify: string[];
  notifications?: string;
  triggerTokenFile?: string;
  /** `--trigger-interval`, ms. */
  triggerIntervalMs: number;
  webhookSecretFile?: string;
  daemonUrl: string;
  /** `--daemon-url` or RECONCILE_DAEMON_URL was given (status reads the daemon's view only then). */
  daemonUrlGiven: boolean;
  statusTokenFile?: string;
  /** `--status-public`: without a status token, answer every client (not only loopback ones). */
  statusPublic: boolean;
  /** `--runbook-url`: an http(s) URL. */
  runbookUrl?: string;
  /** `status --live`. */
  live: boolean;
  project?: string;
  all: boolean;
  /** `approve --revision`: the revision to approve (default: the daemon's current one). */
  revision?: string;
  /** `resume --rollout`: the Rollout document (default: the only one). */
  rollout?: string;
  out?: string;
  /** `--max-plan-age`: as given (a refusal quotes it) and in milliseconds. */
  maxPlanAge: { text: string; ms: number };
  host: string;
  port: number;
  token?: string;
  speed: number;
  help: boolean;
  version: boolean;
}

/** The settings each option makes (test/cli/settings-defaults.test.ts checks that every setting has its option). */
export const SETTING_KEYS = {
  manifests: ['manifests'],
  'dry-run': ['dryRun'],
  watch: ['watch'],
  'api-url': ['apiUrl'],
  'token-file': ['tokenFile', 'tokenFileFlag'],
  sandbox: ['sandbox'],
  seed: ['seed'],
  output: ['output'],
  'detailed-exitcode': ['detailedExitcode'],
  'rate-limit': ['rateLimit', 'rateLimitFlag', 'budget'],
  'rate-model': ['rateModel', 'rateModelFlag'],
  'secret-dirs': ['secretDirs'],
  'state-dir': ['stateDir', 'stateDirGiven', 'legacyStateDir'],
  resync: ['resync'],
  'max-observation-age': ['maxObservationAgeMs'],
  observe: ['observe'],
  'metrics-addr': ['metricsAddress'],
  'http-timeout': ['httpTimeoutMs'],
  'log-level': ['logLevel'],
  'log-format': ['logFormat'],
  'metrics-per-resource': ['metricsPerResource'],
  'allow-empty': ['allowEmpty'],
  yes: ['yes'],
  shard: ['shard'],
  shards: ['shards'],
  'lock-timeout': ['lockTimeoutMs'],
  'organization-wait': ['organizationWaitMs'],
  notify: ['notify'],
  notifications: ['notifications'],
  'trigger-token-file': ['triggerTokenFile'],
  'trigger-interval': ['triggerIntervalMs'],
  'webhook-secret-file': ['webhookSecretFile'],
  'daemon-url': ['daemonUrl', 'daemonUrlGiven'],
  'status-token-file': ['statusTokenFile'],
  'status-public': ['statusPublic'],
  'runbook-url': ['runbookUrl'],
  live: ['live'],
  project: ['project'],
  all: ['all'],
  revision: ['revision'],
  rollout: ['rollout'],
  out: ['out'],
  'max-plan-age': ['maxPlanAge'],
  host: ['host'],
  port: ['port'],
  token: ['token'],
  speed: ['speed'],
  help: ['help'],
  version: ['version'],
} as const satisfies { [N in OptionName]: ReadonlyArray<keyof Settings> };

/**
 * The settings a command gets: those of the options the table gives it (options.ts). A command
 * typed with them cannot read a setting of another command's options.
 */
export type SettingsOf<C extends CommandName> = Pick<Settings, (typeof SETTING_KEYS)[OptionsOf<C>][number]>;

/** A command's settings, and only those: what main.ts hands the command. */
export function settingsFor<C extends CommandName>(command: C, settings: Settings): SettingsOf<C> {
  const slice: Record<string, unknown> = {};
  for (const [name, keys] of Object.entries(SETTING_KEYS) as Array<[OptionName, ReadonlyArray<keyof Settings>]>) {
    if (!commandTakes(command, name)) continue;
    for (const key of keys) if (settings[key] !== undefined) slice[key] = settings[key];
  }
  return slice as SettingsOf<C>;
}

/** What the command line parser found: option values (flag, environment or default) and the flags given. */
export interface ParsedOptions {
  /** The command and its arguments (the state directory's default follows the manifests directory they name). */
  command?: string;
  positionals?: readonly string[];
  values: ParsedValues;
  lists?: Readonly<Partial<ParsedLists>>;
  flags: ReadonlySet<string>;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * The budget when `--rate-limit` (and RECONCILE_RATE_LIMIT) is not given. Together they stay
 * within the spec's 60 per minute for one identity: a daemon and a CI dry run (or a person at a
 * terminal) sharing a token never exceed it, whatever each does.
 */
export const DAEMON_DEFAULT_RATE = '45/60s';
export const ONE_SHOT_DEFAULT_RATE = '15/60s';

function text(values: ParsedValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The option's value, else its default: the option table (options.ts) holds every default once,
 * and this is the one place a setting reads it (main.ts fills the same defaults from the table;
 * a caller that parses fewer values gets them here).
 */
function valueOf(values: ParsedValues, name: string): string {
  const value = text(values, name) ?? OPTIONS[name]?.default;
  if (value === undefined) throw new Error(`the option table has no default for --${name}`);
  return value;
}

/** The option was given, as a flag or through its environment variable (not merely defaulted). */
function given(parsed: Pick<ParsedOptions, 'flags' | 'env'>, name: string): boolean {
  if (parsed.flags.has(name)) return true;
  const variable = OPTIONS[name]?.env;
  return Boolean(variable && parsed.env[variable]);
}

/** Where a value came from, as a message names it: the flag, or its environment variable. */
function sourceOf(parsed: Pick<ParsedOptions, 'flags'>, name: string): string {
  return parsed.flags.has(name) ? `--${name}` : (OPTIONS[name]?.env ?? `--${name}`);
}

/** Runs `parse`; its error becomes a UsageError, with `prefix` when given. */
function usage<T>(parse: () => T, prefix?: string): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(prefix ? `${prefix}: ${(error as Error).message}` : (error as Error).message);
  }
}

/** The budget of a real API: the option's, else the default of its kind (daemon or one-shot). */
export function resolveRate(parsed: Pick<ParsedOptions, 'values'>): RateSpec {
  const rateText = text(parsed.values, 'rate-limit') ?? (parsed.values.watch === true ? DAEMON_DEFAULT_RATE : ONE_SHOT_DEFAULT_RATE);
  return usage(() => parseRate(rateText), '--rate-limit');
}

export function resolveRateModel(parsed: Pick<ParsedOptions, 'values'>): RateModel {
  return usage(() => parseRateModel(valueOf(parsed.values, 'rate-model')), '--rate-model');
}

/** `--log-level` and `--log-format` (or their environment variables): checked first, their messages alone on standard error. */
export function logOptionProblem(parsed: Pick<ParsedOptions, 'values' | 'flags'>): string | undefined {
  const level = text(parsed.values, 'log-level');
  if (level !== undefined && !LOG_LEVELS.includes(level)) return `Expected ${sourceOf(parsed, 'log-level')} to be one of ${LOG_LEVELS.join(', ')}, got \`${level}\``;
  const format = text(parsed.values, 'log-format');
  if (format !== undefined && !(LOG_FORMATS as readonly string[]).includes(format)) return `Expected ${sourceOf(parsed, 'log-format')} to be one of ${LOG_FORMATS.join(', ')}, got \`${format}\``;
  return undefined;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`Expected --port to be an integer between 0 and 65535, got \`${value}\``);
  return port;
}

function parseSpeed(value: string): number {
  const speed = Number(value);
  if (!Number.isFinite(speed) || speed <= 0) throw new UsageError(`Expected --speed to be a number > 0, got \`${value}\``);
  return speed;
}

function parseResync(value: string): string {
  // The table's default is a valid schedule (test/cli/settings-defaults.test.ts): node-cron is
  // loaded only to check a schedule that was given.
  if (value === 'continuous' || value === OPTIONS.resync?.default) return value;
  try {
    validateSchedule(value);
  } catch (error) {
    if (error instanceof InvalidScheduleError) throw new UsageError(`${error.message} (or \`continuous\`)`);
    throw error;
  }
  return value;
}

function parseBoolean(parsed: ParsedOptions, name: string): boolean {
  const value = valueOf(parsed.values, name);
  if (value !== 'true' && value !== 'false') throw new UsageError(`${sourceOf(parsed, name)}: expected true or false, got \`${value}\``);
  return value === 'true';
}

/** `--trigger-interval`: a duration, or `0s` for no limit between on-demand passes. */
function triggerInterval(value: string): number {
  return /^\s*0+(?:ms|s|m|h)?\s*$/.test(value) ? 0 : usage(() => parseDuration(value), '--trigger-interval');
}

/** `--organization-wait` in milliseconds; `0s` (any zero) is no wait at all (a duration is otherwise > 0). */

function organizationWait(value: string): number {
  if (/^0+(ms|s|m|h)?$/.test(value.trim())) return 0;
  return usage(() => parseDuration(value), '--organization-wait');
}

function runbookUrl(value: string | undefined): string | undefined {
  if (value !== undefined && !/^https?:\/\/[^\s]+$/.test(value)) {
    throw new UsageError(`--runbook-url: expected an http(s) URL such as https://git.example.com/ops/fleet/blob/main/docs/runbook.md, got \`${value}\``);
  }
  return value;
}

function maxPlanAge(value: string): { text: string; ms: number } {
  return { text: value, ms: usage(() => parseDuration(value), '--max-plan-age') };
}

/**
 * The manifests directory a command names (DIR, or `--manifests`, else the working directory):
 * `reconcile [DIR]`, `--watch`, `status [DIR]`, `validate [DIR]`, `apply FILE [DIR]`.
 */
function manifestsDirOf(parsed: ParsedOptions): string {
  const positionals = parsed.positionals ?? [];
  const command = parsed.command ?? 'reconcile';
  const positional = command === 'apply' ? positionals[1] : ['reconcile', 'status', 'validate'].includes(command) ? positionals[0] : undefined;
  return resolve(parsed.cwd, positional ?? text(parsed.values, 'manifests') ?? '.');
}

/** `--state-dir` as given (relative to the working directory), else `.reconcile` inside the manifests directory. */
function stateDirSettings(parsed: ParsedOptions): Pick<Settings, 'stateDir' | 'stateDirGiven' | 'legacyStateDir'> {
  const name = valueOf(parsed.values, 'state-dir');
  if (given(parsed, 'state-dir')) return { stateDir: resolve(parsed.cwd, name), stateDirGiven: true };
  const stateDir = resolve(manifestsDirOf(parsed), name);
  const legacy = resolve(parsed.cwd, name);
  return { stateDir, stateDirGiven: false, ...(legacy !== stateDir ? { legacyStateDir: legacy } : {}) };
}

/** Parses and validates every option once; a value that does not parse is a UsageError naming the option. */
export function parseSettings(parsed: ParsedOptions): Settings {
  const { values, cwd } = parsed;
  const optional = <K extends string, T>(key: K, value: T | undefined): { [P in K]?: T } => (value === undefined ? {} : ({ [key]: value } as { [P in K]?: T }));
  const rateText = text(values, 'rate-limit');
  const maxAge = text(values, 'max-observation-age');
  const seed = text(values, 'seed');
  const settings: Settings = {
    ...optional('manifests', text(values, 'manifests')),
    dryRun: values['dry-run'] === true,
    watch: values.watch === true,
    sandbox: values.sandbox === true,
    ...optional('seed', seed === undefined ? undefined : resolve(cwd, seed)),
    output: valueOf(values, 'output'),
    detailedExitcode: values['detailed-exitcode'] === true,
    ...optional('apiUrl', text(values, 'api-url')),
    ...optional('tokenFile', text(values, 'token-file')),
    tokenFileFlag: parsed.flags.has('token-file'),
    ...optional('rateLimit', given(parsed, 'rate-limit') && rateText !== undefined ? usage(() => parseRate(rateText), '--rate-limit') : undefined),
    ...optional('rateLimitFlag', parsed.flags.has('rate-limit') && rateText !== undefined ? usage(() => parseRate(rateText)) : undefined),
    budget: resolveRate(parsed),
    rateModel: resolveRateModel(parsed),
    ...optional('rateModelFlag', parsed.flags.has('rate-model') ? resolveRateModel(parsed) : undefined),
    ...optional('secretDirs', text(values, 'secret-dirs')),
    ...stateDirSettings(parsed),
    resync: parseResync(valueOf(values, 'resync')),
    ...optional('maxObservationAgeMs', maxAge === undefined ? undefined : usage(() => parseDuration(maxAge), '--max-observation-age')),
    observe: usage(() => parseObserveList(valueOf(values, 'observe')), undefined),
    metricsAddress: usage(() => parseListenAddress(valueOf(values, 'metrics-addr'))),
    httpTimeoutMs: usage(() => parseDuration(valueOf(values, 'http-timeout')), '--http-timeout'),
    logLevel: valueOf(values, 'log-level'),
    ...optional('logFormat', text(values, 'log-format') as LogFormat | undefined),
    metricsPerResource: parseBoolean(parsed, 'metrics-per-resource'),
    allowEmpty: values['allow-empty'] === true,
    yes: values.yes === true,
    ...optional('shard', text(values, 'shard')),
    ...optional('shards', text(values, 'shards')),
    lockTimeoutMs: usage(() => parseDuration(valueOf(values, 'lock-timeout')), '--lock-timeout'),
    organizationWaitMs: organizationWait(valueOf(values, 'organization-wait')),
    notify: [...(parsed.lists?.notify ?? [])],
    ...optional('notifications', text(values, 'notifications')),
    ...optional('triggerTokenFile', text(values, 'trigger-token-file')),
    triggerIntervalMs: triggerInterval(valueOf(values, 'trigger-interval')),
    ...optional('webhookSecretFile', text(values, 'webhook-secret-file')),
    daemonUrl: valueOf(values, 'daemon-url'),
    daemonUrlGiven: given(parsed, 'daemon-url'),
    ...optional('statusTokenFile', text(values, 'status-token-file')),
    statusPublic: parseBoolean(parsed, 'status-public'),
    ...optional('runbookUrl', runbookUrl(text(values, 'runbook-url'))),
    live: values.live === true,
    ...optional('project', text(values, 'project')),
    all: values.all === true,
    ...optional('revision', text(values, 'revision')),
    ...optional('rollout', text(values, 'rollout')),
    ...optional('out', text(values, 'out')),
    maxPlanAge: maxPlanAge(valueOf(values, 'max-plan-age')),
    host: valueOf(values, 'host'),
    port: parsePort(valueOf(values, 'port')),
    ...optional('token', text(values, 'token')),
    speed: parseSpeed(valueOf(values, 'speed')),
    help: values.help === true,
    version: values.version === true,
  };
  return settings;
}

