import type { ApiRequest } from './request.js';

interface EncodedBody {
  body: string | FormData | undefined;
  /** Content type to send; undefined for multipart (the transport sets it with the boundary). */
  contentType: string | undefined;
}

/**
 * Encodes a request body for the wire. Encoded afresh for every attempt: a FormData can be
 * serialised again, a consumed stream could not.
 */
export function encodeBody(request: Pick<ApiRequest, 'bodyKind' | 'body' | 'method' | 'route'>): EncodedBody {
  switch (request.bodyKind) {
    case 'none':
      return { body: undefined, contentType: undefined };
    case 'json':
      return { body: JSON.stringify(request.body ?? null), contentType: 'application/json' };
    case 'form': {
      const form = new URLSearchParams();
      for (const [key, value] of Object.entries((request.body ?? {}) as Record<string, unknown>)) {
        if (value === undefined || value === null) continue;
        form.append(key, typeof value === 'string' ? value : JSON.stringify(value));
      }
      return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
    }
    case 'multipart':
      if (!(request.body instanceof FormData)) {
        throw new TypeError(`Expected a FormData body for ${request.method} ${request.route}, got ${typeof request.body}`);
      }
      return { body: request.body, contentType: undefined };
  }
}

/** Appends query parameters; arrays repeat the key (`services=auth&services=db`), undefined is left out. */
export function withQuery(path: string, query: Record<string, unknown> | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) params.append(key, String(item));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}
