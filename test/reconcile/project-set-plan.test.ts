// The plan of a ProjectSet's projects: a template change folds into one item (its projects, its
// requests, the fields every project shares and those that differ), an element's own change
// stays an entry naming its tenant, and a saved plan tells one tenant's secret from another's
// although their documents share the template's file and paths.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { buildSavedPlan, manifestRefusals, newSalt, secretDigests } from '../../src/reconcile/plan-file.js';
import { foldTemplateChanges, isTemplateChange } from '../../src/reconcile/render/format.js';
import { renderMarkdown } from '../../src/reconcile/render/markdown.js';
import { renderText } from '../../src/reconcile/render/text.js';
import { summarizePlan } from '../../src/reconcile/summary.js';
import type { PassResult, PlanEntry } from '../../src/reconcile/types.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function entry(project: string, key: string, before: number, after: number, extra: Partial<PlanEntry> = {}): PlanEntry {
  return {
    id: `ProjectPooler/${project}/pooler`, kind: 'ProjectPooler', project, name: 'pooler', action: 'update',
    changes: [{ path: 'pooler.default_pool_size', before, after }], source: { file: 'set.yaml', line: 8, set: { name: 'tenants', key } }, ...extra,
  };
}

function result(entries: PlanEntry[]): PassResult {
  return { startedAt: 0, finishedAt: 0, dryRun: true, manifestErrors: [], plan: summarizePlan(entries), outcomes: [], resources: [], projects: [], result: 'success', requests: 1 };
}

describe('a template change in the plan', () => {
  const same = ['a', 'b', 'c'].map((key) => entry(`${key}-prod`, key, 15, 20));

  it('folds the same change of many projects into one item, and leaves one element\'s change alone', () => {
    const own = { ...entry('d-prod', 'd', 0, 0), changes: [{ path: 'pooler.max_client_conn', before: 200, after: 400 }] };
    const handWritten: PlanEntry = { ...entry('shop', 'x', 1, 2), source: { file: 'shop.yaml', line: 1 } };
    const folded = foldTemplateChanges([...same, own, handWritten]);
    expect(folded).toHaveLength(3);
    expect(folded[1]).toBe(own);
    const change = folded[0]!;
    if (!isTemplateChange(change)) throw new Error('expected a template change');
    expect(change).toMatchObject({ set: 'tenants', id: 'ProjectPooler/*/pooler', action: 'update', requests: 3, differing: [], common: [{ path: 'pooler.default_pool_size', before: 15, after: 20 }] });
    expect(change.entries.map((e) => e.project)).toEqual(['a-prod', 'b-prod', 'c-prod']);
    expect(folded[2]).toBe(handWritten);
  });

  it('lists a field whose value differs under each project', () => {
    const [change] = foldTemplateChanges([...same, entry('d-prod', 'd', 15, 40)]);
    if (!change || !isTemplateChange(change)) throw new Error('expected a template change');
    expect(change).toMatchObject({ requests: 4, common: [], differing: ['pooler.default_pool_size'] });
    expect(renderText(result([...same, entry('d-prod', 'd', 15, 40)]), { color: false })).toContain('    d-prod\n      ~ pooler.default_pool_size: 15 -> 40\n');
  });

  it('shows it once in text and markdown, with the projects and the requests', () => {
    const text = renderText(result(same), { color: false });
    expect(text).toContain('~ ProjectSet tenants: ProjectPooler/*/pooler update\n    3 projects: a-prod, b-prod, c-prod, 3 write requests\n    ~ pooler.default_pool_size: 15 -> 20\n');
    expect(text.match(/default_pool_size/g)).toHaveLength(1);
    const markdown = renderMarkdown(result(same));
    expect(markdown).toContain('| `~` | ProjectSet `tenants`: `ProjectPooler/*/pooler` | update | 3 projects: a-prod, b-prod, c-prod, 3 write requests |');
    expect(markdown).toContain('<details><summary>ProjectSet tenants: ProjectPooler/*/pooler, 3 projects, 3 write requests</summary>\n\n`a-prod`, `b-prod`, `c-prod`\n\n</details>');
  });

  it('names the tenant of a change to one element', () => {
    expect(renderText(result([entry('a-prod', 'a', 15, 40)]), { color: false })).toContain('~ ProjectPooler/a-prod/pooler update  [ProjectSet tenants, element a]');
  });
});

describe('a saved plan of a ProjectSet', () => {
  it('refuses a changed secret of one tenant, though every tenant\'s reference is at the same file and path', async () => {
    const root = mkdtempSync(join(tmpdir(), 'project-set-plan-'));
    roots.push(root);
    writeFileSync(join(root, 'org.yaml'), 'apiVersion: reconciler/v1\nkind: Organization\nmetadata: { name: acme }\nspec: {}\n');
    writeFileSync(join(root, 'set.yaml'), `apiVersion: reconciler/v1
kind: ProjectSet
metadata: { name: tenants }
spec:
  generators:
    - list: { keyField: tenant, elements: [ { tenant: a }, { tenant: b } ] }
  template:
    metadata: { name: "\${tenant}-prod" }
    spec:
      organization: acme
      region: eu-west-1
      db_pass: { valueFrom: { env: "DB_PASS_\${tenant}" } }
`);
    const manifests = await loadManifests(root);
    expect(manifests.errors).toEqual([]);
    const salt = newSalt();
    const digests = (env: Record<string, string>) => secretDigests(manifests.documents, async (ref) => env[(ref as { valueFrom: { env: string } }).valueFrom.env]!, salt);
    const planned = await digests({ DB_PASS_A: 'one', DB_PASS_B: 'two' });
    const plan = buildSavedPlan({ manifests, result: result([]), salt, secrets: planned, now: 0 });
    expect(manifestRefusals(plan, manifests, planned)).toEqual([]);
    const refusals = manifestRefusals(plan, manifests, await digests({ DB_PASS_A: 'changed', DB_PASS_B: 'two' }));
    expect(refusals).toEqual([{ resource: 'set.yaml:8 /spec/db_pass', reason: 'secret reference env:DB_PASS_A now resolves to a different value than when the plan was made' }]);
  });
});
