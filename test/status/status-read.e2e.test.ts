// `reconcile status` as an operator runs it (the built command) against the built daemon over
// a converged fleet of 30 projects on the emulator: it answers from the daemon's view
// (`RECONCILE_DAEMON_URL`, a bearer token) and, once the daemon stopped, from the state
// directory, with no API request in the emulator's log and no secret anywhere. Its wall time is
// a figure of `npm run bench`, not asserted here.
import { describe, expect, it } from 'vitest';
import { statusAgainstDaemon } from '../../src/bench/status-read.js';
import { assertBuilt, NODE } from '../daemon/daemon-process.js';

const STATUS_TOKEN = 'status-token-canary-3b9e71d2c4a8';

describe('reconcile status without the API (built command, built daemon, emulator)', () => {
  it('reads 30 projects from the daemon and from the state directory with zero API requests', async () => {
    assertBuilt();
    const figures = await statusAgainstDaemon({ projects: 30, node: NODE, statusToken: STATUS_TOKEN });
    for (const [source, run] of [
      ['daemon', figures.fromDaemon],
      ['state-dir', figures.fromStateDir],
    ] as const) {
      expect(run.apiRequests, source).toBe(0);
      expect(run.view.source).toBe(source);
      expect(run.view.projects).toHaveLength(30);
      expect(run.view.projects.every((project) => project.state === 'in_sync'), source).toBe(true);
      expect(run.view.summary.projectStates.in_sync).toBe(30);
      const project = run.view.projects[0]!;
      expect(project.resources.map((resource) => resource.kind)).toEqual(expect.arrayContaining(['Project', 'ProjectAuth', 'Secret']));
      expect(project.observedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(typeof project.ageSeconds).toBe('number');
    }
    expect(figures.fromDaemon.view.freshness.resync).toBe('0 0 1 1 *');
    for (const secret of figures.secrets) expect(figures.transcript).not.toContain(secret);
  }, 180_000);
});
