// The one way the tool reads a file it did not write (a manifest, an ignore file, a secret
// behind a reference, the token file): a FIFO, a device or an endless file must give an
// answer at once, never a hung process or unbounded memory. The file is opened without
// blocking, its type and size come from the opened descriptor (not from the path, which may
// be swapped in between), and at most one byte past the limit is read.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

// Opening a FIFO for reading blocks until a writer appears unless O_NONBLOCK is given.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

type BoundedReadProblem = 'missing' | 'unreadable' | 'not-regular' | 'too-large';

export type BoundedRead = { bytes: Buffer; size: number } | { problem: BoundedReadProblem; detail: string };

/** What the opened file is: its identity (device and inode) and size, from the descriptor. */
export interface OpenedFile {
  dev: bigint;
  ino: bigint;
  size: bigint;
}

export interface BoundedReadOptions<R> {
  /** A path whose links are resolved already; a link swapped in since is refused. */
  noFollow?: boolean;
  /**
   * Asked about the opened regular file before a byte is read: a refusal (its problem and
   * detail) closes it unread. The answer is about the file actually opened, not whatever the
   * path named a moment before.
   */
  refuse?: (file: OpenedFile) => R | undefined;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(bytes % 1024 === 0 ? 0 : 1)} KiB`;
  return `${bytes} bytes`;
}

function describeKind(info: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The content of a regular file of at most `maxBytes`, or why not. Synchronous on purpose:
 * these files are small, and four thread-pool round trips per file cost several times the
 * read itself; a FIFO or device cannot make it wait, since neither is ever read.
 */
export function readBoundedFile<R extends { problem: string; detail: string } = never>(path: string, maxBytes: number, options: BoundedReadOptions<R> = {}): BoundedRead | R {
  let fd: number;
  try {
    // `noFollow`: a path whose links are resolved already; a link swapped in since is refused.
    fd = openSync(path, options.noFollow ? READ_FLAGS | constants.O_NOFOLLOW : READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT' || code === 'ENOTDIR') return { problem: 'missing', detail: 'does not exist' };
    if (code === 'ELOOP') return { problem: 'unreadable', detail: 'became a symbolic link while it was read' };
    return { problem: 'unreadable', detail: `cannot be read (${code})` };
  }
  try {
    const info = fstatSync(fd, { bigint: true });
    if (!info.isFile()) {
      const kind = describeKind(info);
      return { problem: 'not-regular', detail: `is ${kind === 'not a regular file' ? kind : `${kind}, not a regular file`}` };
    }
    const refusal = options.refuse?.(info);
    if (refusal) return refusal;
    const size = Number(info.size);
    if (size > maxBytes) return { problem: 'too-large', detail: `is ${formatBytes(size)}, larger than the ${formatBytes(maxBytes)} limit` };
    // One byte past the limit shows a file that grew after the fstat.
    const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
    let bytesRead = 0;
    while (bytesRead < buffer.length) {
      const n = readSync(fd, buffer, bytesRead, buffer.length - bytesRead, bytesRead);
      if (n === 0) break;
      bytesRead += n;
    }
    if (bytesRead > maxBytes) return { problem: 'too-large', detail: `is larger than the ${formatBytes(maxBytes)} limit` };
    return { bytes: buffer.subarray(0, bytesRead), size: bytesRead };
  } catch (error) {
    return { problem: 'unreadable', detail: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    closeSync(fd);
  }
}
