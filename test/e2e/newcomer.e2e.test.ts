// The README's two commands on a fresh clone, in the order a newcomer runs them: `npm ci &&
// npx reconcile examples --sandbox`, then `npm test`, then `npx reconcile` again. The first
// `npx reconcile` links the command into npx's cache; `npm test` rebuilds dist/ (it deletes it
// first), and the second `npx reconcile` runs through the same link, so the rebuilt
// dist/cli/bin.js must still be executable. To stay affordable, the middle step runs `npm test`'s
// build step (`npm run build`, which is what `npm test` does before Vitest) rather than the whole
// suite, and `npm ci` prefers the npm cache. The clone is of the committed HEAD: uncommitted
// changes are not in it. It runs with the machine's PATH and without npm's own variables, as a
// newcomer's shell would (the machine's `node` may be older than 22: the project brings Node 24).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from './helpers/cli.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The machine's environment without npm's (a parent `npm test` sets npm_config_* that would steer the install) or the tool's own settings. */
function shellEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(npm_|MANAGEMENT_API_|RECONCILE_|INIT_CWD$|NODE$)/i.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1' };
}

function sh(command: string, cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env: shellEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a newcomer on a fresh clone, following the README', () => {
  let work: string;
  let clone: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'reconciler-newcomer-'));
    clone = join(work, 'fleet-reconciler');
    const cloned = await sh(`git clone --quiet --no-hardlinks "${REPO}" "${clone}"`, work);
    expect(cloned.code, cloned.stderr).toBe(0);
  }, 60_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('npm ci && npx reconcile examples --sandbox, then the build of npm test, then npx reconcile again', async () => {
    const first = await sh('npm ci --prefer-offline --no-audit --no-fund && npx reconcile examples --sandbox', clone);
    expect(first.code, first.stderr.slice(-3000)).toBe(0);
    expect(first.stdout).toContain('Result: success');

    // npm test's first step: it deletes dist/ and compiles it again.
    const build = await sh('npm run build', clone);
    expect(build.code, build.stderr.slice(-3000)).toBe(0);
    expect(statSync(join(clone, 'dist', 'cli', 'bin.js')).mode & 0o111, 'dist/cli/bin.js is executable after the build').toBe(0o111);

    const again = await sh('npx reconcile examples --sandbox --dry-run', clone);
    expect(again.stderr).not.toContain('Permission denied');
    expect(again.code, again.stderr.slice(-3000)).toBe(0);
    expect(again.stdout).toMatch(/^Plan \(dry run: nothing was changed\)/m);
  }, 600_000);
});
