// The HTTP/1.1 response parser: any answer, however the network splits its bytes, reads back
// as written; and every malformed answer is refused with a reason, never guessed at.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, MAX_HEAD_BYTES, ResponseParser, type ParsedResponse } from '../../src/api/http1-parser.js';

interface Answer {
  informational: number[];
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
  framing: 'length' | 'chunked' | 'close';
  chunkSizes: number[];
  trailers: Array<[string, string]>;
  close: boolean;
}

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/).filter((n) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(n));
const value = fc.stringMatching(/^[!-~]([ !-~]{0,20}[!-~])?$/);

const answer: fc.Arbitrary<Answer> = fc.record({
  informational: fc.array(fc.constantFrom(100, 102, 103), { maxLength: 2 }),
  status: fc.constantFrom(200, 201, 202, 400, 401, 404, 429, 500, 503),
  headers: fc.array(fc.tuple(name, value), { maxLength: 6 }),
  body: fc.uint8Array({ maxLength: 3000 }),
  framing: fc.constantFrom('length', 'chunked', 'close'),
  chunkSizes: fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 }),
  trailers: fc.array(fc.tuple(name, value), { maxLength: 2 }),
  close: fc.boolean(),
}) as fc.Arbitrary<Answer>;

function encode(a: Answer): Buffer {
  const parts: Buffer[] = [];
  for (const status of a.informational) parts.push(Buffer.from(`HTTP/1.1 ${status} Info\r\nx-info: 1\r\n\r\n`, 'latin1'));
  let head = `HTTP/1.1 ${a.status} Whatever Reason\r\n`;
  for (const [n, v] of a.headers) head += `${n}: ${v}\r\n`;
  if (a.close) head += 'Connection: close\r\n';
  if (a.framing === 'length') head += `Content-Length: ${a.body.length}\r\n`;
  if (a.framing === 'chunked') head += 'Transfer-Encoding: chunked\r\n';
  parts.push(Buffer.from(`${head}\r\n`, 'latin1'));
  if (a.framing === 'chunked') {
    let at = 0;
    let i = 0;
    while (at < a.body.length) {
      const size = Math.min(a.chunkSizes[i % a.chunkSizes.length]!, a.body.length - at);
      parts.push(Buffer.from(`${size.toString(16)}${i % 3 === 1 ? ';ext=1' : ''}\r\n`, 'latin1'), Buffer.from(a.body.subarray(at, at + size)), Buffer.from('\r\n'));
      at += size;
      i += 1;
    }
    let end = '0\r\n';
    for (const [n, v] of a.trailers) end += `${n}: ${v}\r\n`;
    parts.push(Buffer.from(`${end}\r\n`, 'latin1'));
  } else {
    parts.push(Buffer.from(a.body));
  }
  return Buffer.concat(parts);
}

/** Feeds the bytes cut at the given points; the connection ends after them when `end`. */
function feed(bytes: Buffer, cuts: number[], end: boolean, method = 'GET'): ParsedResponse | undefined {
  const parser = new ResponseParser();
  parser.begin(method);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((x, y) => x - y);
  let from = 0;
  let result: ParsedResponse | undefined;
  for (const to of [...points, bytes.length]) {
    const got = parser.push(bytes.subarray(from, to));
    if (got) {
      expect(result).toBeUndefined();
      result = got;
    }
    from = to;
  }
  if (end) {
    const last = parser.finish();
    if (last) result = last;
  }
  return result;
}

function expectRefused(text: string | Buffer, pattern: RegExp, method = 'GET'): void {
  const parser = new ResponseParser();
  parser.begin(method);
  expect(() => {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
    parser.push(bytes);
    parser.finish();
  }).toThrow(pattern);
}

describe('HTTP/1.1 response parser', () => {
  it('reads any answer back as written, however its bytes are split', () => {
    fc.assert(
      fc.property(answer, fc.array(fc.nat(), { maxLength: 40 }), (a, cuts) => {
        const bytes = encode(a);
        const got = feed(bytes, cuts, a.framing === 'close');
        expect(got).toBeDefined();
        expect(got!.status).toBe(a.status);
        expect(Buffer.from(got!.bytes).equals(Buffer.from(a.body))).toBe(true);
        const expected: Record<string, string> = {};
        for (const [n, v] of a.headers) expected[n] = expected[n] === undefined ? v : `${expected[n]}, ${v}`;
        for (const [n, v] of Object.entries(expected)) expect(got!.headers[n]).toBe(v);
        expect(got!.keepAlive).toBe(!a.close && a.framing !== 'close');
      }),
      { numRuns: 400 },
    );
  });

  it('reads an answer delivered a byte at a time', () => {
    const body = Buffer.from(JSON.stringify({ ok: true, list: Array.from({ length: 50 }, (_, i) => i) }));
    const bytes = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
    const got = feed(bytes, Array.from({ length: bytes.length }, (_, i) => i), false);
    expect(JSON.parse(Buffer.from(got!.bytes).toString())).toEqual(JSON.parse(body.toString()));
  });

  it('gives no body to a HEAD answer, a 204 or a 304, whatever their length says', () => {
    expect(feed(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n'), [], false, 'HEAD')!.bytes.length).toBe(0);
    expect(feed(Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'), [], false)!.bytes.length).toBe(0);
    expect(feed(Buffer.from('HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\n'), [], false)!.bytes.length).toBe(0);
  });

  it('joins repeated headers, lower-cases names and reads the keep-alive hint', () => {
    const got = feed(Buffer.from('HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n'), [], false)!;
    expect(got.headers['set-cookie']).toBe('a=1, b=2');
    expect(got.keepAliveSeconds).toBe(5);
    expect(got.keepAlive).toBe(true);
  });

  it('does not reuse an HTTP/1.0 connection, nor one whose answer had both a length and a transfer coding', () => {
    expect(feed(Buffer.from('HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok'), [], false)!.keepAlive).toBe(false);
    const both = feed(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 99\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'), [], false)!;
    expect(Buffer.from(both.bytes).toString()).toBe('ok');
    expect(both.keepAlive).toBe(false);
  });

  it('refuses what it does not understand, with the reason', () => {
    expectRefused('HTTP/2 200\r\n\r\n', /status line is not HTTP\/1\.x/);
    expectRefused('SSH-2.0-OpenSSH\r\n\r\n', /status line/);
    expectRefused('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /without a name/);
    expectRefused('HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n', /folded header/);
    expectRefused('HTTP/1.1 200 OK\r\nbad name: 1\r\n\r\n', /header name/);
    expectRefused('HTTP/1.1 200 OK\r\ncontent-length: 2, 3\r\n\r\nabc', /content-length/);
    expectRefused('HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', /content-length/);
    expectRefused('HTTP/1.1 200 OK\r\ncontent-length: 0x10\r\n\r\n', /content-length/);
    expectRefused(`HTTP/1.1 200 OK\r\ncontent-length: ${MAX_BODY_BYTES + 1}\r\n\r\n`, /body over/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', /chunk size/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokXX', /not followed by CRLF/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n', /^malformed answer: a transfer coding this client does not decode$/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n\r\n', /transfer coding/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: bearer tok-secret\r\n\r\n', /^malformed answer: a transfer coding this client does not decode$/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\v\r\nhello\r\n0\r\n\r\n', /chunk size/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\n\r\nhello\r\n0\r\n\r\n', /control character/);
    expectRefused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;a\rb\r\nhello\r\n0\r\n\r\n', /control character/);
    expectRefused(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n${'x-t: 1\r\n'.repeat(200_000)}\r\n`, /trailers over/);
    expectRefused(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${`1;${'e'.repeat(4000)}\r\na\r\n`.repeat(300)}`, /trailers over/);
    expectRefused('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n', /past the end/);
    expectRefused('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n', /protocol switch/);
    expectRefused(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\n'), Buffer.alloc(MAX_HEAD_BYTES + 10, 0x61)]), /header block over/);
    expectRefused('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort', /closed before the answer was whole/);
  });

  it('keeps a header named like an object property as a header', () => {
    const got = feed(Buffer.from('HTTP/1.1 200 OK\r\nconstructor: a\r\n__proto__: b\r\ncontent-length: 0\r\n\r\n'), [], false)!;
    expect(got.headers['constructor']).toBe('a');
    expect(Object.keys(got.headers)).toContain('__proto__');
  });

  it('reads a body larger than it allocates at once, as it arrives', () => {
    const body = Buffer.alloc(3 * 1024 * 1024 + 7, 0x61);
    const bytes = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`), body]);
    const got = feed(bytes, [100, 70_000, 1_500_000], false)!;
    expect(Buffer.from(got.bytes).equals(body)).toBe(true);
  });

  it('refuses bytes that arrive when no answer is awaited', () => {
    const parser = new ResponseParser();
    expect(() => parser.push(Buffer.from('HTTP/1.1 200 OK\r\n\r\n'))).toThrow(/no request waiting/);
  });
});
