// A fleet of 3 projects, each with 20 functions and 30 secrets: the costs the issue promises.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { count, createProject, doc, projectDoc, requestsSince, runKinds, scope, startHarness, type Harness } from './harness.js';
import type { AnyDocument } from '../../src/manifests/types.js';
import type { ProjectScope } from '../../src/reconcile/types.js';

const PROJECTS = 3;
const FUNCTIONS = 20;
const SECRETS = 30;
const canary = (p: number, s: number) => `fleet-canary-${p}-${s}-c4a9e1`;

describe('fleet of 3 projects x 20 functions x 30 secrets', () => {
  let h: Harness;
  let scopes: ProjectScope[];
  const outputs: string[] = [];

  beforeAll(async () => {
    h = await startHarness();
    scopes = [];
    for (let p = 0; p < PROJECTS; p++) {
      const name = `fleet-${p}`;
      const ref = await createProject(h, name);
      const dir = join(h.root, name);
      const docs: AnyDocument[] = [];
      const values: Record<string, unknown> = {};
      for (let s = 0; s < SECRETS; s++) {
        values[`SECRET_${s}`] = { valueFrom: { env: `FLEET_${p}_${s}` } };
        h.env[`FLEET_${p}_${s}`] = canary(p, s);
      }
      docs.push(doc('Secrets', `${name}-secrets`, { project: name, values, prune: true }, dir));
      for (let f = 0; f < FUNCTIONS; f++) {
        const slug = `fn-${String(f).padStart(2, '0')}`;
        await mkdir(join(dir, 'functions', slug), { recursive: true });
        await writeFile(join(dir, 'functions', slug, 'index.ts'), `Deno.serve(() => new Response(${JSON.stringify(`${name} ${slug}`)}));\n`);
        docs.push(doc('Function', slug, { project: name, source: `functions/${slug}`, entrypoint: 'index.ts', verify_jwt: false }, dir));
      }
      scopes.push(scope(projectDoc(name, ref, dir, { prune: { functions: true } }), docs));
    }
    const first = await runKinds(h, scopes, { dryRun: false });
    outputs.push(JSON.stringify(first));
    expect(first.outcomes.filter((o) => o.result !== 'success')).toEqual([]);
    expect(first.outcomes.filter((o) => o.kind === 'Function')).toHaveLength(PROJECTS * FUNCTIONS);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a no-change pass makes one functions list and one secrets list per project, and nothing else', async () => {
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes, { dryRun: true });
    outputs.push(JSON.stringify(pass));
    expect(pass.entries).toHaveLength(PROJECTS * (FUNCTIONS + SECRETS));
    expect(pass.entries.filter((e) => e.action !== 'noop')).toEqual([]);
    const sent = requestsSince(h, since);
    expect(count(sent, 'GET /v1/projects/{ref}/functions')).toBe(PROJECTS);
    expect(count(sent, 'GET /v1/projects/{ref}/secrets')).toBe(PROJECTS);
    expect(sent).toHaveLength(2 * PROJECTS);
  });

  it('changing one function source deploys exactly that function', async () => {
    await writeFile(join(h.root, 'fleet-1', 'functions', 'fn-07', 'index.ts'), 'Deno.serve(() => new Response("changed"));\n');
    const since = h.emulator.requests().length;
    const pass = await runKinds(h, scopes, { dryRun: false });
    outputs.push(JSON.stringify(pass));
    expect(pass.entries.filter((e) => e.action !== 'noop').map((e) => e.id)).toEqual(['Function/fleet-1/fn-07']);
    const sent = requestsSince(h, since);
    expect(count(sent, 'POST /v1/projects/{ref}/functions/deploy')).toBe(1);
    expect(sent.filter((r) => r.startsWith('POST') || r.startsWith('PUT') || r.startsWith('PATCH') || r.startsWith('DELETE'))).toEqual([
      'POST /v1/projects/{ref}/functions/deploy',
    ]);
    expect(sent.filter((r) => r.includes('{function_slug}'))).toEqual([]);
  });

  it('canary secret values never appear in plans, outcomes, logs or the state directory', async () => {
    const state: string[] = [];
    for (const entry of await readdir(h.stateDir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      // A write in flight (temp file, then rename) may be gone by the time it is read: its
      // content is the renamed file's, read on its own.
      const text = await readFile(join(entry.parentPath, entry.name), 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' && entry.name.endsWith('.tmp')) return '';
        throw error;
      });
      state.push(text);
    }
    const everything = [...outputs, ...h.log.lines, ...state].join('\n');
    expect(everything.length).toBeGreaterThan(1000);
    for (let p = 0; p < PROJECTS; p++) for (let s = 0; s < SECRETS; s++) expect(everything).not.toContain(canary(p, s));
    expect(everything).not.toContain('fleet-canary');
  });
});
