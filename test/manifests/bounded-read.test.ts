// The bounded reader answers about the file it opened: the identity a caller checks (a sealed
// secret file) is the opened descriptor's, and a refusal leaves the file unread.
import { execFileSync } from 'node:child_process';
import { linkSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readBoundedFile, type OpenedFile } from '../../src/manifests/bounded-read.js';
import { CheckoutFiles } from '../../src/manifests/checkout-files.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bounded-read-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('readBoundedFile', () => {
  it('asks about the opened file, by device and inode, before reading it', () => {
    const path = join(dir, 'a.yaml');
    writeFileSync(path, 'kind: Project\n');
    const seen: OpenedFile[] = [];
    const read = readBoundedFile(path, 1024, { refuse: (file) => void seen.push(file) });
    expect(read).toMatchObject({ size: 14 });
    const info = statSync(path, { bigint: true });
    expect(seen).toEqual([expect.objectContaining({ dev: info.dev, ino: info.ino, size: 14n })]);
  });

  it('a refusal closes the file unread and is the answer', () => {
    const path = join(dir, 'a.yaml');
    writeFileSync(path, 'kind: Project\n');
    const read = readBoundedFile(path, 1024, { refuse: () => ({ problem: 'sealed', detail: 'is sealed' }) });
    expect(read).toEqual({ problem: 'sealed', detail: 'is sealed' });
  });

  it('is not asked about what is not a regular file', () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    let asked = false;
    const read = readBoundedFile(fifo, 1024, { refuse: () => ((asked = true), undefined) });
    expect(read).toMatchObject({ problem: 'not-regular' });
    expect(asked).toBe(false);
  });
});

describe('CheckoutFiles.read and a sealed secret file', () => {
  it('a path read before, now a hard link to the sealed file, is refused without its content', () => {
    const secret = join(dir, 'secret.txt');
    writeFileSync(secret, 'canary-secret-value\n');
    const manifest = join(dir, 'm.yaml');
    writeFileSync(manifest, 'kind: Project\n');
    const checkout = CheckoutFiles.resolved(dir);
    checkout.sealSecretFile(secret, 'secrets.yaml');
    expect(checkout.read(manifest, 1024)).toMatchObject({ size: 14 });
    // The path that was a manifest now names the secret file itself (a hard link renamed over it).
    linkSync(secret, join(dir, 'staged'));
    renameSync(join(dir, 'staged'), manifest);
    const read = checkout.read(manifest, 1024);
    expect(read).toMatchObject({ problem: 'secret-file' });
    expect(JSON.stringify(read)).not.toContain('canary-secret-value');
  });
});
