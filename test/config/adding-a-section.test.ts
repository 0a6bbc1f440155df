// docs/development.md, "Adding a configuration section", says a new section is one module and
// one registry line. This registers a section in memory (no file of the project changes) and
// shows the schema builder (hence the types and the field reference), `servicesNeeded` and
// the export pick it up, the export over real HTTP against the emulator.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/api/auth.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { renderFieldReference } from '../../src/manifests/schema-docs.js';
import { buildSchemas, sectionsInSpecOrder, SectionOrderError, type SchemaSection } from '../../src/manifests/schema-source.js';
import { renderSchemaTypes } from '../../src/manifests/schema-typegen.js';
import type { ProjectDocument } from '../../src/manifests/types.js';
import { exportFleet } from '../../src/reconcile/export.js';
import { POOLER_LIST } from '../../src/reconcile/kinds/config/pooler-list.js';
import type { ConfigSection } from '../../src/reconcile/kinds/config/section.js';
import { servicesNeeded } from '../../src/reconcile/project-readiness.js';
import { CONFIG_SECTIONS } from '../../src/reconcile/registry.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';
import { REPO } from '../manifests/helpers.js';
import { completeFleet, exportSeed } from '../reconcile/helpers/export-seed.js';

/** A made-up section: the count of the project's poolers, read from the list the pooler section reads too. */
const poolCount: ConfigSection<'ProjectPoolCount'> = {
  kind: 'ProjectPoolCount',
  key: 'pool_count',
  schema: {
    after: 'read_replicas',
    property: { description: 'How many poolers the project has.', $ref: '#/$defs/PoolCountSpec' },
    defs: () => ({
      PoolCountSpec: {
        title: 'PoolCountSpec',
        description: 'The number of poolers.',
        type: 'object',
        properties: { count: { type: 'integer', minimum: 0, description: 'Poolers, the primary one included.' } },
        required: ['count'],
        additionalProperties: false,
      },
    }),
  },
  services: ['pooler', 'example'],
  manages: () => false,
  plan: async () => [],
  apply: async () => undefined,
  async export({ api, ref, read }) {
    const poolers = await read(() => api.getPoolerConfig(ref), POOLER_LIST);
    return poolers === undefined ? undefined : { count: poolers.length };
  },
};

const WITH_EXTRA = [...CONFIG_SECTIONS, poolCount];
const openapi = JSON.parse(readFileSync(join(REPO, 'schemas/api/openapi.json'), 'utf8'));

function project(spec: Record<string, unknown>): ProjectDocument {
  return {
    apiVersion: 'reconciler/v1',
    kind: 'Project',
    metadata: { name: 'shop' },
    spec: { organization: 'acme', region: 'eu-west-1', ...spec },
    source: { file: 'shop.yaml', line: 1, column: 1, dir: REPO },
  } as ProjectDocument;
}

describe('a configuration section registered in one place', () => {
  it('is in the Project schema: its field where `after` puts it, its definition, nothing else changed', () => {
    const before = buildSchemas(openapi, CONFIG_SECTIONS).Project as { properties: { spec: unknown }; $defs: Record<string, { properties?: Record<string, unknown> }> };
    const after = buildSchemas(openapi, WITH_EXTRA).Project as typeof before;
    const fields = Object.keys(after.$defs.ProjectSpec!.properties!);
    expect(fields.slice(fields.indexOf('read_replicas'), fields.indexOf('read_replicas') + 3)).toEqual(['read_replicas', 'pool_count', 'prune']);
    expect(after.$defs.ProjectSpec!.properties!.pool_count).toEqual(poolCount.schema.property);
    expect(after.$defs.PoolCountSpec).toEqual(poolCount.schema.defs!(openapi).PoolCountSpec);

    const { pool_count: _added, ...rest } = after.$defs.ProjectSpec!.properties!;
    expect(rest).toEqual(before.$defs.ProjectSpec!.properties);
    const { PoolCountSpec: _def, ProjectSpec: _spec, ...otherDefs } = after.$defs;
    const { ProjectSpec: _specBefore, ...otherDefsBefore } = before.$defs;
    expect(otherDefs).toEqual(otherDefsBefore);
  });

  it('is in the generated types and the field reference (both made from the schemas)', () => {
    const schemas = buildSchemas(openapi, WITH_EXTRA);
    const types = renderSchemaTypes({ 'schemas/project.schema.json': schemas.Project }, 'test');
    expect(types).toMatch(/pool_count\?: PoolCountSpec;/);
    const reference = renderFieldReference(schemas).get('project.md')!;
    expect(reference).toContain('pool_count');
    expect(reference).toContain('How many poolers the project has.');
  });

  it('adds its services to what a new project waits for, only when the manifest declares it', () => {
    expect(servicesNeeded(project({ pool_count: { count: 1 } }), [], WITH_EXTRA).sort()).toEqual(['db', 'example', 'pooler']);
    expect(servicesNeeded(project({}), [], WITH_EXTRA)).toEqual(['db']);
    // The registry's own sections: auth, rest, storage and pooler each name their service.
    expect(servicesNeeded(project({ auth: {}, restapi: {}, storage: {}, pooler: {}, ssl_enforcement: { database: true } }), []).sort()).toEqual(['auth', 'db', 'pooler', 'rest', 'storage']);
  });

  it('refuses an order it cannot follow, naming the section', () => {
    const section = (key: string, after: string): SchemaSection => ({ key, schema: { after, property: {} } });
    expect(() => sectionsInSpecOrder([section('a', 'nowhere')])).toThrow(new SectionOrderError('configuration section `a` follows `nowhere`, which is not a Project spec field'));
    expect(() => sectionsInSpecOrder([section('a', 'paused'), section('b', 'paused')])).toThrow(SectionOrderError);
    expect(() => sectionsInSpecOrder([section('region', 'paused')])).toThrow(/`region` is declared twice/);
    expect(sectionsInSpecOrder([section('b', 'a'), section('a', 'paused')]).map((s) => s.key)).toEqual(['a', 'b']);
  });
});

describe('a configuration section registered in one place: export', () => {
  let emulator: RunningEmulator;
  let client: ApiClient;

  beforeAll(async () => {
    const clock = new ManualClock(Date.now());
    emulator = await startEmulator({ port: 0, clock, seed: exportSeed(), rateLimit: { limit: 100_000, windowMs: 60_000 } });
    client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 100_000, windowMs: 60_000 } });
    await completeFleet(client, clock);
  });

  afterAll(async () => {
    await client?.close();
    await emulator?.close();
  });

  const exported = async (sections?: readonly ConfigSection[]) => {
    const since = emulator.requests().length;
    const result = await exportFleet({ api: client.api, log: silentLogger, functions: false, ...(sections ? { sections } : {}) });
    const requests = emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));
    const projects = result.documents.filter((d) => d.document.kind === 'Project').map((d) => d.document.spec as Record<string, unknown>);
    return { projects, requests };
  };

  it('exports the section of every readable project, sharing the pooler list read (no extra request)', async () => {
    const plain = await exported();
    const extended = await exported(WITH_EXTRA);
    expect(extended.requests.map((r) => `${r.method} ${r.route}`)).toEqual(plain.requests.map((r) => `${r.method} ${r.route}`));
    expect(extended.projects.length).toBeGreaterThan(0);
    for (const [index, spec] of extended.projects.entries()) {
      const { pool_count: count, ...rest } = spec;
      expect(rest).toEqual(plain.projects[index]);
      expect(count).toEqual({ count: expect.any(Number) });
      // Its field comes where the schema puts it: after every registry section's field.
      expect(Object.keys(spec).at(-1)).toBe('pool_count');
    }
  });
});
