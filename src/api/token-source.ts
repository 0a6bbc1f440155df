/** Where the client gets the bearer token for each request. */
export interface TokenSource {
  token(signal?: AbortSignal): Promise<string>;
  /** Called after a 401: forget the cached token so the next `token()` fetches a fresh one. */
  invalidate?(): Promise<void>;
}
