import { describe, expect, it } from 'vitest';
import { PassThrough, Writable } from 'node:stream';
import { renderJson, writeJson } from '../../src/reconcile/render/json.js';
import { renderMarkdown } from '../../src/reconcile/render/markdown.js';
import { renderText } from '../../src/reconcile/render/text.js';
import { summarizePlan } from '../../src/reconcile/summary.js';
import type { PassResult, PlanEntry } from '../../src/reconcile/types.js';

const CANARY = 'canary-Zq8vX1';

function entries(): PlanEntry[] {
  return [
    { id: 'Organization/acme', kind: 'Organization', name: 'acme', action: 'noop', changes: [] },
    {
      id: 'Project/shop', kind: 'Project', name: 'shop', action: 'create',
      changes: [{ path: 'name', after: 'shop' }, { path: 'region', after: 'eu-west-1' }, { path: 'db_pass', sensitive: true }],
    },
    {
      id: 'ProjectAuth/web/auth', kind: 'ProjectAuth', project: 'web', name: 'auth', action: 'update',
      changes: [
        { path: 'auth.site_url', before: 'http://old.example', after: 'https://new.example' },
        // A sensitive change that (wrongly) carries values: renderers must not print them.
        { path: 'auth.smtp_pass', sensitive: true, before: CANARY, after: CANARY },
        { path: 'auth.jwt_exp', after: 3600 },
      ],
    },
    { id: 'Project/legacy', kind: 'Project', name: 'legacy', action: 'delete', changes: [{ path: 'ref', before: 'abc' }], reason: 'manifest removed; deletion policy `delete`' },
    { id: 'ProjectCryptoext/web/cryptoext', kind: 'ProjectCryptoext', project: 'web', name: 'cryptoext', action: 'blocked', changes: [{ path: 'cryptoext.root_key', sensitive: true }], reason: 'needs confirm_root_key_change' },
    { id: 'ProjectPostgres/web/postgres', kind: 'ProjectPostgres', project: 'web', name: 'postgres', action: 'update', observeOnly: true, changes: [{ path: 'postgres.work_mem', before: '4MB', after: '8MB' }] },
  ];
}

function result(overrides: Partial<PassResult> = {}): PassResult {
  return {
    startedAt: Date.UTC(2026, 0, 1), finishedAt: Date.UTC(2026, 0, 1, 0, 0, 2), dryRun: true, revision: 'abc123',
    manifestErrors: [], plan: summarizePlan(entries()), outcomes: [], resources: [], projects: [], result: 'failed', requests: 7,
    ...overrides,
  };
}

describe('summarizePlan', () => {
  it('counts observe-only drift apart from changes', () => {
    const plan = summarizePlan(entries());
    expect(plan.summary).toEqual({ create: 1, update: 1, delete: 1, noop: 2, blocked: 1 });
    expect(plan.drift).toBe(1);
    expect(plan.hasChanges).toBe(true);
    expect(summarizePlan([entries()[5]!]).hasChanges).toBe(false);
  });
});

describe('renderText', () => {
  it('renders a reviewed diff with markers, paths, before -> after and the summary line', () => {
    const text = renderText(result(), { color: false });
    expect(text).toContain('+ Project/shop');
    expect(text).toContain('    + region: "eu-west-1"');
    expect(text).toContain('~ ProjectAuth/web/auth');
    expect(text).toContain('    ~ auth.site_url: "http://old.example" -> "https://new.example"');
    expect(text).toContain('    + auth.jwt_exp: 3600');
    expect(text).toContain('- Project/legacy');
    expect(text).toContain('! ProjectCryptoext/web/cryptoext');
    expect(text).toContain('observe only: not applied');
    expect(text).toContain('Plan: 1 to create, 1 to update, 1 to delete, 1 blocked, 1 drifted under observe.');
    expect(text).not.toContain('Organization/acme');
    expect(text).not.toMatch(/\u001b\[/);
  });

  it('shows a secret only as a sensitive change', () => {
    const text = renderText(result(), { color: true });
    expect(text).toContain('auth.smtp_pass: (sensitive value changed)');
    expect(text).toContain('db_pass: (sensitive value changed)');
    expect(text).not.toContain(CANARY);
  });

  it('colours only when asked', () => {
    expect(renderText(result(), { color: true })).toMatch(/\u001b\[32m\+ Project\/shop/);
  });

  it('says so when nothing changes', () => {
    const text = renderText(result({ plan: summarizePlan([entries()[0]!]), result: 'success' }), { color: false });
    expect(text).toContain('No changes.');
    expect(text).toContain('Plan: 0 to create, 0 to update, 0 to delete, 0 blocked.');
  });

  it('lists every located manifest error of an invalid pass', () => {
    const text = renderText(
      result({ result: 'invalid', plan: summarizePlan([]), manifestErrors: [
        { file: 'a.yaml', line: 3, column: 5, path: '/spec/auth/site_ur', message: 'unknown field', hint: 'did you mean `site_url`?' },
        { file: 'b.yaml', line: 1, column: 1, path: '', message: 'not YAML' },
      ] }),
      { color: false },
    );
    expect(text).toContain('a.yaml:3:5 /spec/auth/site_ur: unknown field (did you mean `site_url`?)');
    expect(text).toContain('b.yaml:1:1: not YAML');
    expect(text).toContain('nothing was planned or applied');
  });

  it('reports the outcomes of an apply', () => {
    const text = renderText(
      result({ dryRun: false, outcomes: [
        { entryId: 'Project/shop', kind: 'Project', action: 'create', result: 'success' },
        { entryId: 'ProjectAuth/web/auth', kind: 'ProjectAuth', action: 'update', result: 'failed', error: { type: 'TransientError', message: 'PATCH /v1/projects/{ref}/config/auth: 500' } },
      ] }),
      { color: false },
    );
    expect(text).toContain('Apply: 1 succeeded, 1 failed, 0 skipped.');
    expect(text).toContain('x ProjectAuth/web/auth failed: PATCH /v1/projects/{ref}/config/auth: 500');
  });
});

describe('renderJson', () => {
  it('is a versioned document with summary, entries and outcomes, and no secret value', () => {
    const text = renderJson(result());
    const doc = JSON.parse(text);
    expect(doc.version).toBe(1);
    expect(Object.keys(doc)).toEqual(['version', 'result', 'dryRun', 'revision', 'startedAt', 'finishedAt', 'summary', 'entries', 'outcomes', 'resources', 'projects', 'manifestErrors', 'requests']);
    expect(doc.summary).toEqual({ create: 1, update: 1, delete: 1, blocked: 1, noop: 2, drift: 1, hasChanges: true });
    const auth = doc.entries.find((e: { id: string }) => e.id === 'ProjectAuth/web/auth');
    expect(auth.changes[1]).toEqual({ path: 'auth.smtp_pass', sensitive: true });
    expect(text).not.toContain(CANARY);
  });
  it('is written piece by piece as the same text, formatted as JSON.stringify with two spaces', async () => {
    const rich = result({
      dryRun: false,
      outcomes: [
        { entryId: 'Project/shop', kind: 'Project', action: 'create', result: 'success', durationMs: 12 },
        { entryId: 'ProjectAuth/web/auth', kind: 'ProjectAuth', action: 'update', result: 'failed', error: { type: 'TransientError', message: 'PATCH: 500' } },
      ],
      resources: [{ id: 'Project/shop', kind: 'Project', name: 'shop', state: 'in_sync', observedAt: 5 }],
      projects: [{ name: 'shop', observedAt: 5, ref: 'abcdefghijklmnopqrst', status: 'ACTIVE_HEALTHY' }],
      manifestErrors: [{ file: 'a "quoted"\nname.yaml', line: 3, column: 5, path: '/spec', message: 'line\nbreak and \u2028 and \u00e9' }],
    });
    for (const pass of [rich, result({ plan: summarizePlan([]), result: 'success' })]) {
      const text = renderJson(pass);
      expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
      const written: Buffer[] = [];
      const sink = new Writable({ highWaterMark: 16, write: (chunk: Buffer, _encoding, done) => (written.push(chunk), setImmediate(done)) });
      await writeJson(pass, sink);
      expect(Buffer.concat(written).toString('utf8')).toBe(text);
      let plain = '';
      await writeJson(pass, { write: (chunk: string) => ((plain += chunk), false) } as never);
      expect(plain).toBe(text);
    }
  });

  it('stops writing when the stream closes under it', async () => {
    const stream = new PassThrough({ highWaterMark: 1 });
    const many = result({ plan: summarizePlan(Array.from({ length: 2000 }, (_, i) => ({ id: `Project/p${i}`, kind: 'Project' as const, name: `p${i}`, action: 'noop' as const, changes: [] }))) });
    const writing = writeJson(many, stream);
    stream.destroy();
    await expect(writing).resolves.toBeUndefined();
  });
});

describe('renderMarkdown', () => {
  it('puts the summary line first, warns of deletions before the details, and folds the details', () => {
    const md = renderMarkdown(result());
    const lines = md.split('\n');
    expect(lines[0]).toBe('**Plan: 1 to create, 1 to update, 1 to delete, 1 blocked, 1 drifted under observe** (dry run, revision `abc123`)');
    const warning = md.indexOf('[!WARNING]');
    const details = md.indexOf('<details>');
    expect(warning).toBeGreaterThan(0);
    expect(warning).toBeLessThan(details);
    expect(md).toContain('> - `Project/legacy`');
    expect(md).toContain('```diff');
    expect(md).toContain('</details>');
    expect(md).toContain('auth.smtp_pass: (sensitive value changed)');
    expect(md).not.toContain(CANARY);
  });

  it('cannot be broken out of by a value holding a code fence or table pipes', () => {
    const md = renderMarkdown(result({ plan: summarizePlan([
      { id: 'ProjectAuth/p/auth', kind: 'ProjectAuth', project: 'p', name: 'auth', action: 'update', reason: 'a|b', changes: [{ path: 'auth.sms_template', after: '```\n<script>' }] },
    ]) }));
    const fences = md.match(/^```/gm) ?? [];
    expect(fences).toHaveLength(2);
    expect(md).toContain('a\\|b');
  });
});

describe('renderMarkdown for a pull-request comment', () => {
  const heading = { dir: 'fleet', environment: 'https://api.example.com' };
  /** Every fenced block opened is closed, and every <details> too, in order. */
  const balanced = (md: string) => {
    let inFence = false;
    let open = 0;
    for (const line of md.split('\n')) {
      if (line.startsWith('```')) inFence = !inFence;
      else if (!inFence && line.startsWith('<details>')) open++;
      else if (!inFence && line === '</details>') open--;
      if (open < 0 || open > 1) return false;
    }
    return !inFence && open === 0;
  };
  const many = (n: number): PlanEntry[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `ProjectAuth/p${String(i).padStart(4, '0')}/auth`, kind: 'ProjectAuth', project: `p${i}`, name: 'auth', action: i % 10 === 0 ? 'delete' : 'update',
      changes: [{ path: 'auth.site_url', before: `https://old-${i}.example`, after: `https://new-${i}.example` }, { path: 'auth.smtp_pass', sensitive: true, before: CANARY, after: CANARY }],
    }) as PlanEntry);

  it('names the directory and the environment on the first line', () => {
    const md = renderMarkdown(result(), { heading });
    expect(md.split('\n')[0]).toBe('### Manifests `fleet` against https://api.example.com');
    expect(md.split('\n')[2]).toMatch(/^\*\*Plan: 1 to create/);
    const invalid = renderMarkdown(result({ result: 'invalid', manifestErrors: [{ file: 'a.yaml', line: 3, column: 5, path: '/spec/region', message: 'bad region' }] }), { heading });
    expect(invalid.split('\n')[0]).toBe('### Manifests `fleet` against https://api.example.com');
    expect(invalid).toContain('**Manifests are invalid: nothing was planned or applied (1 error).**');
  });

  it('colours the details as a diff: + created or added, - deleted or removed, ! changed', () => {
    const md = renderMarkdown(result());
    const diff = md.slice(md.indexOf('```diff\n') + 8, md.lastIndexOf('\n```'));
    expect(diff.split('\n')).toEqual([
      '+ Project/shop (create)',
      '+   name: "shop"',
      '+   region: "eu-west-1"',
      '+   db_pass: (sensitive value changed)',
      '! ProjectAuth/web/auth (update)',
      '!   auth.site_url: "http://old.example" -> "https://new.example"',
      '!   auth.smtp_pass: (sensitive value changed)',
      '+   auth.jwt_exp: 3600',
      '- Project/legacy (delete)',
      '-   ref: "abc"',
      '! ProjectCryptoext/web/cryptoext (blocked)',
      '!   cryptoext.root_key: (sensitive value changed)',
      '! ProjectPostgres/web/postgres (update)',
      '!   postgres.work_mem: "4MB" -> "8MB"',
    ]);
  });

  it('a plan too long for a comment shows as many entries as fit, with the table, fence and <details> whole', () => {
    const plan = summarizePlan(many(3000));
    const full = renderMarkdown(result({ plan }), { heading, maxLength: Number.MAX_SAFE_INTEGER });
    expect(full.length).toBeGreaterThan(65_536);
    const md = renderMarkdown(result({ plan }), { heading });
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md.length).toBeGreaterThan(50_000);
    expect(balanced(md)).toBe(true);
    expect(md.split('\n')[0]).toBe('### Manifests `fleet` against https://api.example.com');
    expect(md).toContain('**Plan: 0 to create, 2700 to update, 300 to delete, 0 blocked**');
    const shown = (md.match(/^\| `[!~+-]` \|/gm) ?? []).length;
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(3000);
    expect(md).toContain(`_${3000 - shown} more entries not shown: the comment is limited to 65536 characters`);
    expect(md).toContain(`<details><summary>Details (${shown} entries)</summary>`);
    expect(md).toMatch(/Result: \*\*failed\*\*\.\n$/);
    expect(md).not.toContain(CANARY);
    // Every size limit holds, whatever it is.
    for (const maxLength of [2_000, 10_000, 33_333]) {
      const small = renderMarkdown(result({ plan }), { heading, maxLength });
      expect(small.length).toBeLessThanOrEqual(maxLength);
      expect(balanced(small)).toBe(true);
    }
  });

  it('a long list of manifest errors is cut the same way', () => {
    const manifestErrors = Array.from({ length: 5000 }, (_, i) => ({ file: `p${i}.yaml`, line: i + 1, column: 3, path: '/spec/region', message: `unknown region number ${i} in a long message` }));
    const md = renderMarkdown(result({ result: 'invalid', manifestErrors }), { heading });
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md).toContain('(5000 errors)');
    expect(md).toMatch(/_\d+ more errors not shown/);
  });
});

/** A pass that could not observe the fleet, as the engine builds it (`observationFailed`). */
function unobserved(dryRun: boolean): PassResult {
  return result({
    dryRun,
    plan: summarizePlan([]),
    outcomes: [{ entryId: 'Project/*', kind: 'Project', action: 'noop', result: 'failed', error: { type: 'UnauthorizedError', message: 'GET /v1/projects: 401 Unauthorized' } }],
    result: 'failed',
    requests: 1,
  });
}

describe('a pass that could not observe the fleet', () => {
  it.each([true, false])('says so in text and names the error, never that the live state matches (dry run: %s)', (dryRun) => {
    const text = renderText(unobserved(dryRun), { color: false });
    expect(text).toContain('Could not observe the fleet: UnauthorizedError: GET /v1/projects: 401 Unauthorized. Nothing was planned or applied.');
    expect(text).not.toMatch(/matches|No changes/);
    expect(text).not.toContain('Apply:');
    expect(text).toContain('Result: failed (1 API request).');
  });

  it('says so in markdown', () => {
    const md = renderMarkdown(unobserved(false));
    expect(md.split('\n')[0]).toBe('**Could not observe the fleet: UnauthorizedError: GET /v1/projects: 401 Unauthorized. Nothing was planned or applied.**');
    expect(md).not.toMatch(/matches|No changes/);
    expect(md).toContain('Result: **failed**.');
  });

  it('keeps the JSON document shape and carries the error in the outcomes', () => {
    const doc = JSON.parse(renderJson(unobserved(true)));
    expect(Object.keys(doc)).toEqual(['version', 'result', 'dryRun', 'revision', 'startedAt', 'finishedAt', 'summary', 'entries', 'outcomes', 'resources', 'projects', 'manifestErrors', 'requests']);
    expect(doc).toMatchObject({ version: 1, result: 'failed', entries: [], requests: 1 });
    expect(doc.outcomes).toEqual([
      { entryId: 'Project/*', kind: 'Project', action: 'noop', result: 'failed', error: { type: 'UnauthorizedError', message: 'GET /v1/projects: 401 Unauthorized' }, durationMs: null },
    ]);
  });

  it('a successful pass with nothing to do still says the live state matches', () => {
    const text = renderText(result({ dryRun: false, plan: summarizePlan([]), result: 'success' }), { color: false });
    expect(text).toContain('No changes. The live state matches the manifests.');
    expect(text).not.toContain('Could not observe');
  });
});

describe('apply counts', () => {
  const apply = (): PassResult =>
    result({
      dryRun: false,
      outcomes: [
        { entryId: 'Project/shop', kind: 'Project', action: 'create', result: 'success' },
        { entryId: 'Project/shop#ready', kind: 'Project', action: 'wait', result: 'success' },
        { entryId: 'Project/web#ready', kind: 'Project', action: 'wait', result: 'failed', error: { type: 'ProjectNotReadyError', message: 'web is not ready after 30 minutes' } },
        { entryId: 'ProjectAuth/web/auth', kind: 'ProjectAuth', action: 'update', result: 'skipped', error: { type: 'Error', message: 'depends on Project/web#ready, which did not succeed' } },
        { entryId: 'ProjectCryptoext/web/cryptoext', kind: 'ProjectCryptoext', action: 'blocked', result: 'skipped', error: { type: 'Blocked', message: 'needs confirm_root_key_change' } },
        { entryId: 'Project/legacy', kind: 'Project', action: 'delete', result: 'success' },
      ],
    });

  it('count writes only; readiness waits have their own line; a failed wait and a blocked entry are listed', () => {
    const text = renderText(apply(), { color: false });
    expect(text).toContain('Apply: 2 succeeded, 0 failed, 1 skipped.');
    expect(text).toContain('Waited for 2 projects to become ready: 1 ready, 1 not ready.');
    expect(text).toContain('  x Project/web#ready failed: web is not ready after 30 minutes');
    expect(text).toContain('  - ProjectAuth/web/auth skipped: depends on Project/web#ready, which did not succeed');
    expect(text).toContain('  ! ProjectCryptoext/web/cryptoext blocked: needs confirm_root_key_change');
    expect(text).not.toContain('Project/shop#ready');
  });

  it('in markdown too', () => {
    const md = renderMarkdown(apply());
    expect(md).toContain('**Apply:** 2 succeeded, 0 failed, 1 skipped.');
    expect(md).toContain('Waited for 2 projects to become ready: 1 ready, 1 not ready.');
    expect(md).toContain('- `Project/web#ready` failed: web is not ready after 30 minutes');
    expect(md).toContain('- `ProjectCryptoext/web/cryptoext` blocked: needs confirm_root_key_change');
  });

  it('no readiness line when no project was waited for', () => {
    const text = renderText(result({ dryRun: false, outcomes: [{ entryId: 'Project/legacy', kind: 'Project', action: 'delete', result: 'success' }] }), { color: false });
    expect(text).toContain('Apply: 1 succeeded, 0 failed, 0 skipped.');
    expect(text).not.toContain('Waited');
  });
});
