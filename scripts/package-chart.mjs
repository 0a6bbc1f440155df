#!/usr/bin/env node
// Packages the Helm chart (helm/reconciler) as it is published with a release:
//   node scripts/package-chart.mjs --image REPOSITORY [OUT_DIR]     (OUT_DIR default: the current directory)
// The chart's `version` and `appVersion` become the package's version (package.json), and its
// default image becomes REPOSITORY (the image the release workflow pushes, for example
// `ghcr.io/acme/fleet-reconciler`) with the tag equal to that version, so `helm install` of the
// published chart needs no image values. The checkout's chart is not changed: a copy is
// packaged. helm is the one named by $HELM, or `helm` on PATH. Prints the chart archive's path,
// and nothing else, on standard output.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const fail = (message) => {
  process.stderr.write(`package-chart: ${message}\n`);
  process.exit(1);
};
const flag = args.indexOf('--image');
if (flag === -1 || !args[flag + 1]) fail('--image REPOSITORY is required (for example ghcr.io/OWNER/REPO)');
const image = args[flag + 1];
args.splice(flag, 2);
// An OCI repository name: lower case, no tag or digest (the tag is the package's version).
if (!/^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+$/.test(image)) {
  fail(`--image ${image} is not an image repository without a tag (lower case, like ghcr.io/owner/repo)`);
}
const out = resolve(args[0] ?? '.');
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const helm = process.env.HELM || 'helm';

mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'fleet-reconciler-chart-'));
try {
  const chart = join(work, 'reconciler');
  cpSync(join(root, 'helm', 'reconciler'), chart, { recursive: true });
  const edit = (file, change) => {
    const document = parseDocument(readFileSync(file, 'utf8'));
    change(document);
    writeFileSync(file, document.toString());
  };
  edit(join(chart, 'Chart.yaml'), (document) => {
    document.set('version', version);
    document.set('appVersion', version);
  });
  edit(join(chart, 'values.yaml'), (document) => {
    document.setIn(['image', 'repository'], image);
    document.setIn(['image', 'tag'], version);
  });
  const text = execFileSync(helm, ['package', chart, '--destination', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  // "Successfully packaged chart and saved it to: PATH"
  const archive = text.trim().split('\n').pop().replace(/^.*saved it to: /, '');
  process.stdout.write(`${archive}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
