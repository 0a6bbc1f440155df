#!/usr/bin/env node
// Packs the package as it is published and attached to a release:
//   node scripts/pack-release.mjs [--repository URL] [OUT_DIR]     (OUT_DIR default: the current directory)
// It is `npm pack` of the built project (run `npm run build` first), with the manifest's
// `scripts`, `devDependencies` and `allowScripts` left out: `prepare` builds a checkout of this project, and in
// an installed package npm would only list it as an install script to approve. The package
// therefore has no install-time script at all. `--repository URL` records the source repository
// in the manifest (`repository.url`), which a registry checks a provenance statement against. Prints the tarball's path, and nothing else, on
// standard output.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let repository;
const flag = args.indexOf('--repository');
if (flag !== -1) {
  repository = args[flag + 1];
  if (!repository) {
    process.stderr.write('pack-release: --repository needs a URL\n');
    process.exit(1);
  }
  args.splice(flag, 2);
}
const out = resolve(args[0] ?? '.');
const bin = join(root, 'dist', 'cli', 'bin.js');
if (!existsSync(bin)) {
  process.stderr.write('pack-release: dist/cli/bin.js is missing: run `npm run build` first\n');
  process.exit(1);
}
if ((statSync(bin).mode & 0o111) !== 0o111) {
  process.stderr.write('pack-release: dist/cli/bin.js is not executable: run `npm run build`\n');
  process.exit(1);
}
mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'fleet-reconciler-pack-'));
try {
  const pack = (cwd, destination) => {
    const text = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    return join(destination, JSON.parse(text)[0].filename);
  };
  execFileSync('tar', ['-xzf', pack(root, work), '-C', work]);
  const staged = join(work, 'package');
  const manifest = JSON.parse(readFileSync(join(staged, 'package.json'), 'utf8'));
  delete manifest.scripts;
  delete manifest.devDependencies;
  // npm reads allowScripts from the project being installed, never from a dependency.
  delete manifest.allowScripts;
  if (repository) manifest.repository = { type: 'git', url: repository.startsWith('git+') ? repository : `git+${repository}.git` };
  writeFileSync(join(staged, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  process.stdout.write(`${pack(staged, out)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
