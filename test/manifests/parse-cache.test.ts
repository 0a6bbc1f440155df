import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { locateField } from '../../src/manifests/locations.js';
import { ParseCache } from '../../src/manifests/parse-cache.js';
import type { ProjectDocument } from '../../src/manifests/types.js';
import { cleanupTrees, ORG, PROJECT, tree } from './helpers.js';

afterAll(cleanupTrees);

const project = (name: string, region = 'eu-west-1') => PROJECT.replace('name: shop', `name: ${name}`).replace('eu-west-1', region);

describe('the parse cache of a long-running process', () => {
  it('parses again only the files whose content changed, and the set is the same as without the cache', async () => {
    const root = tree({ 'org.yaml': ORG, 'a.yaml': project('a'), 'b.yaml': project('b'), 'c.yaml': project('c') });
    const cache = new ParseCache();
    const first = await loadManifests(root, { parseCache: cache });
    expect(first.errors).toEqual([]);
    expect([cache.hits, cache.misses]).toEqual([0, 4]);
    writeFileSync(join(root, 'b.yaml'), `# moved\n${project('b', 'us-east-1')}`);
    const second = await loadManifests(root, { parseCache: cache });
    expect([cache.hits, cache.misses]).toEqual([3, 5]);
    const uncached = await loadManifests(root);
    const view = (set: typeof second) => set.documents.map((d) => ({ kind: d.kind, metadata: d.metadata, spec: d.spec, source: d.source }));
    expect(view(second)).toEqual(view(uncached));
    const b = second.documents.find((d) => d.metadata.name === 'b') as ProjectDocument;
    expect(b.spec.region).toBe('us-east-1');
    expect(b.source.line).toBe(2);
    // Positions of a file from the cache are those of its text.
    const a = second.documents.find((d) => d.metadata.name === 'a')!;
    expect(locateField(a, '/spec/region')).toMatchObject({ line: 7 });
  });

  it('hands every load values of its own: a change made to one set never reaches the next', async () => {
    const root = tree({ 'org.yaml': ORG, 'a.yaml': project('a') });
    const cache = new ParseCache();
    const first = await loadManifests(root, { parseCache: cache });
    (first.documents.find((d) => d.kind === 'Project') as ProjectDocument).spec.region = 'changed';
    const second = await loadManifests(root, { parseCache: cache });
    expect(cache.hits).toBe(2);
    expect((second.documents.find((d) => d.kind === 'Project') as ProjectDocument).spec.region).toBe('eu-west-1');
  });

  it('holds at most its bound of text, dropping the least recently used files first', async () => {
    const files = { 'org.yaml': ORG, 'a.yaml': project('a'), 'b.yaml': project('b') };
    const root = tree(files);
    // Room for two of the three files.
    const cache = new ParseCache(ORG.length + project('a').length + 1);
    await loadManifests(root, { parseCache: cache });
    expect(cache.size).toBe(2);
    await loadManifests(root, { parseCache: cache });
    expect(cache.hits).toBeLessThan(3);
    expect(cache.size).toBe(2);
  });

  it('does not keep a file with errors: its errors are found and located again on the next load', async () => {
    const root = tree({ 'org.yaml': ORG, 'bad.yaml': 'kind: [\n' });
    const cache = new ParseCache();
    const first = await loadManifests(root, { parseCache: cache });
    const second = await loadManifests(root, { parseCache: cache });
    expect(first.errors.length).toBeGreaterThan(0);
    expect(second.errors).toEqual(first.errors);
    expect(cache.size).toBe(1);
  });
});
