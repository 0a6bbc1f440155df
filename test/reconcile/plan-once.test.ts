// The plan is made once: a new project's entries are applied as planned after the readiness
// wait, a project that exists but cannot be read is pending (never planned blind), and the
// read-back after the writes is a step of the apply with an outcome of its own.
import { afterEach, describe, expect, it } from 'vitest';
import { renderText } from '../../src/reconcile/render/text.js';
import { isChange } from '../../src/reconcile/summary.js';
import { ORG, project, startHarness, type Harness } from './helpers/fleet.js';

const CONFIG = `  auth:
    site_url: https://shop.example
  restapi:
    max_rows: 500
`;
/** The reads a plan of the two sections above makes (one GET each). */
const SECTION_READS = ['/v1/projects/{ref}/config/auth', '/v1/projects/{ref}/restapi'];

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const apiRequests = (harness: Harness, since = 0) => harness.emulator.requests().slice(since).filter((r) => !r.path.startsWith('/_emulator'));

describe('a new project', () => {
  it("is configured with the dry run's entries, as planned: no section is read before its write", async () => {
    h = await startHarness({ DB_PASS: 'plan-once-db-pass-1' });
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', CONFIG) });
    const dry = await h.pass({ dryRun: true });
    const planned = dry.plan.entries.filter(isChange).map((e) => `${e.id} ${e.action}`).sort();
    expect(planned).toContain('ProjectAuth/shop/auth create');

    const since = h.emulator.requests().length;
    const applied = await h.pass();
    expect(applied.result).toBe('success');
    const writes = applied.outcomes.filter((o) => o.action !== 'wait' && o.action !== 'verify');
    expect(writes.map((o) => `${o.entryId} ${o.action}`).sort()).toEqual(planned);
    expect(applied.plan.entries.filter(isChange).map((e) => `${e.id} ${e.action}`).sort()).toEqual(planned);

    // Every section read of the apply comes after the last write: it is the read-back.
    const log = apiRequests(h, since);
    const lastWrite = log.map((r) => r.method !== 'GET').lastIndexOf(true);
    const firstRead = log.findIndex((r) => r.method === 'GET' && SECTION_READS.includes(r.route));
    expect(firstRead).toBeGreaterThan(lastWrite);
    expect(log.filter((r) => r.method === 'GET' && SECTION_READS.includes(r.route)).map((r) => r.route).sort()).toEqual([...SECTION_READS].sort());
    expect(applied.outcomes.filter((o) => o.action === 'wait' || o.action === 'verify').map((o) => `${o.entryId} ${o.result}`)).toEqual([
      'Project/shop#ready success',
      'Project/shop#verify success',
    ]);
    expect(renderText(applied, { color: false })).toContain('Read back the writes of 1 project: 1 confirmed.');
  });

  it('fails the pass when the read-back cannot be made: the writes are not confirmed', async () => {
    h = await startHarness({ DB_PASS: 'plan-once-db-pass-2' });
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', CONFIG) });
    h.emulator.setFaults({ rules: [{ route: '/v1/projects/{ref}/config/auth', method: 'GET', errorRate: 1, errorStatus: 503 }] });
    const result = await h.pass();
    expect(result.result).toBe('failed');
    const byId = Object.fromEntries(result.outcomes.map((o) => [o.entryId, o]));
    expect(byId['ProjectAuth/shop/auth']!.result).toBe('success');
    expect(byId['Project/shop#verify']).toMatchObject({ action: 'verify', result: 'failed', error: { type: 'VerificationError' } });
    expect(byId['Project/shop#verify']!.error!.message).toContain('not confirmed');
    const text = renderText(result, { color: false });
    expect(text).toContain('1 not confirmed');
    expect(text).toContain('x Project/shop#verify failed');
  });
});

describe('a project that exists but is not running', () => {
  it('is pending with no read of its sections; a saved plan writes nothing to it; a direct apply plans it once it runs', async () => {
    h = await startHarness({ DB_PASS: 'plan-once-db-pass-3' }, { durations: { projectCreate: 600_000 } });
    await h.write({ 'org.yaml': ORG, 'shop.yaml': project('shop', CONFIG) });
    // Created; it does not come up within this pass's wait.
    const first = await h.pass({ wait: { initialDelayMs: 1000, maxDelayMs: 5000, timeoutMs: 30_000 } });
    expect(first.outcomes.find((o) => o.entryId === 'Project/shop')!.result).toBe('success');
    expect((await h.client.api.listAllProjects())[0]!.status).toBe('COMING_UP');

    const since = h.emulator.requests().length;
    const dry = await h.pass({ dryRun: true });
    const shop = dry.plan.entries.filter((e) => e.project === 'shop');
    expect(shop.map((e) => e.id).sort()).toEqual(['ProjectAuth/shop/auth', 'ProjectRestapi/shop/restapi']);
    for (const entry of shop) {
      expect(entry).toMatchObject({ action: 'noop', pending: true, changes: [] });
      expect(entry.reason).toBe('the project is COMING_UP: its configuration is planned once it runs');
    }
    expect(dry.plan.hasChanges).toBe(false);
    expect(apiRequests(h, since).map((r) => r.route)).toEqual(['/v1/projects']);

    // A saved plan of those placeholders applies what it holds: nothing for the project.
    const mark = h.emulator.requests().length;
    const saved = await h.pass({ savedPlan: { check: () => [] } });
    expect(saved.result).toBe('success');
    expect(apiRequests(h, mark).filter((r) => r.method !== 'GET')).toEqual([]);
    expect(saved.outcomes).toEqual([]);

    // A direct apply waits until the project runs, then plans its sections (their first plan) and writes them.
    const direct = await h.pass();
    expect(direct.result).toBe('success');
    expect(direct.outcomes.map((o) => `${o.entryId} ${o.action} ${o.result}`)).toEqual([
      'Project/shop#ready wait success',
      'ProjectAuth/shop/auth update success',
      'ProjectRestapi/shop/restapi update success',
      'Project/shop#verify verify success',
    ]);
    const ref = (await h.client.api.listAllProjects())[0]!.ref;
    expect((await h.client.api.getAuthServiceConfig(ref)).site_url).toBe('https://shop.example');
    expect((await h.pass({ dryRun: true })).plan.hasChanges).toBe(false);
  });
});
