/** The vanity subdomain was taken between plan and apply. */
export class SubdomainUnavailableError extends Error {
  readonly subdomain: string;
  constructor(subdomain: string) {
    super(`Vanity subdomain \`${subdomain}\` is not available`);
    this.name = 'SubdomainUnavailableError';
    this.subdomain = subdomain;
  }
}
