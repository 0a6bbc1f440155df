// Errors as a pass reports them: the class name and a message free of secrets.
import { isApiError } from '../api/errors.js';

/** Error class name and a message free of secrets (API errors carry method, route and status only). */
export function describeError(error: unknown): { type: string; message: string } {
  if (isApiError(error)) {
    return { type: error.name, message: error.serviceMessage ? `${error.message} (${error.serviceMessage})` : error.message };
  }
  if (error instanceof Error) return { type: error.name, message: error.message };
  return { type: 'Error', message: String(error) };
}
