/**
 * An answer the emulator gives instead of a success: a status and the service's
 * `{"message"}` body. Handlers throw it before they change any state, so a refused request
 * never leaves a partial change behind.
 */
export class EmulatorHttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'EmulatorHttpError';
    this.status = status;
    this.headers = headers;
  }
}

export const badRequest = (message: string): EmulatorHttpError => new EmulatorHttpError(400, message);
export const notFound = (message: string): EmulatorHttpError => new EmulatorHttpError(404, message);
export const forbidden = (message = 'Forbidden: you are not a member of the organization that owns this resource'): EmulatorHttpError =>
  new EmulatorHttpError(403, message);
export const conflict = (message: string): EmulatorHttpError => new EmulatorHttpError(409, message);
export const serverError = (message: string): EmulatorHttpError => new EmulatorHttpError(500, message);
