/** A call made after `close()`, or still waiting when the client closed. */
export class ClientClosedError extends Error {
  readonly method: string;
  readonly route: string;
  constructor(method: string, route: string) {
    super(`${method} ${route}: the API client is closed`);
    this.name = 'ClientClosedError';
    this.method = method;
    this.route = route;
  }
}
