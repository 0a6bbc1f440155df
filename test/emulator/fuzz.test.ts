// Random bodies and query strings against every operation: the emulator never crashes, answers
// every refusal with a JSON {"message"}, and a refused request changes nothing.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specOperations } from '../../src/emulator/openapi.js';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { call, startWithManualClock } from './helpers.js';

const REF = 'fuzzfuzzfuzzfuzzfuzz';
let emulator: RunningEmulator;
// Deleting the project would make the rest of the run a 404 sweep; it has tests of its own.
const operations = specOperations().filter((o) => !o.route.startsWith('/v1/oauth') && o.operationId !== 'v1-delete-a-project');

beforeAll(async () => {
  ({ emulator } = await startWithManualClock({
    rateLimit: { limit: 1_000_000, windowMs: 60_000 },
    seed: {
      organizations: [{ slug: 'fuzzorg', name: 'Fuzz' }],
      projects: [{
        ref: REF, name: 'fuzz', organization: 'fuzzorg', pitr_enabled: true,
        config: { auth: { saml_enabled: true } }, secrets: { KEEP: 'v' },
        functions: [{ slug: 'fn', files: { 'index.ts': 'x' } }], branches: [{ name: 'b1' }],
      }],
    },
  }));
});

afterAll(async () => {
  await emulator.close();
});

const SNAPSHOT_PATHS = [
  '/v1/projects', `/v1/projects/${REF}/config/auth`, `/v1/projects/${REF}/secrets`, `/v1/projects/${REF}/functions`,
  `/v1/projects/${REF}/branches`, `/v1/projects/${REF}/config/database/postgres`, `/v1/projects/${REF}/network-restrictions`,
  `/v1/projects/${REF}/custom-hostname`, `/v1/projects/${REF}/config/auth/sso/providers`, `/v1/projects/${REF}/config/database/pooler`,
  '/v1/organizations',
];

async function snapshot(): Promise<string> {
  const parts = [];
  for (const path of SNAPSHOT_PATHS) parts.push((await call(emulator, 'GET', path)).text);
  return parts.join('\n');
}

describe('emulator fuzz', () => {
  it('never crashes; every refusal is a JSON {"message"} and changes nothing', async () => {
    const branchId = (await call(emulator, 'GET', `/v1/projects/${REF}/branches`)).body[0].id as string;
    const values: Record<string, string> = { ref: REF, branch_id: branchId, slug: 'fuzzorg', function_slug: 'fn', provider_id: 'nope', id: 'nope' };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...operations),
        fc.oneof(fc.jsonValue(), fc.dictionary(fc.constantFrom('name', 'site_url', 'jwt_exp', 'region', 'query', 'root_key', 'branch_name', 'vanity_subdomain', 'custom_hostname', 'dbAllowedCidrs', 'requestedConfig'), fc.jsonValue())),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'),
        fc.string({ maxLength: 30 }),
        async (operation, body, contentType, query) => {
          const before = await snapshot();
          const path = operation.route.replace(/\{(\w+)\}/g, (_, name: string) => values[name]!) + (query ? `?${encodeURIComponent(query)}=${encodeURIComponent(query)}` : '');
          const answer = await call(emulator, operation.method, path, operation.method === 'GET' ? {} : { rawBody: JSON.stringify(body), headers: { 'content-type': contentType } });
          expect(answer.body?.message ?? '', `${operation.method} ${path}`).not.toMatch(/Internal emulator error/);
          if (answer.status >= 400) {
            expect(typeof answer.body?.message, `${operation.method} ${path} ${answer.status}`).toBe('string');
            expect(await snapshot(), `${operation.method} ${path} answered ${answer.status} and changed state`).toBe(before);
          }
        },
      ),
      { numRuns: 150, seed: 20261122 },
    );
    expect((await call(emulator, 'GET', '/v1/organizations')).status).toBe(200);
  });
});
