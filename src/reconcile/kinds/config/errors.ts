/** The project of a section has no live ref at apply time (its creation did not happen or was not recorded). */
export class ProjectRefUnknownError extends Error {
  readonly project: string;
  constructor(project: string) {
    super(`Project \`${project}\` has no live ref yet: its configuration cannot be applied before it exists`);
    this.name = 'ProjectRefUnknownError';
    this.project = project;
  }
}

/** The vanity subdomain was taken between plan and apply. */
export class SubdomainUnavailableError extends Error {
  readonly subdomain: string;
  constructor(subdomain: string) {
    super(`Vanity subdomain \`${subdomain}\` is not available`);
    this.name = 'SubdomainUnavailableError';
    this.subdomain = subdomain;
  }
}
