/** Authentication is configured wrongly or its inputs cannot be read. Never quotes a token. */
export class AuthConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AuthConfigError';
  }
}
