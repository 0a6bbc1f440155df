// What one pass knows beyond its plan, owned by the engine and handed to every kind through its
// context: the live refs (observed, or set by a creation), the projects this pass creates, the
// bulk requests already sent and what kinds share within the pass. A pass makes one; it dies
// with the pass, so nothing of it leaks into the next one.
import type { PassMemory } from './types.js';

export class PassState implements PassMemory {
  /** Live project refs by project manifest name: filled as projects are observed or created. */
  readonly projectRefs = new Map<string, string>();
  readonly #creates = new Set<string>();
  readonly #sent = new Map<string, Promise<void>>();
  readonly #shared = new Map<string, unknown>();
  readonly scheduled: boolean;

  constructor(options: { scheduled?: boolean } = {}) {
    this.scheduled = options.scheduled ?? false;
  }

  /** Notes the projects this pass creates (known from the fleet's plan, before any kind plans). */
  willCreate(names: Iterable<string>): void {
    for (const name of names) this.#creates.add(name);
  }

  creates(project: string): boolean {
    return this.#creates.has(project);
  }

  once(key: string, send: () => Promise<void>): Promise<void> {
    let promise = this.#sent.get(key);
    if (!promise) this.#sent.set(key, (promise = send()));
    return promise;
  }

  shared<T>(key: string, create: () => T): T {
    if (!this.#shared.has(key)) this.#shared.set(key, create());
    return this.#shared.get(key) as T;
  }
}
