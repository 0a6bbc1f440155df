import type { ApiTelemetry } from '../api/telemetry.js';
import type { Clock } from '../util/clock.js';

/**
 * Remembers whether the API answered with a valid token recently: any answer but 401 proves the
 * token (403 is a membership question, 429 a budget question). The OAuth endpoints are the
 * exception: they take no access token, so their answers prove nothing, and a refused refresh
 * (400 or 401 from the token endpoint) means there is no valid token. `/readyz` reads it; it
 * costs no request of its own.
 */
export class ApiHealth {
  #lastValidAt: number | undefined;
  #lastUnauthorizedAt: number | undefined;

  constructor(private readonly clock: Clock) {}

  /** Wraps telemetry so the client's reports also feed this tracker. */
  wrap(telemetry: ApiTelemetry): ApiTelemetry {
    return {
      requestFinished: (event) => {
        this.observe(event.code, event.route);
        telemetry.requestFinished(event);
      },
      rateLimited: () => telemetry.rateLimited(),
      budget: (remaining, limit) => telemetry.budget(remaining, limit),
      queueDepth: (priority, depth) => telemetry.queueDepth(priority, depth),
    };
  }

  observe(code: string, route?: string): void {
    if (!/^\d{3}$/.test(code)) return;
    if (route?.startsWith('/v1/oauth/')) {
      if (route === '/v1/oauth/token' && (code === '400' || code === '401')) this.#lastUnauthorizedAt = this.clock.now();
      return;
    }
    if (code === '401') this.#lastUnauthorizedAt = this.clock.now();
    else this.#lastValidAt = this.clock.now();
  }

  /** Why the API is not known to be usable, or undefined when it answered a valid token within `withinMs`. */
  problem(withinMs: number): string | undefined {
    const now = this.clock.now();
    if (this.#lastValidAt === undefined) {
      return this.#lastUnauthorizedAt === undefined ? 'the API has not answered yet' : 'the API rejected the token (401)';
    }
    if (this.#lastUnauthorizedAt !== undefined && this.#lastUnauthorizedAt > this.#lastValidAt) {
      return 'the API rejected the token (401) since its last valid answer';
    }
    if (now - this.#lastValidAt > withinMs) {
      return `no answer from the API with a valid token in the last ${Math.round(withinMs / 1000)} s`;
    }
    return undefined;
  }
}
