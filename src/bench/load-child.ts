// Runs in its own process so its peak memory is loading's alone: loads a manifests directory
// (every migration file parsed by Postgres's parser), then waits a moment for what V8 does in
// the background after it (compiling code it found hot), and prints the process's peak
// resident memory, MB, and whether the checkout loaded without errors.
import { peakRssMb } from './peak-rss.js';
import { loadManifests } from '../reconcile/load-manifests.js';

const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: load-child MANIFESTS_DIR\n');
  process.exit(1);
}
const set = await loadManifests(dir);
/** Long enough for V8's background compilation of what loading ran (it starts within milliseconds). */
const SETTLE_MS = 2_000;
await new Promise((settle) => setTimeout(settle, SETTLE_MS));
process.stdout.write(JSON.stringify({ peakRssMb: Math.round(peakRssMb()), errors: set.errors.length, documents: set.documents.length }));
