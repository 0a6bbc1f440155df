// A failed migration backs off through the engine: a pass of priority `drift` (the daemon's
// scheduled re-check) does not run it again before its time and says when it will; a pass of
// any other priority (a new revision, `reconcile trigger`, a run by hand) runs it at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DURATIONS, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { createClient, type ApiClient } from '../../src/api/client.js';
import { staticToken } from '../../src/api/auth.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { runPass } from '../../src/reconcile/engine.js';
import { RETRY_FIRST_MS } from '../../src/reconcile/kinds/migrations.js';
import { ManualClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

const QUERY = '/v1/projects/{ref}/database/query';
let emulator: RunningEmulator;
let client: ApiClient;
let root: string;
const clock = new ManualClock(Date.UTC(2026, 10, 28, 10));

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: { limit: 100_000, windowMs: 1000 }, openDatabases: 1 });
  root = await mkdtemp(join(tmpdir(), 'migration-backoff-'));
  client = await createClient({ baseUrl: emulator.url, auth: staticToken(emulator.token), rate: { limit: 50_000, windowMs: 1000 }, stateDir: join(root, 'state') });
  const org = (await client.api.listAllOrganizations())[0]?.id ?? (await client.api.createAnOrganization({ name: 'acme' })).id;
  const created = await client.api.createAProject({ name: 'shop', organization_id: org, region: 'eu-west-1', db_pass: 'backoff-db-pass-longer' } as Parameters<typeof client.api.createAProject>[0]);
  emulator.advanceClock(DEFAULT_DURATIONS.projectCreate + DEFAULT_DURATIONS.servicesHealthy + 1);
  await mkdir(join(root, 'manifests/migrations'), { recursive: true });
  await writeFile(join(root, 'manifests/fleet.yaml'), `apiVersion: reconciler/v1
kind: Organization
metadata: { name: acme }
spec: { slug: ${org} }
---
apiVersion: reconciler/v1
kind: Project
metadata: { name: shop }
spec: { organization: acme, ref: ${created.ref ?? created.id}, region: eu-west-1 }
---
apiVersion: reconciler/v1
kind: Migrations
metadata: { name: schema }
spec: { project: shop, path: migrations }
`);
  await writeFile(join(root, 'manifests/migrations/1_broken.sql'), 'create table t (id int);\ninsert into t values (1, 2);\n');
}, 120_000);

afterAll(async () => {
  await client?.close();
  await emulator?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function pass(priority?: 'drift') {
  const manifests = await loadManifests(join(root, 'manifests'));
  const since = emulator.requests().length;
  const result = await runPass({ manifests, client, stateDir: join(root, 'state'), dryRun: false, env: {}, log: silentLogger, clock, ...(priority ? { priority } : {}) });
  const writes = emulator.requests().slice(since).filter((r) => r.route === QUERY && r.sql?.readOnly !== true).length;
  return { result, writes, entry: result.plan.entries.find((e) => e.kind === 'Migration')! };
}

describe('a failed migration through the engine', () => {
  it('drift re-checks wait for the next attempt; a pass of another priority tries at once', async () => {
    const first = await pass('drift');
    expect(first.writes).toBe(1);
    expect(first.result.result).toBe('failed');
    const waiting = await pass('drift');
    expect(waiting.writes).toBe(0);
    expect(waiting.entry).toMatchObject({ action: 'blocked', reason: expect.stringContaining('next attempt at 2026-11-28T10:10:00.000Z') });
    expect(waiting.result.resources.find((r) => r.id === waiting.entry.id)).toMatchObject({ state: 'failed', message: expect.stringContaining('next attempt at') });
    await clock.advance(RETRY_FIRST_MS);
    expect((await pass('drift')).writes).toBe(1);
    // Twice failed: twenty minutes now; a pass that is not a re-check does not wait for them.
    expect((await pass('drift')).entry.reason).toContain('failed 2 times');
    expect((await pass()).writes).toBe(1);
  }, 120_000);
});
