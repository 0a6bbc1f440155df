import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { logPass } from '../../src/daemon/pass-log.js';
import { createLogger } from '../../src/util/logger.js';
import { passResult } from './fixtures.js';

function capture(): { lines: () => Array<Record<string, unknown>>; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('logPass', () => {
  it('logs drift a dry run found, one line per resource, and one summary', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream });
    logPass(log, passResult({ dryRun: true, outcomes: [], result: 'success' }), { priority: 'drift', projects: ['shop'] });
    const lines = out.lines();
    expect(lines.map((l) => l.msg)).toEqual(['drift detected', 'drift detected', 'pass finished']);
    expect(lines[0]).toMatchObject({ id: 'ProjectAuth/shop/auth', action: 'update', fields: ['auth.smtp_pass'] });
    // Drift is what differed from the manifests when observed (the update), not a creation.
    expect(lines[2]).toMatchObject({ priority: 'drift', projects: ['shop'], dryRun: true, result: 'success', drifted: 1, repaired: 0, requests: 9 });
  });

  it('a pass that repaired drift counts it as found and repaired (the resources are in sync by the end)', () => {
    const out = capture();
    logPass(createLogger({ destination: out.stream }), passResult({ result: 'success', outcomes: [{ entryId: 'ProjectAuth/shop/auth', kind: 'ProjectAuth', action: 'update', result: 'success', durationMs: 12 }] }), { priority: 'drift', trigger: 'resync' });
    const summary = out.lines().at(-1)!;
    expect(summary).toMatchObject({ msg: 'pass finished', drifted: 1, repaired: 1, applied: 1 });
  });

  it('never writes a value: only field paths, even for plan entries carrying before and after', () => {
    const out = capture();
    const log = createLogger({ destination: out.stream });
    const canary = 'CANARY-s3cr3t-77';
    logPass(
      log,
      passResult({
        outcomes: [],
        plan: { entries: [{ id: 'Secret/shop/K', kind: 'Secret', project: 'shop', name: 'K', action: 'update', changes: [{ path: 'value', before: canary, after: canary }] }], summary: { create: 0, update: 1, delete: 0, noop: 0, blocked: 0 }, hasChanges: true },
      }),
      { priority: 'write' },
    );
    expect(out.lines().length).toBe(2);
    expect(JSON.stringify(out.lines())).not.toContain(canary);
  });

  it('a failed pass ends with an error-level summary', () => {
    const out = capture();
    logPass(createLogger({ destination: out.stream }), passResult({ result: 'failed' }), { priority: 'write' });
    const summary = out.lines().at(-1)!;
    expect(summary).toMatchObject({ level: 'error', msg: 'pass finished with errors', failed: 1, applied: 1, projects: 'all' });
  });
});
