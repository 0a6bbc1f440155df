// Errors as a pass reports them: the class name and a message free of secrets. A service
// message may quote the request it answers (a password, a secret's value): every value
// resolved in the pass is registered with the pass's redactor, and every error the pass
// describes, and every line it logs, is scrubbed of those values here, once, before it
// reaches a log, a renderer, an outcome or the state directory.
import { AsyncLocalStorage } from 'node:async_hooks';
import { isApiError } from '../api/errors.js';
import type { Logger } from './types.js';

const REDACTED = '[redacted]';

/**
 * Values shorter than this are not searched for: they would match ordinary words of a
 * message and make it unreadable (documented in docs/identity-and-deletion.md).
 */
const MIN_REDACTED_LENGTH = 4;

/** The secret values one pass resolved; `scrub` replaces every known form of them. */
export class Redactor {
  private readonly forms = new Set<string>();
  private sorted: string[] | undefined;

  add(value: string | undefined): void {
    if (typeof value !== 'string' || value.length < MIN_REDACTED_LENGTH) return;
    // As sent (JSON body), as quoted inside JSON text, and as a query or form field.
    for (const form of [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]) {
      if (form.length >= MIN_REDACTED_LENGTH && !this.forms.has(form)) {
        this.forms.add(form);
        this.sorted = undefined;
      }
    }
  }

  scrub(text: string): string {
    if (this.forms.size === 0) return text;
    // Longest first: a value that contains another is replaced whole.
    this.sorted ??= [...this.forms].sort((a, b) => b.length - a.length);
    let out = text;
    for (const form of this.sorted) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }

  /** A copy of a log object with every string (at any depth) scrubbed. */
  scrubValue(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.scrub(value);
    if (depth > 6 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => this.scrubValue(item, depth + 1));
    if (value instanceof Error) return this.scrub(value.message);
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.scrubValue(item, depth + 1)]));
  }
}

const current = new AsyncLocalStorage<Redactor>();

/** Runs a pass with its redactor: every `describeError` inside it scrubs that pass's values. */
export function withRedactor<T>(redactor: Redactor, run: () => Promise<T>): Promise<T> {
  return current.run(redactor, run);
}

/** Registers a value the pass made up itself (a generated password) with the pass's redactor. */
export function rememberSecret(value: string): void {
  current.getStore()?.add(value);
}

/** The pass's logger, scrubbed of the pass's secret values (messages and fields). */
export function redactingLogger(log: Logger, redactor: Redactor): Logger {
  const wrap = (level: keyof Logger) => (obj: object, msg: string) => log[level](redactor.scrubValue(obj) as object, redactor.scrub(msg));
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}

/** Error class name and a message free of secrets (API errors carry method, route and status only). */
export function describeError(error: unknown): { type: string; message: string } {
  const described = describeRaw(error);
  const redactor = current.getStore();
  return redactor ? { type: described.type, message: redactor.scrub(described.message) } : described;
}

function describeRaw(error: unknown): { type: string; message: string } {
  if (isApiError(error)) {
    return { type: error.name, message: error.serviceMessage ? `${error.message} (${error.serviceMessage})` : error.message };
  }
  if (error instanceof Error) return { type: error.name, message: error.message };
  return { type: 'Error', message: String(error) };
}
