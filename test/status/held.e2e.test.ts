// Held is not drift (built daemon, emulator): a new revision that a rollout holds back for its
// later wave reads `held` with the reason, once, in `GET /status`, the page and
// `reconciler_resource_condition`, while the canary's wave reads `soaking`, the rollout's own state.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { converge, openFleetHarness, type FleetHarness } from '../../src/bench/harness.js';
import type { FleetView } from '../../src/status/fleet-view.js';
import { assertBuilt, DaemonProcess } from '../daemon/daemon-process.js';

let harness: FleetHarness | undefined;
let daemon: DaemonProcess | undefined;

afterAll(async () => {
  await daemon?.stop();
  await harness?.close();
});

const ROLLOUT = `apiVersion: reconciler/v1
kind: Rollout
metadata:
  name: tenants
spec:
  soak: 1h
  waves:
    - name: canary
      selector: { labels: { ring: canary } }
    - name: tenants
      selector: { labels: { ring: tenant } }
`;

describe('a change held for a later wave (built daemon, emulator)', () => {
  it('reads held with its reason, once, beside a soaking canary; never drifted', async () => {
    assertBuilt();
    harness = await openFleetHarness({
      shape: { projects: 2, secrets: 0, functions: 0, sections: ['auth'], labels: (i) => ({ ring: i === 0 ? 'canary' : 'tenant' }) },
      emulatorRate: { limit: 100_000, windowMs: 60_000 },
      clientRate: { limit: 100_000, windowMs: 60_000 },
    });
    await converge(harness);
    const dir = harness.fleet.dir;
    await writeFile(join(dir, 'rollout.yaml'), ROLLOUT);
    const env = { MANAGEMENT_API_URL: harness.emulator.url, MANAGEMENT_API_TOKEN: harness.emulator.token, RECONCILE_LOG_FORMAT: 'json', ...harness.fleet.env };
    daemon = new DaemonProcess([dir, '--watch', '--metrics-addr', '127.0.0.1:0', '--resync', '0 0 1 1 *', '--observe', 'none', '--rate-limit', '1000/1s'], env);
    const url = await daemon.metricsUrl();
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write');
    const [canary, tenant] = harness.fleet.projectNames as [string, string];

    // A new revision for both projects: the canary's wave applies it and soaks; the tenant's waits.
    const mark = daemon.lines.length;
    for (const name of [canary, tenant]) {
      const file = join(dir, 'projects', `${name}.yaml`);
      await writeFile(file, (await readFile(file, 'utf8')).replace('jwt_exp: 3600', 'jwt_exp: 7200'));
    }
    await daemon.waitFor((l) => l.msg === 'pass finished' && l.priority === 'write', { from: mark });
    const view = (await (await fetch(`${url}/status`)).json()) as FleetView;
    const tenantView = view.projects.find((p) => p.name === tenant)!;
    const canaryView = view.projects.find((p) => p.name === canary)!;
    expect(canaryView.state).toBe('in_sync');
    expect(tenantView.state).toBe('held');
    expect(tenantView.resources.find((r) => r.kind === 'ProjectAuth')).toMatchObject({ state: 'held', fields: ['auth.jwt_exp'] });
    expect(tenantView.pending).toEqual([expect.objectContaining({ id: `ProjectAuth/${tenant}/auth`, state: 'held', waitingFor: 'wave' })]);
    expect(tenantView.pending[0]!.reason).toContain('canary');
    expect(view.summary).toMatchObject({ heldChanges: 1, projectStates: { held: 1, drifted: 0 } });
    expect(view.rollouts![0]!.waves.map((w) => [w.name, w.state])).toEqual([['canary', 'soaking'], ['tenants', 'waiting']]);
    expect(view.condition.state).toBe('held');
    expect(view.condition.message).toContain('1 change held (waiting for wave)');
    expect(view.condition.message).toContain('rollout tenants: wave canary soaking');

    const page = await (await fetch(`${url}/`)).text();
    expect(page.match(new RegExp(`ProjectAuth auth</td><td>update</td><td><span class="state state-held">held</span>`, 'g'))).toHaveLength(1);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain(`reconciler_resource_condition{project="${tenant}",kind="ProjectAuth",name="auth",state="held"} 1`);
    expect(metrics).not.toMatch(new RegExp(`reconciler_drift_resources\\{project="${tenant}",kind="ProjectAuth"\\} [1-9]`));
  }, 180_000);
});
