// The ProjectSet kind while loading: generators (list, values directory, matrix), the
// substitution syntax, overrides as a JSON merge patch, identity by key, and errors that name
// the template and the element.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { checkSecretReferences } from '../../src/manifests/check-refs.js';
import { mergePatch, substitute } from '../../src/manifests/project-set.js';
import type { ProjectDocument } from '../../src/manifests/types.js';
import { cleanupTrees, ORG, tree } from './helpers.js';

afterAll(cleanupTrees);

function set(generators: string, template = TEMPLATE, extra = ''): string {
  return `apiVersion: reconciler/v1
kind: ProjectSet
metadata:
  name: tenants
spec:${extra}
  generators:
${generators}
  template:
${template}`;
}

const TEMPLATE = `    metadata:
      name: "\${tenant}-prod"
      labels: { tier: tenant, ring: "\${ring}" }
    spec:
      organization: acme
      region: eu-west-1
      postgres: { max_connections: "\${pool}" }
`;

const projects = (documents: readonly { kind: string }[]) => documents.filter((d): d is ProjectDocument => d.kind === 'Project');

describe('substitution', () => {
  const vars = new Map<string, string | number | boolean>([['tenant', 'acme-corp'], ['pool', 200], ['on', true]]);
  it('replaces ${name}; a string that is one reference keeps the value\'s type', () => {
    expect(substitute('${tenant}-prod', vars)).toEqual({ value: 'acme-corp-prod' });
    expect(substitute('${pool}', vars)).toEqual({ value: 200 });
    expect(substitute('${on}', vars)).toEqual({ value: true });
    expect(substitute('pool ${pool}', vars)).toEqual({ value: 'pool 200' });
  });
  it('writes $${ as a literal ${ and leaves any other $ alone', () => {
    expect(substitute('$${tenant} costs $5', vars)).toEqual({ value: '${tenant} costs $5' });
  });
  it('writes a value as an environment variable name inside valueFrom.env', () => {
    expect(substitute('DB_PASS_${tenant}', vars, true)).toEqual({ value: 'DB_PASS_ACME_CORP' });
  });
  it('leaves a string without `${` as it is, and reads `$`, `$${` and `${name}` anywhere in a string', () => {
    // The reading of a string one character at a time, as the syntax is written.
    const reference = (text: string): string | undefined => {
      let out = '';
      for (let i = 0; i < text.length; i++) {
        if (text.startsWith('$${', i)) {
          out += '${';
          i += 2;
        } else if (text.startsWith('${', i)) {
          const end = text.indexOf('}', i + 2);
          const value = end < 0 ? undefined : vars.get(text.slice(i + 2, end));
          if (value === undefined) return undefined;
          out += String(value);
          i = end;
        } else out += text[i];
      }
      return out;
    };
    const text = fc.array(fc.constantFrom('$', '{', '}', 'tenant', 'pool', 'x', '-'), { maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (t) => {
        const result = substitute(t, vars);
        if (!t.includes('${')) expect(result).toEqual({ value: t });
        const expected = reference(t);
        if (expected === undefined) expect(result).toHaveProperty('error');
        else expect(String((result as { value: unknown }).value)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
  it('refuses an unknown variable (with the nearest name), an expression and an unclosed reference', () => {
    expect(substitute('${tenat}', vars)).toMatchObject({ error: 'unknown variable `tenat`', hint: 'did you mean `tenant`?' });
    expect(substitute('${tenant | upper}', vars)).toMatchObject({ error: expect.stringContaining('no expressions, no functions') });
    expect(substitute('${tenant', vars)).toMatchObject({ error: expect.stringContaining('without a closing') });
  });
});

describe('mergePatch (RFC 7386)', () => {
  it('follows the examples of the RFC', () => {
    expect(mergePatch({ a: 'b' }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: 'b' }, { b: 'c' })).toEqual({ a: 'b', b: 'c' });
    expect(mergePatch({ a: 'b' }, { a: null })).toEqual({});
    expect(mergePatch({ a: 'b', b: 'c' }, { a: null })).toEqual({ b: 'c' });
    expect(mergePatch({ a: ['b'] }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: 'c' }, { a: ['b'] })).toEqual({ a: ['b'] });
    expect(mergePatch({ a: { b: 'c' } }, { a: { b: 'd', c: null } })).toEqual({ a: { b: 'd' } });
    expect(mergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(mergePatch(['a', 'b'], ['c', 'd'])).toEqual(['c', 'd']);
    expect(mergePatch({ a: 'b' }, ['c'])).toEqual(['c']);
    expect(mergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
    expect(mergePatch([1, 2], { a: 'b', c: null })).toEqual({ a: 'b' });
    expect(mergePatch({}, { a: { bb: { ccc: null } } })).toEqual({ a: { bb: {} } });
  });

  it('keeps a `__proto__` key as a field of its own, never as the prototype', () => {
    const merged = mergePatch({ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(merged.polluted).toBeUndefined();
    expect(Object.keys(merged)).toEqual(['a', '__proto__']);
    expect(Object.getOwnPropertyDescriptor(merged, '__proto__')?.value).toEqual({ polluted: true });
  });
});

describe('loading a ProjectSet', () => {
  it('makes one ordinary Project per element of a list, with labels, typed values and the element\'s overrides', async () => {
    const root = tree({
      'org.yaml': ORG,
      'set.yaml': set(`    - list:
        keyField: tenant
        elements:
          - { tenant: acme, ring: canary, pool: 100 }
          - { tenant: globex, ring: late, pool: 120, overrides: { spec: { region: us-east-1, postgres: { statement_timeout: 10s } } } }
`),
    });
    const loaded = await loadManifests(root);
    expect(loaded.errors).toEqual([]);
    const made = projects(loaded.documents);
    expect(made.map((p) => [p.metadata.name, p.metadata.labels, p.spec.region, p.spec.postgres])).toEqual([
      ['acme-prod', { tier: 'tenant', ring: 'canary' }, 'eu-west-1', { max_connections: 100 }],
      ['globex-prod', { tier: 'tenant', ring: 'late' }, 'us-east-1', { max_connections: 120, statement_timeout: '10s' }],
    ]);
    expect(made[1]!.source).toMatchObject({ file: 'set.yaml', set: { set: 'tenants', key: 'globex', element: 'element 1 of spec.generators[0].list (set.yaml:11)' } });
    expect(loaded.documents.some((d) => (d.kind as string) === 'ProjectSet')).toBe(false);
    expect(loaded.sets).toEqual([{ name: 'tenants', file: 'set.yaml', line: 1, projects: [
      { name: 'acme-prod', key: 'acme', element: 'element 0 of spec.generators[0].list (set.yaml:10)' },
      { name: 'globex-prod', key: 'globex', element: 'element 1 of spec.generators[0].list (set.yaml:11)' },
    ] }]);
  });

  it('makes the same documents whatever the order of the elements', async () => {
    const a = '          - { key: a, tenant: acme, ring: r, pool: 1 }\n';
    const b = '          - { key: b, tenant: globex, ring: r, pool: 2 }\n';
    const load = async (elements: string) => (await loadManifests(tree({ 'org.yaml': ORG, 'set.yaml': set(`    - list:\n        elements:\n${elements}`) }))).documents;
    const strip = (documents: Awaited<ReturnType<typeof load>>) => documents.map((d) => ({ kind: d.kind, metadata: d.metadata, spec: d.spec, key: d.source.set?.key }));
    expect(strip(await load(a + b))).toEqual(strip(await load(b + a)));
  });

  it('reads a values directory through the discovery: one element per file, keyed by the file name', async () => {
    const root = tree({
      'org.yaml': ORG,
      'set.yaml': set('    - values: { path: tenants }\n'),
      'tenants/acme.yaml': 'tenant: acme\nring: canary\npool: 100\n',
      'tenants/eu/globex.yml': 'tenant: globex\nring: late\npool: 120\noverrides:\n  metadata: { labels: { ring: null, vip: "yes" } }\n',
      'tenants/ignored.yaml': 'tenant: ignored\n',
      '.reconcileignore': 'tenants/ignored.yaml\n',
    });
    const loaded = await loadManifests(root);
    expect(loaded.errors).toEqual([]);
    expect(projects(loaded.documents).map((p) => [p.metadata.name, p.source.set?.key, p.source.set?.element, p.metadata.labels])).toEqual([
      ['acme-prod', 'acme', 'tenants/acme.yaml:1', { tier: 'tenant', ring: 'canary' }],
      ['globex-prod', 'globex', 'tenants/eu/globex.yml:1', { tier: 'tenant', vip: 'yes' }],
    ]);
  });

  it('combines two generators in a matrix: the values of both, key `<first>.<second>`', async () => {
    const root = tree({
      'org.yaml': ORG,
      'set.yaml': set(`    - matrix:
        generators:
          - values: { path: tenants }
          - list: { elements: [ { key: prod, env: prod, pool: 100 }, { key: stage, env: stage, pool: 10 } ] }
`, TEMPLATE.replace('${tenant}-prod', '${tenant}-${env}')),
      'tenants/acme.yaml': 'tenant: acme\nring: canary\n',
      'tenants/globex.yaml': 'tenant: globex\nring: late\n',
    });
    const loaded = await loadManifests(root);
    expect(loaded.errors).toEqual([]);
    expect(projects(loaded.documents).map((p) => `${p.metadata.name}@${p.source.set?.key}:${String(p.spec.postgres?.max_connections)}`)).toEqual([
      'acme-prod@acme.prod:100', 'acme-stage@acme.stage:10', 'globex-prod@globex.prod:100', 'globex-stage@globex.stage:10',
    ]);
  });

  it('makes the Secrets, Function and SsoProvider documents of each project, secrets named by the template', async () => {
    const template = `${TEMPLATE}    secrets:
      spec:
        values:
          API_KEY: { valueFrom: { env: "API_KEY_\${tenant}" } }
`;
    const root = tree({ 'org.yaml': ORG, 'set.yaml': set('    - list: { elements: [ { key: acme-corp, tenant: acme-corp, ring: r, pool: 5 } ] }\n', template) });
    const loaded = await loadManifests(root);
    expect(loaded.errors).toEqual([]);
    const secrets = loaded.documents.find((d) => d.kind === 'Secrets')!;
    expect(secrets.metadata.name).toBe('acme-corp-prod');
    expect(secrets.spec).toEqual({ project: 'acme-corp-prod', values: { API_KEY: { valueFrom: { env: 'API_KEY_ACME_CORP' } } } });
  });

  describe('errors', () => {
    const errorsOf = async (files: Record<string, string>) => (await loadManifests(tree({ 'org.yaml': ORG, ...files }))).errors;

    it('an element without a key, never its position', async () => {
      const errors = await errorsOf({ 'set.yaml': set('    - list: { elements: [ { tenant: acme, ring: r, pool: 1 } ] }\n') });
      expect(errors).toEqual([expect.objectContaining({ file: 'set.yaml', line: 7, message: expect.stringContaining('the element has no key') })]);
    });

    it('two elements with one key, naming both', async () => {
      const errors = await errorsOf({ 'set.yaml': set('    - list: { keyField: tenant, elements: [ { tenant: acme, ring: r, pool: 1 } ] }\n    - values: { path: t }\n'), 't/acme.yaml': 'tenant: acme\nring: r\npool: 2\n' });
      expect(errors.map((e) => e.message)).toEqual(['two elements have the key `acme`: element 0 of spec.generators[0].list (set.yaml:7) and t/acme.yaml:1']);
    });

    it('a values directory that does not exist, or holds a manifest', async () => {
      expect((await errorsOf({ 'set.yaml': set('    - values: { path: tenants }\n') }))[0]).toMatchObject({ file: 'set.yaml', path: '/spec/generators/0/values/path', message: 'the values directory `tenants` does not exist' });
      const errors = await errorsOf({ 'set.yaml': set('    - values: { path: tenants }\n'), 'tenants/org.yaml': ORG.replace('acme', 'other') });
      expect(errors[0]).toMatchObject({ file: 'tenants/org.yaml', message: expect.stringContaining('a manifest document in the values directory `tenants`') });
    });

    it('a matrix above the limit is refused by its count, before any combination is made', async () => {
      // Every combination would fail (both generators set `ring`, differently): the limit speaks first,
      // so two long lists never build their whole product.
      const list = (name: string, ring: string) => `          - list: { keyField: ${name}, elements: [ ${Array.from({ length: 40 }, (_, i) => `{ ${name}: ${name}${i}, ring: ${ring} }`).join(', ')} ] }\n`;
      const errors = await errorsOf({ 'set.yaml': set(`    - matrix:\n        generators:\n${list('tenant', 'a')}${list('env', 'b')}`, TEMPLATE, '\n  maxProjects: 1000') });
      expect(errors.map((e) => `${e.file} ${e.path} ${e.message}`)).toEqual([expect.stringContaining('set.yaml /spec/maxProjects the generators make 1600 projects, more than this set\'s limit of 1000')]);
    });

    it('an invalid set: its own errors alone, its values files not reported as documents without a kind', async () => {
      const errors = await errorsOf({ 'set.yaml': set('    - values: { path: tenants }\n', TEMPLATE, '\n  maxProjects: many'), 'tenants/acme.yaml': 'tenant: acme\n' });
      expect(errors.map((e) => `${e.file} ${e.path}`)).toEqual(['set.yaml /spec/maxProjects']);
    });

    it('a generator that makes no element', async () => {
      const errors = await errorsOf({ 'set.yaml': set('    - list: { elements: [] }\n') });
      expect(errors[0]!.message).toContain('generator 0 makes no element');
    });

    it('a value that is not a scalar, and a values file nobody reads', async () => {
      expect((await errorsOf({ 'set.yaml': set('    - values: { path: t }\n'), 't/acme.yaml': 'tenant: acme\nring: [a, b]\npool: 1\n' }))[0]).toMatchObject({ file: 't/acme.yaml', line: 2, message: expect.stringContaining('must be a string, a number or a boolean') });
      expect((await errorsOf({ 'stray.yaml': 'tenant: acme\n' }))[0]!.message).toContain('missing required field `kind`');
    });

    it('an override of an unknown field `__proto__` is refused as unknown, not dropped', async () => {
      const errors = await errorsOf({ 'set.yaml': set('    - values: { path: t }\n'), 't/acme.yaml': 'tenant: acme\nring: r\npool: 1\noverrides:\n  spec:\n    __proto__: { region: mars-1 }\n' });
      expect(errors).toEqual([expect.objectContaining({ file: 't/acme.yaml', path: '/spec/__proto__' })]);
    });

    it('a generated document that fails its schema, located in the override that wrote the field', async () => {
      const errors = await errorsOf({ 'set.yaml': set('    - values: { path: t }\n'), 't/acme.yaml': 'tenant: acme\nring: r\npool: 1\noverrides:\n  spec:\n    region: mars-1\n' });
      expect(errors).toEqual([expect.objectContaining({ file: 't/acme.yaml', line: 6, path: '/spec/region', message: expect.stringContaining('(ProjectSet `tenants`, element `acme`: t/acme.yaml:1)') })]);
    });

    it('found after loading (an unresolved secret reference): the template\'s line, or the values file of the override that set the field', async () => {
      const template = `${TEMPLATE}      db_pass: { valueFrom: { env: DB_PASS } }\n`;
      const loaded = await loadManifests(tree({
        'org.yaml': ORG,
        'set.yaml': set('    - values: { path: t }\n', template),
        't/acme.yaml': 'tenant: acme\nring: r\npool: 1\n',
        't/globex.yaml': 'tenant: globex\nring: r\npool: 2\noverrides:\n  spec:\n    db_pass: { valueFrom: { env: GLOBEX_PASS } }\n',
      }));
      expect(loaded.errors).toEqual([]);
      const errors = checkSecretReferences(loaded, { env: {} });
      expect(errors.map((e) => `${e.file}:${e.line} ${e.path} ${e.reference}`)).toEqual(['set.yaml:17 /spec/db_pass env:DB_PASS', 't/globex.yaml:6 /spec/db_pass env:GLOBEX_PASS']);
      expect(errors[1]!.message).toContain('(ProjectSet `tenants`, element `globex`: t/globex.yaml:1)');
    });

    it('a generated project that a hand-written Project also declares', async () => {
      const errors = await errorsOf({
        'set.yaml': set('    - list: { keyField: tenant, elements: [ { tenant: acme, ring: r, pool: 1 } ] }\n'),
        'acme.yaml': 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: acme-prod\nspec:\n  organization: acme\n  region: eu-west-1\n',
      });
      expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('duplicate Project `acme-prod`')]);
    });
  });
});
