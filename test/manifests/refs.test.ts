import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { isSecretRef, resolveSecretRef, sandboxPlaceholder, SecretReferenceError } from '../../src/manifests/refs.js';
import { cleanupTrees, tree } from './helpers.js';
import { DIST_BUILT, IS_ROOT, runAsNobody } from './unprivileged.js';

afterAll(cleanupTrees);

describe('isSecretRef', () => {
  it('accepts exactly the two reference forms', () => {
    expect(isSecretRef({ valueFrom: { env: 'A' } })).toBe(true);
    expect(isSecretRef({ valueFrom: { file: 'a.txt' } })).toBe(true);
    for (const value of ['literal', null, 3, [], {}, { valueFrom: {} }, { valueFrom: { env: '' } }, { valueFrom: { env: 'A', file: 'b' } }, { valueFrom: { env: 3 } }, { valueFrom: { env: 'A' }, extra: 1 }, { valueFrom: { secret: 'A' } }]) {
      expect(isSecretRef(value), JSON.stringify(value)).toBe(false);
    }
  });
});

describe('resolveSecretRef', () => {
  it('reads an environment variable', async () => {
    await expect(resolveSecretRef({ valueFrom: { env: 'TOKEN' } }, { baseDir: '/', env: { TOKEN: 'value-1' } })).resolves.toBe('value-1');
  });

  it('reads a file relative to the manifest directory, without its trailing newline', async () => {
    const dir = tree({ 'manifests/secrets/pw': 'p@ss word\n', 'abs-secret': 'absolute\r\n' });
    const baseDir = join(dir, 'manifests');
    await expect(resolveSecretRef({ valueFrom: { file: 'secrets/pw' } }, { baseDir, env: {} })).resolves.toBe('p@ss word');
    await expect(resolveSecretRef({ valueFrom: { file: join(dir, 'abs-secret') } }, { baseDir, env: {} })).resolves.toBe('absolute');
  });

  it('fails with a typed error naming the reference, never a value', async () => {
    const dir = tree({ empty: '' });
    const attempts: Array<[Parameters<typeof resolveSecretRef>[0], NodeJS.ProcessEnv, string, string]> = [
      [{ valueFrom: { env: 'MISSING' } }, {}, 'env:MISSING', 'missing'],
      [{ valueFrom: { env: 'BLANK' } }, { BLANK: '' }, 'env:BLANK', 'empty'],
      [{ valueFrom: { file: 'nope.txt' } }, {}, 'file:nope.txt', 'missing'],
      [{ valueFrom: { file: 'empty' } }, {}, 'file:empty', 'empty'],
      [{ valueFrom: { file: '.' } }, {}, 'file:.', 'unreadable'],
    ];
    for (const [ref, env, reference, problem] of attempts) {
      const error = await resolveSecretRef(ref, { baseDir: dir, env: { ...env, OTHER: 'canary-value' } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SecretReferenceError);
      expect((error as SecretReferenceError).reference).toBe(reference);
      expect((error as SecretReferenceError).problem).toBe(problem);
      expect((error as Error).message).toContain(reference);
      expect((error as Error).message).not.toContain('canary-value');
    }
  });

  it('refuses a secret file too large to be a secret', async () => {
    const dir = tree({ big: 'x'.repeat(70 * 1024) });
    const error = await resolveSecretRef({ valueFrom: { file: 'big' } }, { baseDir: dir, env: {} }).catch((e: unknown) => e);
    expect((error as SecretReferenceError).problem).toBe('too-large');
  });

  // Root reads every file: as root the case runs as an unprivileged user (below).
  it.skipIf(IS_ROOT)('reports an unreadable file as such', async () => {
    const dir = tree({ locked: 'secret' });
    chmodSync(join(dir, 'locked'), 0o000);
    const error = await resolveSecretRef({ valueFrom: { file: 'locked' } }, { baseDir: dir, env: {} }).catch((e: unknown) => e);
    expect((error as SecretReferenceError).problem).toBe('unreadable');
  });

  it.runIf(IS_ROOT && DIST_BUILT)('reports an unreadable file as such (as root: read as the unprivileged user nobody, with the built modules)', () => {
    const dir = tree({ locked: 'secret' });
    chmodSync(join(dir, 'locked'), 0o000);
    const problem = runAsNobody<string>(
      `const { resolveSecretRef } = await import(dist + '/manifests/refs.js'); return await resolveSecretRef({ valueFrom: { file: 'locked' } }, { baseDir: ${JSON.stringify(dir)}, env: {} }).then(() => 'read', (e) => e.problem);`,
      [dir],
    );
    expect(problem).toBe('unreadable');
  });

  it('in sandbox mode gives a deterministic placeholder for an unresolved reference and says so', async () => {
    const onPlaceholder = vi.fn();
    const first = await resolveSecretRef({ valueFrom: { env: 'SMTP_PASSWORD' } }, { baseDir: '/', env: {}, sandbox: true, onPlaceholder });
    const again = await resolveSecretRef({ valueFrom: { env: 'SMTP_PASSWORD' } }, { baseDir: '/', env: {}, sandbox: true });
    const other = await resolveSecretRef({ valueFrom: { file: 'SMTP_PASSWORD' } }, { baseDir: '/nonexistent', env: {}, sandbox: true });
    expect(first).toBe(again);
    expect(first).toBe(sandboxPlaceholder('env:SMTP_PASSWORD'));
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(other).not.toBe(first);
    expect(onPlaceholder).toHaveBeenCalledExactlyOnceWith('env:SMTP_PASSWORD');
  });

  it('in sandbox mode still uses a value that resolves', async () => {
    const onPlaceholder = vi.fn();
    await expect(resolveSecretRef({ valueFrom: { env: 'A' } }, { baseDir: '/', env: { A: 'real' }, sandbox: true, onPlaceholder })).resolves.toBe('real');
    expect(onPlaceholder).not.toHaveBeenCalled();
  });
});
