import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Daemon, type DaemonPassRequest } from '../../src/daemon/controller.js';
import { createMetrics } from '../../src/daemon/metrics.js';
import type { PassResult } from '../../src/reconcile/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { GitSyncDir, commitId, fakeLoadManifests } from './git-sync.js';
import { passResult, manualTrigger } from './fixtures.js';

interface RecordedPass {
  priority: 'write' | 'drift';
  projects?: string[];
  documents: string[];
  root: string;
}

describe('Daemon (fake pass, real files)', () => {
  let dir: GitSyncDir;
  let clock: ManualClock;
  let passes: RecordedPass[];
  let trigger: ReturnType<typeof manualTrigger>;
  let metrics: ReturnType<typeof createMetrics>;
  let gate: Promise<void> | undefined;

  const runPass = async (request: DaemonPassRequest): Promise<PassResult> => {
    passes.push({
      priority: request.priority,
      projects: request.projects,
      documents: request.manifests.documents.map((d) => d.metadata.name),
      root: request.manifests.root,
    });
    if (gate) await gate;
    request.signal.throwIfAborted();
    return passResult({ result: 'success', resources: [], projects: [], outcomes: [], requests: 3 * (request.projects?.length ?? 2) });
  };

  function daemon(options: { allowEmpty?: boolean } = {}): Daemon {
    return new Daemon({
      manifestsPath: dir.link,
      runPass,
      loadManifests: fakeLoadManifests,
      metrics,
      log: silentLogger,
      clock,
      trigger,
      budget: () => ({ limit: 50, windowMs: 60_000 }),
      settleMs: 10,
      minSliceSpacingMs: 1_000,
      ...options,
    });
  }

  /** Moves the manual clock until `work` settles (it mixes real file I/O with clock sleeps). */
  async function settle<T>(work: Promise<T>): Promise<T> {
    let done = false;
    void work.finally(() => (done = true)).catch(() => undefined);
    while (!done) await clock.advance(10);
    return work;
  }

  async function metricValue(name: string, labels = ''): Promise<number | undefined> {
    const text = await metrics.render();
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name}{`) === false && l.startsWith(`${name} `)));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  }

  beforeEach(async () => {
    dir = await GitSyncDir.create();
    clock = new ManualClock();
    passes = [];
    trigger = manualTrigger(60_000);
    metrics = createMetrics(undefined, { clock, processMetrics: false });
    gate = undefined;
  });

  afterEach(async () => {
    await dir.close();
  });

  it('applies the first revision with one write pass over everything', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a', 'b.yaml': 'b' });
    await dir.publish(commitId(1));
    const d = daemon();
    await d.start();
    await d.idle();
    expect(passes).toEqual([{ priority: 'write', projects: undefined, documents: ['a', 'b'], root: join(dir.root, '.worktrees', commitId(1)) }]);
    expect(await metrics.render()).toContain(`reconciler_source_info{revision="${commitId(1)}"} 1`);
    expect(d.readiness()).toEqual({ ready: true, reasons: [] });
    await d.stop(1000);
  });

  it('a link swap applies only the changed project first (write), then re-checks the rest (drift)', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a', 'b.yaml': 'b', 'c.yaml': 'c' });
    await dir.publish(commitId(1));
    const d = daemon();
    await d.start();
    await d.idle();
    await dir.worktree(commitId(2), { 'a.yaml': 'a', 'b.yaml': 'b changed', 'c.yaml': 'c', 'README.md': 'docs' });
    await dir.publish(commitId(2), { removePrevious: commitId(1) });
    await d.reload();
    await clock.advance(120_000);
    await d.idle();
    expect(passes.map((p) => [p.priority, p.projects])).toEqual([
      ['write', undefined],
      ['write', ['b']],
      ['drift', ['a']],
      ['drift', ['c']],
    ]);
    expect(passes[1]!.root).toBe(join(dir.root, '.worktrees', commitId(2)));
    expect(await metrics.render()).toContain(`reconciler_source_info{revision="${commitId(2)}"} 1`);
    await d.stop(1000);
  });

  it('reading the same revision again applies nothing', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.publish(commitId(1));
    const d = daemon();
    await d.start();
    await d.idle();
    await d.reload();
    await d.reload();
    await d.idle();
    expect(passes).toHaveLength(1);
    await d.stop(1000);
  });

  it('a broken revision applies nothing, sets the error gauge and keeps the last good state', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a', 'b.yaml': 'b' });
    await dir.publish(commitId(1));
    const d = daemon();
    await d.start();
    await d.idle();
    await dir.worktree(commitId(2), { 'a.yaml': 'BROKEN', 'c.yaml': 'BROKEN too' });
    await dir.publish(commitId(2));
    await d.reload();
    await d.idle();
    expect(passes).toHaveLength(1);
    expect(await metrics.render()).toMatch(/^reconciler_manifest_errors 2$/m);
    expect(await metrics.render()).toMatch(/^reconciler_reconcile_total\{result="invalid"\} 1$/m);
    expect(await metrics.render()).toContain(`reconciler_source_info{revision="${commitId(1)}"} 1`);
    expect(d.current()?.revision).toBe(commitId(1));
    // Drift re-checks go on from the last good state.
    trigger.tick();
    await clock.advance(60_000);
    await d.idle();
    expect(passes.slice(1).map((p) => [p.priority, p.documents])).toEqual([
      ['drift', ['a', 'b']],
      ['drift', ['a', 'b']],
    ]);
    // The fix is applied and clears the gauge.
    await dir.worktree(commitId(3), { 'a.yaml': 'a', 'b.yaml': 'b', 'c.yaml': 'c' });
    await dir.publish(commitId(3));
    await d.reload();
    await settle(d.idle());
    expect(passes.slice(3).map((p) => [p.priority, p.projects])).toEqual([
      ['write', ['c']],
      ['drift', ['a']],
      ['drift', ['b']],
    ]);
    expect(await metrics.render()).toMatch(/^reconciler_manifest_errors 0$/m);
    await d.stop(1000);
  });

  it('an empty or vanished checkout prunes nothing and keeps the last good state', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.publish(commitId(1));
    const d = daemon();
    await d.start();
    await d.idle();
    await dir.worktree(commitId(2), { 'README.md': 'nothing here' });
    await dir.publish(commitId(2));
    await d.reload();
    await rm(dir.link);
    await d.reload();
    await d.idle();
    expect(passes).toHaveLength(1);
    expect(d.current()?.revision).toBe(commitId(1));
    await d.stop(1000);
  });

  it('with --allow-empty an empty checkout is applied', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.publish(commitId(1));
    const d = daemon({ allowEmpty: true });
    await d.start();
    await d.idle();
    await dir.worktree(commitId(2), { 'README.md': 'nothing here' });
    await dir.publish(commitId(2));
    await d.reload();
    await d.idle();
    expect(passes.map((p) => [p.priority, p.projects, p.documents])).toEqual([
      ['write', undefined, ['a']],
      ['write', undefined, []],
    ]);
    await d.stop(1000);
  });

  it('a link that moves while the tree is read is read again from the new target', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.worktree(commitId(2), { 'a.yaml': 'a', 'b.yaml': 'b' });
    await dir.publish(commitId(1));
    let loads = 0;
    const d = new Daemon({
      manifestsPath: dir.link,
      runPass,
      loadManifests: async (path) => {
        loads += 1;
        const set = await fakeLoadManifests(path);
        if (loads === 1) await dir.publish(commitId(2));
        return set;
      },
      metrics,
      log: silentLogger,
      clock,
      trigger,
      budget: () => ({ limit: 50, windowMs: 60_000 }),
      settleMs: 10,
    });
    await settle(d.start());
    await d.idle();
    expect(loads).toBe(2);
    expect(passes).toEqual([{ priority: 'write', projects: undefined, documents: ['a', 'b'], root: join(dir.root, '.worktrees', commitId(2)) }]);
    await d.stop(1000);
  });

  it('one pass at a time per project: a drift re-check skips a project in a write pass', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a', 'b.yaml': 'b' });
    await dir.publish(commitId(1));
    const d = daemon();
    await d.start();
    await d.idle();
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    await dir.worktree(commitId(2), { 'a.yaml': 'a changed', 'b.yaml': 'b' });
    await dir.publish(commitId(2));
    await d.reload();
    // The write pass for `a` is in flight; the schedule asks for both.
    trigger.tick();
    await clock.advance(1);
    expect(passes.slice(1).map((p) => [p.priority, p.projects])).toEqual([
      ['write', ['a']],
      ['drift', ['b']],
    ]);
    open();
    gate = undefined;
    await settle(d.idle());
    // `a` was skipped by the sweep while busy; the write pass then queued `b` again.
    expect(passes.slice(3).map((p) => [p.priority, p.projects])).toEqual([['drift', ['b']]]);
    await d.stop(1000);
  });

  it('stop aborts the pass in flight and starts nothing after', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.publish(commitId(1));
    gate = new Promise(() => undefined);
    const d = daemon();
    const started = d.start();
    await started;
    expect(passes).toHaveLength(1);
    const stopping = d.stop(5_000);
    await clock.advance(5_000);
    // The fake pass never returns: stop gives up after the grace time and says so.
    expect(await stopping).toBe(false);
    trigger.tick();
    await d.reload();
    expect(passes).toHaveLength(1);
  });

  it('a plain directory (no git-sync link, no git) loads without a revision', async () => {
    await mkdir(join(dir.root, 'plain'));
    await writeFile(join(dir.root, 'plain', 'a.yaml'), 'a');
    const d = new Daemon({
      manifestsPath: join(dir.root, 'plain'),
      runPass,
      loadManifests: fakeLoadManifests,
      metrics,
      log: silentLogger,
      clock,
      trigger,
      budget: () => ({ limit: 50, windowMs: 60_000 }),
    });
    await d.start();
    await d.idle();
    expect(d.current()?.revision).toBeUndefined();
    expect(await metricValue('reconciler_manifest_errors')).toBe(0);
    await d.stop(1000);
  });

  it('feeds the observed health of each re-checked project into the metrics', async () => {
    await dir.worktree(commitId(1), { 'a.yaml': 'a' });
    await dir.publish(commitId(1));
    const observedFor: string[][] = [];
    const d = new Daemon({
      manifestsPath: dir.link,
      runPass: async (request) => {
        await runPass(request);
        return passResult({ result: 'success', resources: [], outcomes: [], projects: [{ name: 'a', ref: 'aaaaaaaaaaaaaaaaaaaa', status: 'ACTIVE_HEALTHY' }] });
      },
      observe: async (projects) => {
        observedFor.push(projects.map((p) => p.name));
        return projects.map((p) => ({ ...p, health: { db: true, rest: false } }));
      },
      loadManifests: fakeLoadManifests,
      metrics,
      log: silentLogger,
      clock,
      trigger,
      budget: () => ({ limit: 50, windowMs: 60_000 }),
    });
    await d.start();
    await d.idle();
    // The write pass does not read health; the scheduled re-check does.
    expect(observedFor).toEqual([]);
    trigger.tick();
    await settle(d.idle());
    expect(observedFor).toEqual([['a']]);
    const text = await metrics.render();
    expect(text).toContain('reconciler_project_health{project="a",service="db"} 1');
    expect(text).toContain('reconciler_project_health{project="a",service="rest"} 0');
    expect(text).toContain('reconciler_project_status{project="a",status="ACTIVE_HEALTHY"} 1');
    await d.stop(1000);
  });
});
