import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { exitCode, manifestsDir, outputFormat } from '../../src/cli/commands/reconcile.js';
import { UsageError, type CommandContext } from '../../src/cli/context.js';
import { parseSettings } from '../../src/cli/settings.js';
import { summarizePlan } from '../../src/reconcile/summary.js';
import type { PassResult, PlanEntry } from '../../src/reconcile/types.js';

function context(positionals: string[], values: CommandContext['values'] = {}): CommandContext {
  const settings = parseSettings({ values, flags: new Set(Object.keys(values)), env: {}, cwd: '/work/repo' });
  return { positionals, settings, values, flags: new Set(), env: {}, cwd: '/work/repo', stdout: new PassThrough(), stderr: new PassThrough(), signal: new AbortController().signal };
}

const change: PlanEntry = { id: 'ProjectAuth/p/auth', kind: 'ProjectAuth', project: 'p', name: 'auth', action: 'update', changes: [{ path: 'auth.site_url', after: 'x' }] };
function result(overrides: Partial<PassResult>): PassResult {
  return { startedAt: 0, finishedAt: 0, dryRun: true, manifestErrors: [], plan: summarizePlan([]), outcomes: [], resources: [], projects: [], result: 'success', requests: 0, ...overrides };
}

describe('reconcile command options', () => {
  it('takes the manifests directory from DIR or --manifests, relative to the working directory', () => {
    expect(manifestsDir(context([]))).toBe('/work/repo');
    expect(manifestsDir(context(['examples']))).toBe('/work/repo/examples');
    expect(manifestsDir(context([], { manifests: '/abs/m' }))).toBe('/abs/m');
    expect(manifestsDir(context(['examples'], { manifests: './examples' }))).toBe('/work/repo/examples');
  });

  it('refuses two different directories or extra arguments', () => {
    expect(() => manifestsDir(context(['a'], { manifests: 'b' }))).toThrow(new UsageError('two manifests directories given: a and --manifests b'));
    expect(() => manifestsDir(context(['a', 'b']))).toThrow('expected at most one manifests directory, got 2: a b');
  });

  it('accepts text, json and markdown only', () => {
    expect(outputFormat(context([], { output: 'markdown' }))).toBe('markdown');
    expect(() => outputFormat(context([], { output: 'yaml' }))).toThrow('--output: expected one of text, json, markdown, got `yaml`');
  });
});

describe('exit codes', () => {
  it('are 0 on success, 2 only for a dry run with changes under --detailed-exitcode, 1 on failure or invalid manifests', () => {
    const withChanges = summarizePlan([change]);
    expect(exitCode(result({}), false)).toBe(0);
    expect(exitCode(result({}), true)).toBe(0);
    expect(exitCode(result({ plan: withChanges }), false)).toBe(0);
    expect(exitCode(result({ plan: withChanges }), true)).toBe(2);
    expect(exitCode(result({ plan: withChanges, dryRun: false }), true)).toBe(0);
    expect(exitCode(result({ result: 'failed', plan: withChanges }), true)).toBe(1);
    expect(exitCode(result({ result: 'invalid' }), true)).toBe(1);
    expect(exitCode(result({ plan: summarizePlan([{ ...change, observeOnly: true }]) }), true)).toBe(0);
  });
});
