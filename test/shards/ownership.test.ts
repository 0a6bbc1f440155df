// Who owns what in a sharded checkout: the one shard that creates each organization (the
// map's `organizations:`, else the first shard in map order with a project in it), and what
// each shard's process knows of the rest of the checkout.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadShardedManifests } from '../../src/shards/load-sharded.js';

const shard = (name: string, team: string) => `  - name: ${name}\n    selector: { labels: { team: ${team} } }\n    credentials: { tokenEnv: TOKEN }\n`;
const project = (name: string, team: string, organization: string) =>
  `apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: ${name}\n  labels: { team: ${team} }\nspec:\n  organization: ${organization}\n  region: eu-west-1\n`;
const organization = (name: string) => `apiVersion: reconciler/v1\nkind: Organization\nmetadata:\n  name: ${name}\nspec: {}\n`;

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function checkout(map: string, documents: string[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ownership-'));
  roots.push(root);
  const dir = join(root, 'manifests');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'shards.yaml'), map);
  await writeFile(join(dir, 'fleet.yaml'), documents.join('---\n'));
  return dir;
}

const DOCUMENTS = [
  organization('acme'),
  organization('beta'),
  organization('gamma'),
  organization('existing').replace('spec: {}', 'spec:\n  slug: existingslug'),
  project('p1', 'b', 'acme'),
  project('p2', 'c', 'acme'),
  project('p3', 'c', 'beta'),
  project('p4', 'c', 'existing'),
];
const SHARDS = `shards:\n${shard('first', 'a')}${shard('second', 'b')}${shard('third', 'c')}`;

describe('organization owners', () => {
  it('are the first shard in map order, whatever the labels, unless the map names one; an organization with a slug has none', async () => {
    const dir = await checkout(SHARDS, DOCUMENTS);
    const { set } = await loadShardedManifests(dir, { cwd: dir, shard: 'third' });
    expect(set.errors).toEqual([]);
    expect(set.shard?.organizationOwners).toEqual({ acme: 'first', beta: 'first', gamma: 'first' });
    // The owner reconciles the organizations it creates even without a project in them.
    const first = await loadShardedManifests(dir, { cwd: dir, shard: 'first' });
    expect(first.set.documents.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(['Organization/acme', 'Organization/beta', 'Organization/gamma']);

    const named = await checkout(`organizations:\n  acme: third\n${SHARDS}`, DOCUMENTS);
    const third = await loadShardedManifests(named, { cwd: named, shard: 'third' });
    expect(third.set.shard?.organizationOwners).toEqual({ acme: 'third', beta: 'first', gamma: 'first' });
  });

  it('must be shards of the map: another name is an error located at its line', async () => {
    const dir = await checkout(`organizations:\n  acme: nobody\n${SHARDS}`, DOCUMENTS);
    const { set } = await loadShardedManifests(dir, { cwd: dir, shard: 'first' });
    expect(set.errors).toEqual([
      expect.objectContaining({ file: 'shards.yaml', line: 2, path: '/organizations/acme', message: expect.stringContaining('expected the name of a shard of this map (first, second, third)') }),
    ]);
  });
});

describe("a shard's view of the rest of the checkout", () => {
  it('lists the Project documents other shards own, with their owner', async () => {
    const dir = await checkout(SHARDS, DOCUMENTS);
    const { set } = await loadShardedManifests(dir, { cwd: dir, shard: 'second' });
    expect(set.documents.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(['Organization/acme', 'Project/p1']);
    expect(set.shard?.elsewhere.map((e) => [e.document.metadata.name, e.shard])).toEqual([['p2', 'third'], ['p3', 'third'], ['p4', 'third']]);
    expect(set.shard?.name).toBe('second');
  });
});

describe('creating an organization', () => {
  const unitFor = async (name: string) => {
    const { organizationUnit } = await import('../../src/reconcile/kinds/organization.js');
    const document = { apiVersion: 'reconciler/v1', kind: 'Organization', metadata: { name }, spec: {}, source: { file: 'fleet.yaml', line: 1, column: 1 } };
    return organizationUnit(document as never, { version: 1, updatedAt: 0, organizations: {}, projects: {}, resources: [] });
  };
  const intents = { recordOrganization: async () => undefined } as never;
  const log = { debug() {}, info() {}, warn() {}, error() {} };

  it('reads the organization list again right before the POST, and takes one created since instead of creating a second', async () => {
    const { createOrganization } = await import('../../src/reconcile/kinds/organization.js');
    const calls: string[] = [];
    const api = {
      listAllOrganizations: async () => {
        calls.push('list');
        return [{ id: 'made-meanwhile', name: 'acme' }];
      },
      createAnOrganization: async () => {
        calls.push('create');
        return { id: 'second', name: 'acme' };
      },
    };
    const unit = await unitFor('acme');
    expect(await createOrganization(unit, api as never, intents, () => 0, log)).toBe('made-meanwhile');
    expect(calls).toEqual(['list']);

    const empty = { ...api, listAllOrganizations: async () => (calls.push('list'), []) };
    calls.length = 0;
    expect(await createOrganization(await unitFor('acme'), empty as never, intents, () => 0, log)).toBe('second');
    expect(calls).toEqual(['list', 'create']);
  });

  it("never creates one that another shard owns", async () => {
    const { createOrganization } = await import('../../src/reconcile/kinds/organization.js');
    const unit = await unitFor('acme');
    unit.createdBy = 'team-a';
    const api = { listAllOrganizations: async () => [], createAnOrganization: async () => ({ id: 'x', name: 'acme' }) };
    await expect(createOrganization(unit, api as never, intents, () => 0, log)).rejects.toThrow('organization `acme` is created by shard `team-a` only');
  });
});

describe("a project's documents", () => {
  it('follow its owner: a relabelled project takes its Secrets, Function, SsoProvider and Branch documents to the new shard', async () => {
    const own = (kind: string, spec: string) => `apiVersion: reconciler/v1\nkind: ${kind}\nmetadata:\n  name: p1-${kind.toLowerCase()}\nspec:\n  project: p1\n${spec}`;
    const dependants = [
      own('Secrets', '  values:\n    KEY: { valueFrom: { env: KEY } }\n'),
      own('Function', '  source: fn\n  entrypoint: index.ts\n'),
      own('SsoProvider', '  type: saml\n  metadata_url: https://idp.example.test/metadata\n  domains: [example.test]\n'),
      own('Branch', '  git_branch: preview\n'),
    ];
    const kinds = (documents: Array<{ kind: string; metadata: { name: string } }>) => documents.map((d) => `${d.kind}/${d.metadata.name}`).sort();
    for (const team of ['b', 'c']) {
      const dir = await checkout(SHARDS, [organization('acme'), project('p1', team, 'acme'), ...dependants]);
      await mkdir(join(dir, 'fn'), { recursive: true });
      await writeFile(join(dir, 'fn', 'index.ts'), 'export default () => new Response("ok");\n');
      const owner = team === 'b' ? 'second' : 'third';
      const other = team === 'b' ? 'third' : 'second';
      const mine = await loadShardedManifests(dir, { cwd: dir, shard: owner });
      expect(mine.set.errors).toEqual([]);
      expect(kinds(mine.set.documents)).toEqual(['Branch/p1-branch', 'Function/p1-function', 'Organization/acme', 'Project/p1', 'Secrets/p1-secrets', 'SsoProvider/p1-ssoprovider']);
      const theirs = await loadShardedManifests(dir, { cwd: dir, shard: other });
      expect(kinds(theirs.set.documents)).toEqual([]);
      expect(theirs.set.shard?.elsewhere.map((e) => [e.document.metadata.name, e.shard])).toEqual([['p1', owner]]);
    }
  });
});
