/**
 * An HTTP/1.1 response parser (RFC 9112), fed the bytes of one connection as they arrive. It
 * reads one answer at a time, the way the transport uses a connection: a request, then its
 * answer, then the next request. Informational (1xx) answers are skipped; the body is framed by
 * `transfer-encoding: chunked`, by `content-length`, or by the connection's end, in that order
 * of precedence. Anything it does not understand is an error (`code: 'BAD_RESPONSE'`), never a
 * guess: a connection that spoke wrongly once is closed.
 */

/** The largest status line and header block accepted: four times the 16 KiB that Node and undici allow by default, as room for proxies that add headers. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** The largest body accepted: far above any answer of the API (a function's bundle is at most tens of MB). */
export const MAX_BODY_BYTES = 256 * 1024 * 1024;
/** The chunk-size lines and trailers of one answer together. */
const MAX_FRAMING_BYTES = 1024 * 1024;
/** An answer with a stated length up to this gets its whole array at once. */
const PREALLOCATE_BYTES = 1024 * 1024;
/** The largest chunk-size line, extensions included, and the largest trailer block. */
const MAX_LINE_BYTES = 4 * 1024;

export interface ResponseHead {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
}

export interface ParsedResponse extends ResponseHead {
  bytes: Uint8Array;
  /** The connection may carry another exchange. */
  keepAlive: boolean;
  /** Seconds from the answer's `keep-alive: timeout=N`, when it states one. */
  keepAliveSeconds: number | undefined;
}

export class ResponseError extends Error {
  readonly code = 'BAD_RESPONSE';
  constructor(detail: string) {
    super(`malformed answer: ${detail}`);
    this.name = 'ResponseError';
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\r\n]*)?$/;
const CONTROL = /[\r\n\0]/;
const DIGITS = /^\d{1,15}$/;
/** A chunk's size in hexadecimal, then optional extensions (RFC 9112 7.1.1). */
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;[^]*)?$/;
const CRLFCRLF = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailers,
  UntilClose,
  Done,
}

/** The tokens of a comma-separated header value, lower-case. */
function tokens(value: string | undefined): string[] {
  if (value === undefined) return [];
  if (value === 'keep-alive' || value === 'close' || value === 'chunked') return [value];
  return value.split(',').map((part) => part.trim().toLowerCase()).filter((part) => part !== '');
}

/** Parses a status line and header block (without the final empty line). */
export function parseHead(text: string): ResponseHead & { minor: number } {
  let lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0) lineEnd = text.length;
  const match = STATUS_LINE.exec(text.slice(0, lineEnd));
  if (!match) throw new ResponseError('the status line is not HTTP/1.x');
  // No prototype: a header named `constructor` or `__proto__` is a header like any other.
  const headers = Object.create(null) as Record<string, string>;
  let at = lineEnd + 2;
  while (at < text.length) {
    let end = text.indexOf('\r\n', at);
    if (end < 0) end = text.length;
    const colon = text.indexOf(':', at);
    if (colon < 0 || colon >= end || colon === at) {
      const first = text.charCodeAt(at);
      throw new ResponseError(first === 0x20 || first === 0x09 ? 'a folded header line' : 'a header line without a name');
    }
    const name = text.slice(at, colon);
    if (!TOKEN.test(name)) throw new ResponseError('a header name with characters a name cannot have');
    let from = colon + 1;
    let to = end;
    while (from < to && (text.charCodeAt(from) === 0x20 || text.charCodeAt(from) === 0x09)) from += 1;
    while (to > from && (text.charCodeAt(to - 1) === 0x20 || text.charCodeAt(to - 1) === 0x09)) to -= 1;
    const value = text.slice(from, to);
    if (CONTROL.test(value)) throw new ResponseError('a header value with a control character');
    const key = name.toLowerCase();
    const before = headers[key];
    headers[key] = before === undefined ? value : `${before}, ${value}`;
    at = end + 2;
  }
  return { status: Number(match[2]), headers, minor: Number(match[1]) };
}

/**
 * One connection's answers. `begin` before each request's answer; `push` each chunk read;
 * `finish` when the connection ends. `push` and `finish` return the answer once it is whole.
 */
export class ResponseParser {
  private state: State = State.Done;
  private method = 'GET';
  private head: Buffer | undefined;
  private headLength = 0;
  private status = 0;
  private headers: Record<string, string> = Object.create(null) as Record<string, string>;
  private keepAlive = true;
  private keepAliveSeconds: number | undefined;
  private remaining = 0;
  private body: Uint8Array | undefined;
  private bodyLength = 0;
  private chunks: Uint8Array[] = [];
  private line = '';
  private framing = 0;

  /** Expects the answer to a request with this method (a HEAD answer has no body). */
  begin(method: string): void {
    this.state = State.Head;
    this.method = method;
    this.head = undefined;
    this.headLength = 0;
    this.body = undefined;
    this.bodyLength = 0;
    this.chunks = [];
    this.line = '';
    this.framing = 0;
  }

  /** True while the status line and headers are still awaited (the headers timeout applies). */
  get inHead(): boolean {
    return this.state === State.Head;
  }

  /**
   * Takes the bytes read. Returns the answer once whole; bytes past its end are an error (no
   * request is pipelined behind another, so the service has nothing more to say).
   */
  push(chunk: Uint8Array): ParsedResponse | undefined {
    if (this.state === State.Done) {
      if (chunk.byteLength === 0) return undefined;
      throw new ResponseError('bytes with no request waiting for them');
    }
    let data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (data.length > 0) {
      switch (this.state) {
        case State.Head: {
          const rest = this.takeHead(data);
          if (rest === undefined) return undefined;
          data = rest;
          break;
        }
        case State.Length: {
          const take = Math.min(this.remaining, data.length);
          if (this.body) {
            this.body.set(data.subarray(0, take), this.bodyLength);
            this.bodyLength += take;
          } else {
            this.collect(data.subarray(0, take));
          }
          this.remaining -= take;
          data = data.subarray(take);
          if (this.remaining === 0) this.state = State.Done;
          break;
        }
        case State.ChunkSize:
        case State.Trailers: {
          const end = this.takeLine(data);
          if (end < 0) return undefined;
          data = data.subarray(end);
          break;
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, data.length);
          this.collect(data.subarray(0, take));
          this.remaining -= take;
          data = data.subarray(take);
          if (this.remaining === 0) this.state = State.ChunkEnd;
          break;
        }
        case State.ChunkEnd: {
          // The CRLF after a chunk's data, possibly split across reads.
          const need = 2 - this.line.length;
          const have = data.toString('latin1', 0, Math.min(need, data.length));
          this.line += have;
          data = data.subarray(have.length);
          if (this.line.length < 2) return undefined;
          if (this.line !== '\r\n') throw new ResponseError('a chunk not followed by CRLF');
          this.line = '';
          this.state = State.ChunkSize;
          break;
        }
        case State.UntilClose:
          this.collect(data);
          data = data.subarray(data.length);
          break;
      }
      if (this.state === State.Done) {
        if (data.length > 0) throw new ResponseError('bytes past the end of the answer');
        return this.result();
      }
    }
    return undefined;
  }

  /** The connection ended: completes an answer framed by the end, else the answer is cut short. */
  finish(): ParsedResponse | undefined {
    if (this.state === State.UntilClose) {
      this.state = State.Done;
      return this.result();
    }
    if (this.state === State.Done) return undefined;
    throw Object.assign(new Error('the connection closed before the answer was whole'), { code: 'SOCKET_CLOSED' });
  }

  private collect(data: Buffer): void {
    if (this.bodyLength + data.length > MAX_BODY_BYTES) throw new ResponseError(`a body over ${MAX_BODY_BYTES} bytes`);
    // A read's bytes are copied: a view would keep the whole read buffer alive.
    this.chunks.push(Uint8Array.prototype.slice.call(data));
    this.bodyLength += data.length;
  }

  private takeHead(data: Buffer): Buffer | undefined {
    let buffer: Buffer;
    let searchFrom: number;
    if (this.headLength === 0) {
      buffer = data;
      searchFrom = 0;
    } else {
      const needed = this.headLength + data.length;
      if (this.head!.length < needed) {
        const grown = Buffer.allocUnsafe(Math.max(needed, this.head!.length * 2));
        this.head!.copy(grown, 0, 0, this.headLength);
        this.head = grown;
      }
      data.copy(this.head!, this.headLength);
      searchFrom = Math.max(0, this.headLength - 3);
      this.headLength = needed;
      buffer = this.head!.subarray(0, needed);
    }
    const end = buffer.indexOf(CRLFCRLF, searchFrom);
    if (end < 0) {
      if (buffer.length > MAX_HEAD_BYTES) throw new ResponseError(`a header block over ${MAX_HEAD_BYTES} bytes`);
      if (this.headLength === 0) {
        this.head = Buffer.allocUnsafe(Math.max(1024, data.length * 2));
        data.copy(this.head);
        this.headLength = data.length;
      }
      return undefined;
    }
    if (end > MAX_HEAD_BYTES) throw new ResponseError(`a header block over ${MAX_HEAD_BYTES} bytes`);
    const rest = buffer.subarray(end + 4);
    this.headLength = 0;
    this.head = undefined;
    this.startBody(parseHead(buffer.toString('latin1', 0, end)));
    return rest;
  }

  private startBody(head: ResponseHead & { minor: number }): void {
    if (head.status < 200) {
      if (head.status === 101) throw new ResponseError('a protocol switch that was not asked for');
      return; // an informational answer: the real one follows
    }
    this.status = head.status;
    this.headers = head.headers;
    const connection = tokens(head.headers['connection']);
    this.keepAlive = head.minor === 1 ? !connection.includes('close') : false;
    this.keepAliveSeconds = undefined;
    const hint = /(?:^|[,\s])timeout=(\d+)/i.exec(head.headers['keep-alive'] ?? '');
    if (hint) this.keepAliveSeconds = Number(hint[1]);
    const noBody = this.method === 'HEAD' || head.status === 204 || head.status === 304;
    const transfer = tokens(head.headers['transfer-encoding']);
    const length = head.headers['content-length'];
    if (noBody) {
      this.state = State.Done;
      return;
    }
    if (transfer.length > 0) {
      // A length beside a transfer coding is ignored, and the connection is not reused (RFC 9112 6.3).
      if (length !== undefined) this.keepAlive = false;
      // The client asks for no coding, so chunked is the only one it reads (a body in another
      // coding would come back still encoded, as if it were the answer).
      if (transfer[transfer.length - 1] !== 'chunked' || transfer.slice(0, -1).some((coding) => coding !== 'identity')) {
        throw new ResponseError('a transfer coding this client does not decode');
      }
      this.state = State.ChunkSize;
      return;
    }
    if (length !== undefined) {
      const values = new Set(length.split(',').map((part) => part.trim()));
      const [only] = values;
      if (values.size !== 1 || !DIGITS.test(only!)) throw new ResponseError('a content-length that is not one whole number');
      this.remaining = Number(only);
      if (this.remaining > MAX_BODY_BYTES) throw new ResponseError(`a body over ${MAX_BODY_BYTES} bytes`);
      // A length up to PREALLOCATE_BYTES gets its array at once (one copy); a larger one grows
      // with what arrives, so an announced length costs nothing until its bytes come.
      if (this.remaining <= PREALLOCATE_BYTES) this.body = new Uint8Array(this.remaining);
      this.state = this.remaining === 0 ? State.Done : State.Length;
      return;
    }
    this.keepAlive = false;
    this.state = State.UntilClose;
  }

  /** Reads a line of a chunked body; returns the index past its CRLF, or -1 when it is not whole yet. */
  private takeLine(data: Buffer): number {
    // A CR at the end of one read and its LF at the start of the next.
    if (this.line.endsWith('\r') && data[0] === 0x0a) {
      this.line = this.line.slice(0, -1);
      this.endLine();
      return 1;
    }
    const end = data.indexOf(CRLF);
    this.line += data.toString('latin1', 0, end < 0 ? data.length : end);
    if (this.line.length > MAX_LINE_BYTES * (this.state === State.Trailers ? 4 : 1)) throw new ResponseError('a chunk-size or trailer line too long');
    if (end < 0) return -1;
    this.endLine();
    return end + 2;
  }

  private endLine(): void {
    const line = this.line;
    this.line = '';
    if (CONTROL.test(line)) throw new ResponseError('a chunk-size or trailer line with a control character');
    // Everything but the chunks' data counts against one allowance: a body of endless chunk
    // extensions or trailer fields ends as surely as one of endless data.
    this.framing += line.length + 2;
    if (this.framing > MAX_FRAMING_BYTES) throw new ResponseError(`chunk-size lines and trailers over ${MAX_FRAMING_BYTES} bytes`);
    if (this.state === State.ChunkSize) {
      const match = CHUNK_SIZE.exec(line);
      if (!match) throw new ResponseError('a chunk size that is not a hexadecimal number');
      this.remaining = parseInt(match[1]!, 16);
      this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
      return;
    }
    // Trailer fields are read and dropped; the empty line ends the answer.
    if (line === '') {
      this.state = State.Done;
      return;
    }
    if (line.indexOf(':') <= 0) throw new ResponseError('a trailer line without a name');
  }

  private result(): ParsedResponse {
    let bytes: Uint8Array;
    if (this.body !== undefined) {
      bytes = this.body;
    } else if (this.chunks.length === 1) {
      bytes = this.chunks[0]!;
    } else {
      bytes = new Uint8Array(this.bodyLength);
      let offset = 0;
      for (const chunk of this.chunks) {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
      }
    }
    this.body = undefined;
    this.chunks = [];
    return { status: this.status, headers: this.headers, bytes, keepAlive: this.keepAlive, keepAliveSeconds: this.keepAliveSeconds };
  }
}
