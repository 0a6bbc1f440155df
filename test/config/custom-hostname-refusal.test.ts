// A reverify the service refuses while the DNS records are missing is still pending, not a
// failure; any other error of the reverify is reported.
import { PassState } from '../../src/reconcile/pass-state.js';
import { describe, expect, it } from 'vitest';
import { ManagementApi } from '../../src/api/endpoints.js';
import { InvalidRequestError, TransientError } from '../../src/api/errors.js';
import type { ApiRequest, ApiResponse } from '../../src/api/request.js';
import { customHostnameConfig } from '../../src/reconcile/kinds/config/custom-hostname.js';
import type { KindContext, ProjectScope } from '../../src/reconcile/types.js';
import { ManualClock } from '../../src/util/clock.js';
import { memoryState, projectDocument, silentLog } from './harness.js';

function contextWith(reverifyError: Error): { ctx: KindContext; scope: ProjectScope; sent: string[] } {
  const sent: string[] = [];
  const api = new ManagementApi({
    async call<T>(request: ApiRequest): Promise<ApiResponse<T>> {
      sent.push(`${request.method} ${request.route}`);
      if (request.method === 'GET') {
        return { status: 200, headers: {}, body: { status: '2_initiated', custom_hostname: 'dns.example.org', data: { success: true, errors: [], messages: [], result: {} } } as T };
      }
      throw reverifyError;
    },
  });
  const document = projectDocument('dns', { custom_hostname: { custom_hostname: 'dns.example.org' } });
  const ctx: KindContext = { api, clock: new ManualClock(), state: memoryState(), documents: [document], resolveSecret: async () => '', projectRefs: new Map([['dns', 'dnsrefdnsrefdnsrefdn']]), pass: new PassState(), log: silentLog };
  return { ctx, scope: { name: 'dns', document, documents: [], ref: 'dnsrefdnsrefdnsrefdn', status: 'ACTIVE_HEALTHY' }, sent };
}

describe('custom hostname reverify', () => {
  it('treats a refusal (4xx) as still pending', async () => {
    const refused = new InvalidRequestError({ method: 'POST', route: '/v1/projects/{ref}/custom-hostname/reverify', status: 400, serviceMessage: 'not verified' });
    const { ctx, scope, sent } = contextWith(refused);
    const [planned] = await customHostnameConfig.plan(scope, ctx);
    expect(planned).toMatchObject({ action: 'update', pending: true });
    await expect(customHostnameConfig.apply(planned!, scope, ctx)).resolves.toBeUndefined();
    expect(sent).toContain('POST /v1/projects/{ref}/custom-hostname/reverify');
  });

  it('reports a server error', async () => {
    const broken = new TransientError({ method: 'POST', route: '/v1/projects/{ref}/custom-hostname/reverify', status: 500 }, 'server error', true);
    const { ctx, scope } = contextWith(broken);
    const [planned] = await customHostnameConfig.plan(scope, ctx);
    await expect(customHostnameConfig.apply(planned!, scope, ctx)).rejects.toBeInstanceOf(TransientError);
  });
});
