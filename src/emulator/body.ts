import type { IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import { EmulatorHttpError } from './errors.js';

interface ReadBody {
  bytes: Buffer;
  /** The body was longer than the limit; `bytes` then holds nothing. */
  tooLarge: boolean;
  /** The client went away (or sent far past the limit) before the body ended. */
  aborted: boolean;
}

/**
 * Reads a request body, keeping at most `limit` bytes. Past the limit it keeps draining (so the
 * client can read the 413 that follows) up to a hard cap, past which the connection is dropped.
 */
export function readBody(req: IncomingMessage, limit: number, hardCap = limit + 64 * 1024 * 1024): Promise<ReadBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    const finish = (result: ReadBody) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > hardCap) {
      req.resume();
      finish({ bytes: Buffer.alloc(0), tooLarge: true, aborted: false });
      return;
    }
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total <= limit) chunks.push(chunk);
      else if (total > hardCap) {
        req.destroy();
        finish({ bytes: Buffer.alloc(0), tooLarge: true, aborted: true });
      }
    });
    req.on('end', () => finish(total > limit ? { bytes: Buffer.alloc(0), tooLarge: true, aborted: false } : { bytes: Buffer.concat(chunks), tooLarge: false, aborted: false }));
    req.on('error', () => finish({ bytes: Buffer.alloc(0), tooLarge: total > limit, aborted: true }));
    req.on('close', () => finish({ bytes: Buffer.concat(chunks), tooLarge: total > limit, aborted: !req.complete }));
  });
}

/** The media type of a Content-Type header, lowercased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function parseJsonBody(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new EmulatorHttpError(400, `Malformed JSON in request body: ${(error as Error).message}`);
  }
}

export function parseFormBody(bytes: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(bytes.toString('utf8'))) out[key] = value;
  return out;
}

export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  content: Buffer;
}

/** Parses multipart/form-data with the platform's own parser (undici's FormData). */
export async function parseMultipart(bytes: Buffer, contentType: string): Promise<MultipartPart[]> {
  if (!/boundary=/i.test(contentType)) throw new EmulatorHttpError(400, 'Malformed multipart body: the Content-Type has no boundary');
  let form: FormData;
  try {
    form = await new Request('http://emulator.local/', { method: 'POST', headers: { 'content-type': contentType }, body: bytes }).formData();
  } catch (error) {
    throw new EmulatorHttpError(400, `Malformed multipart body: ${(error as Error).message}`);
  }
  const parts: MultipartPart[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') parts.push({ name, content: Buffer.from(value, 'utf8') });
    else parts.push({ name, filename: value.name, contentType: value.type || undefined, content: Buffer.from(await value.arrayBuffer()) });
  }
  return parts;
}

/**
 * A boundary derived from the parts, so the same function body is the same bytes on every
 * download; a hash of the contents cannot practically occur inside them, and the loop makes sure.
 */
function boundaryFor(parts: MultipartPart[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part.name).update('\0').update(part.content).update('\0');
  const base = `----emulator${hash.digest('hex').slice(0, 32)}`;
  for (let attempt = 0; ; attempt++) {
    const boundary = attempt === 0 ? base : `${base}${attempt}`;
    if (!parts.some((part) => part.content.includes(boundary) || part.name.includes(boundary) || (part.filename ?? '').includes(boundary))) return boundary;
  }
}

/** Builds a multipart/form-data body (function body downloads). */
export function buildMultipart(parts: MultipartPart[]): { contentType: string; bytes: Buffer } {
  const boundary = boundaryFor(parts);
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename.replace(/"/g, '%22')}"` : ''}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`;
    chunks.push(Buffer.from(head, 'utf8'), part.content, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, bytes: Buffer.concat(chunks) };
}
