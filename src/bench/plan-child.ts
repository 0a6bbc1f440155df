// Runs in its own process so its peak memory is the planner's alone: loads a fleet's
// manifests and plans a dry pass over a recording of the API's answers (no I/O).
import { peakRssMb } from './peak-rss.js';
import { readFile } from 'node:fs/promises';
import { loadManifests } from '../reconcile/load-manifests.js';
import { runPass } from '../reconcile/engine.js';
import { silentLogger } from '../util/logger.js';
import { clientOver, replayCaller, type Recording } from './replay.js';

const [dir, recordingFile, stateDir] = process.argv.slice(2);
if (!dir || !recordingFile || !stateDir) {
  process.stderr.write('usage: plan-child MANIFESTS_DIR RECORDING_JSON STATE_DIR\n');
  process.exit(1);
}
const recording = JSON.parse(await readFile(recordingFile, 'utf8')) as Recording;
const t0 = performance.now();
const manifests = await loadManifests(dir);
const t1 = performance.now();
const result = await runPass({ manifests, client: clientOver(replayCaller(recording)), stateDir, dryRun: true, env: process.env, log: silentLogger });
const t2 = performance.now();
if (result.result !== 'success' || result.plan.hasChanges) {
  const failed = result.resources.filter((r) => r.state === 'failed').slice(0, 5);
  const changes = result.plan.entries.filter((e) => e.action !== 'noop').slice(0, 5);
  process.stderr.write(
    `plan over the recording: result ${result.result}, changes ${result.plan.hasChanges}\n` +
      `failed: ${JSON.stringify(failed)}\nchanges: ${JSON.stringify(changes.map((e) => ({ id: e.id, action: e.action, reason: e.reason })))}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  JSON.stringify({
    loadMs: Math.round(t1 - t0),
    planMs: Math.round(t2 - t1),
    peakRssMb: Math.round(peakRssMb()),
  }),
);
