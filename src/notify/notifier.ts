// Sends events to receivers without ever holding up the reconciler: `publish` only queues.
// Each receiver has its own bounded queue and one delivery at a time, paced by its rate limit,
// with a timeout per attempt and retries with backoff, all on the injected clock. A receiver
// that hangs or fails only delays (and, with its queue full, drops) its own events.
import { createHash } from 'node:crypto';
import type { Logger } from '../reconcile/types.js';
import { readJsonFile, writeJsonAtomic } from '../util/atomic-file.js';
import type { Clock } from '../util/clock.js';
import type { NotificationSettings, ReceiverSpec } from './config.js';
import { dedupKey, type NotificationEvent } from './events.js';
import { accepts, deliveryRequest, type DeliveryRequest } from './receivers.js';

export type DeliveryResult = 'sent' | 'failed';

export interface NotifierMetrics {
  delivered(receiver: string, result: DeliveryResult): void;
  dropped(receiver: string): void;
}

/** Sends one request; resolves with the answer's status, rejects on a network error or the signal. */
type SendRequest = (request: DeliveryRequest, signal: AbortSignal) => Promise<number>;

interface NotifierOptions {
  settings: NotificationSettings;
  clock: Clock;
  log: Logger;
  env: NodeJS.ProcessEnv;
  metrics?: NotifierMetrics;
  send?: SendRequest;
  /** First retry wait; doubles per attempt up to MAX_BACKOFF_MS. Default 1 s. */
  backoffMs?: number;
}

const MAX_BACKOFF_MS = 60_000;
/** Keys remembered for deduplication at most (oldest forgotten first). */
const MAX_DEDUP_KEYS = 10_000;

/** The default sender: fetch, no redirects (a redirect could carry the signature elsewhere). */
const fetchSend: SendRequest = async (request, signal) => {
  const response = await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body, signal, redirect: 'manual' });
  await response.body?.cancel();
  return response.status;
};

/** The state directory's record of what was sent: digests of deduplication keys and when. */
export const DEDUP_STATE_FILE = 'notifications.json';

interface DedupRecord {
  version: 1;
  /** [sha256 of the key (hex, 32 characters), ms since the epoch], oldest first. */
  sent: Array<[string, number]>;
}

interface Queued {
  event: NotificationEvent;
  id: string;
}

interface ReceiverState {
  spec: ReceiverSpec;
  queue: Queued[];
  draining: Promise<void> | undefined;
  /** Start times of recent deliveries, for the rate limit. */
  recent: number[];
}

function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** A network error's code (never its message: it may quote the URL, and a Slack URL is a credential). */
function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  return error instanceof Error ? error.name : 'error';
}

export class Notifier {
  readonly #options: NotifierOptions;
  readonly #receivers: ReceiverState[];
  /** Key digest -> when it was last sent; insertion order is age order. */
  readonly #seen = new Map<string, number>();
  readonly #closing = new AbortController();
  readonly #send: SendRequest;
  /** Where the deduplication record is kept (set by `restore`); undefined: in memory only. */
  #statePath: string | undefined;
  #saving: Promise<void> | undefined;
  #saveAgain = false;

  constructor(options: NotifierOptions) {
    this.#options = options;
    this.#send = options.send ?? fetchSend;
    this.#receivers = options.settings.receivers.map((spec) => ({ spec, queue: [], draining: undefined, recent: [] }));
  }

  /** Receiver names, for the metrics' first series. */
  receivers(): string[] {
    return this.#receivers.map((receiver) => receiver.spec.name);
  }

  /**
   * Reads what earlier processes sent within the deduplication window from `path` (in the state
   * directory) and keeps it there from now on, so a restart does not send standing failures
   * again. A missing or unreadable record starts empty (logged).
   */
  async restore(path: string): Promise<void> {
    this.#statePath = path;
    let record: DedupRecord | undefined;
    try {
      record = await readJsonFile<DedupRecord>(path);
    } catch (error) {
      this.#options.log.warn({ file: path, err: errorCode(error) }, 'the notification deduplication record cannot be read; starting without it');
      return;
    }
    if (!record || record.version !== 1 || !Array.isArray(record.sent)) return;
    const now = this.#options.clock.now();
    const restored = new Map<string, number>();
    for (const item of record.sent) {
      if (!Array.isArray(item) || typeof item[0] !== 'string' || typeof item[1] !== 'number') continue;
      if (now - item[1] < this.#options.settings.dedupWindowMs) restored.set(item[0], item[1]);
    }
    // Sent in this process before the record was read (none in the daemon) stay newest.
    for (const [digest, at] of this.#seen) {
      restored.delete(digest);
      restored.set(digest, at);
    }
    this.#seen.clear();
    for (const [digest, at] of [...restored].slice(-MAX_DEDUP_KEYS)) this.#seen.set(digest, at);
  }

  /** Queues the events for every receiver that takes them; returns at once, never throws. */
  publish(events: readonly NotificationEvent[]): void {
    if (this.#closing.signal.aborted) return;
    const now = this.#options.clock.now();
    let changed = false;
    let deduplicated = 0;
    for (const event of events) {
      const digest = createHash('sha256').update(dedupKey(event)).digest('hex').slice(0, 32);
      const last = this.#seen.get(digest);
      if (last !== undefined && now - last < this.#options.settings.dedupWindowMs) {
        deduplicated += 1;
        continue;
      }
      this.#seen.delete(digest);
      this.#seen.set(digest, now);
      changed = true;
      if (this.#seen.size > MAX_DEDUP_KEYS) this.#seen.delete(this.#seen.keys().next().value!);
      const id = `${digest.slice(0, 16)}-${now}`;
      for (const receiver of this.#receivers) {
        if (!accepts(receiver.spec, event)) continue;
        if (receiver.queue.length >= receiver.spec.queueSize) {
          this.#options.metrics?.dropped(receiver.spec.name);
          this.#options.log.warn({ receiver: receiver.spec.name, event: event.type, queueSize: receiver.spec.queueSize }, 'notification dropped: the receiver is behind');
          continue;
        }
        receiver.queue.push({ event, id });
        receiver.draining ??= this.#drain(receiver).finally(() => (receiver.draining = undefined));
      }
    }
    if (events.length > 0) this.#options.log.debug({ events: events.length, deduplicated }, 'notifications published');
    if (changed) this.#save();
  }

  /** Writes the record (atomically, one write at a time; a change during a write writes again). */
  #save(): void {
    const path = this.#statePath;
    if (path === undefined) return;
    if (this.#saving) {
      this.#saveAgain = true;
      return;
    }
    this.#saving = (async () => {
      do {
        this.#saveAgain = false;
        const now = this.#options.clock.now();
        const sent = [...this.#seen].filter(([, at]) => now - at < this.#options.settings.dedupWindowMs);
        try {
          await writeJsonAtomic(path, { version: 1, sent } satisfies DedupRecord);
        } catch (error) {
          this.#options.log.warn({ file: path, err: errorCode(error) }, 'the notification deduplication record cannot be written');
        }
      } while (this.#saveAgain);
    })().finally(() => (this.#saving = undefined));
  }

  /** Resolves when the deduplication record on disk is up to date (tests, shutdown). */
  async flushed(): Promise<void> {
    while (this.#saving) await this.#saving;
  }

  /** Resolves when every queue is empty and nothing is in flight (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = this.#receivers.map((receiver) => receiver.draining).filter((work) => work !== undefined);
      if (busy.length === 0) return;
      await Promise.allSettled(busy);
    }
  }

  /** Abandons queued events and aborts deliveries in flight. */
  async close(): Promise<void> {
    this.#closing.abort(new Error('notifier closed'));
    await this.idle();
    await this.flushed();
  }

  async #drain(receiver: ReceiverState): Promise<void> {
    const signal = this.#closing.signal;
    while (receiver.queue.length > 0 && !signal.aborted) {
      const item = receiver.queue.shift()!;
      try {
        await this.#paced(receiver, signal);
        await this.#deliver(receiver, item, signal);
      } catch (error) {
        if (signal.aborted) break;
        this.#options.log.error({ receiver: receiver.spec.name, err: errorCode(error) }, 'notification delivery failed unexpectedly');
      }
    }
    if (signal.aborted) receiver.queue.length = 0;
  }

  async #paced(receiver: ReceiverState, signal: AbortSignal): Promise<void> {
    const { clock } = this.#options;
    const { limit, windowMs } = receiver.spec.rate;
    for (;;) {
      const now = clock.now();
      receiver.recent = receiver.recent.filter((at) => now - at < windowMs);
      if (receiver.recent.length < limit) {
        receiver.recent.push(now);
        return;
      }
      await clock.sleep(receiver.recent[0]! + windowMs - now, signal);
    }
  }

  async #deliver(receiver: ReceiverState, item: Queued, signal: AbortSignal): Promise<void> {
    const { clock, log, metrics, env } = this.#options;
    const { spec } = receiver;
    const fields = { receiver: spec.name, event: item.event.type, delivery: item.id };
    let request: DeliveryRequest;
    try {
      request = await deliveryRequest(spec, item.event, item.id, env);
    } catch (error) {
      // A secret that does not resolve: its message names the variable or file only.
      log.warn({ ...fields, reason: (error as Error).message }, 'notification not sent');
      metrics?.delivered(spec.name, 'failed');
      return;
    }
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.#attempt(request, spec.timeoutMs, signal);
      if (signal.aborted) return;
      if (outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300) {
        log.debug({ ...fields, status: outcome.status, attempt }, 'notification sent');
        metrics?.delivered(spec.name, 'sent');
        return;
      }
      const again = outcome.status === undefined || retryable(outcome.status);
      if (!again || attempt >= spec.retries) {
        log.warn({ ...fields, status: outcome.status, error: outcome.error, attempts: attempt + 1 }, 'notification failed');
        metrics?.delivered(spec.name, 'failed');
        return;
      }
      const waitMs = Math.min(MAX_BACKOFF_MS, (this.#options.backoffMs ?? 1_000) * 2 ** attempt);
      log.debug({ ...fields, status: outcome.status, error: outcome.error, attempt, waitMs }, 'notification attempt failed; retrying');
      await clock.sleep(waitMs, signal);
    }
  }

  async #attempt(request: DeliveryRequest, timeoutMs: number, closing: AbortSignal): Promise<{ status?: number; error?: string }> {
    const controller = new AbortController();
    const onClose = () => controller.abort(closing.reason);
    closing.addEventListener('abort', onClose, { once: true });
    const cancelTimer = this.#options.clock.schedule(() => controller.abort(new Error('timeout')), timeoutMs);
    try {
      return { status: await this.#send(request, controller.signal) };
    } catch (error) {
      return { error: controller.signal.aborted && !closing.aborted ? 'timeout' : errorCode(error) };
    } finally {
      cancelTimer();
      closing.removeEventListener('abort', onClose);
    }
  }
}
