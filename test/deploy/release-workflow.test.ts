// The release workflow (.github/workflows/release.yml): on a version tag, the whole CI, the
// package packed as published (no install-time script), attached to a GitHub release, and
// published with provenance. Its shell steps run here in bash as the runner runs them; the
// steps that need GitHub (the release, the registry) are checked as written.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './tools.js';

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string | boolean | number>;
}
interface Workflow {
  on: { push: { tags: string[]; branches?: unknown } } & Record<string, unknown>;
  permissions: Record<string, string>;
  jobs: Record<string, { permissions: Record<string, string>; environment?: string; steps: Step[] }>;
}

const FILE = join(REPO_ROOT, '.github', 'workflows', 'release.yml');
const text = readFileSync(FILE, 'utf8');
const workflow = parseYaml(text) as Workflow;
const job = workflow.jobs.release!;
const step = (name: string) => {
  const found = job.steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step "${name}"`);
  return found;
};
const work = mkdtempSync(join(tmpdir(), 'reconciler-release-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A `run:` step as the runner does it: `bash -e`, the step's env, GITHUB_OUTPUT. */
function runStep(s: Step, env: Record<string, string>) {
  const output = join(work, `output-${s.id ?? 'step'}`);
  writeFileSync(output, '');
  const { PATH, HOME } = process.env;
  const result = spawnSync('bash', ['-e', '-c', s.run!], { cwd: REPO_ROOT, encoding: 'utf8', env: { PATH, HOME, ...env, GITHUB_OUTPUT: output } });
  const outputs = Object.fromEntries(readFileSync(output, 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, outputs };
}

describe('release workflow', () => {
  it('runs on version tags only, with no permission by default and the release job\'s two', () => {
    expect(Object.keys(workflow.on)).toEqual(['push']);
    expect(workflow.on.push).toEqual({ tags: ['v*.*.*'] });
    expect(workflow.permissions).toEqual({});
    expect(job.permissions).toEqual({ contents: 'write', 'id-token': 'write' });
    expect(job.environment).toBe('release');
  });

  it('pins every action by commit SHA, and leaves no checkout credentials behind', () => {
    const uses = job.steps.filter((s) => s.uses);
    expect(uses.map((s) => s.uses!.split('@')[0])).toEqual(['actions/checkout', 'actions/setup-node']);
    for (const s of uses) expect(s.uses).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
    for (const line of text.split('\n').filter((l) => l.includes('uses:'))) expect(line).toMatch(/@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
    expect(uses[0]!.with?.['persist-credentials']).toBe(false);
    expect(uses[1]!.with?.['registry-url']).toBe('https://registry.npmjs.org');
  });

  it('tests, packs, attaches the tarball to the release, then publishes that tarball with provenance', () => {
    const names = job.steps.map((s) => s.name ?? s.uses!.split('@')[0]);
    expect(names.indexOf('Test')).toBeLessThan(names.indexOf('Pack'));
    expect(names.indexOf('Pack')).toBeLessThan(names.indexOf('Attach the tarball to the release'));
    expect(names.indexOf('Attach the tarball to the release')).toBeLessThan(names.indexOf('Publish to the npm registry with provenance'));
    expect(step('Test').run).toBe('bash .ci/run');
    expect(step('Pack').run).toContain('node scripts/pack-release.mjs --repository "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY" release');
    expect(step('Attach the tarball to the release').run).toBe('gh release create "$GITHUB_REF_NAME" "$TARBALL" --verify-tag --title "$GITHUB_REF_NAME" --generate-notes');
    const publish = step('Publish to the npm registry with provenance');
    expect(publish.run).toBe('npm publish "$TARBALL" --provenance --access public');
    expect(publish.if).toBe("vars.NPM_PUBLISH == 'true'");
    expect(publish.env).toEqual({ NODE_AUTH_TOKEN: '${{ secrets.NPM_TOKEN }}', TARBALL: '${{ steps.pack.outputs.tarball }}' });
    // The registry token reaches the publish step alone.
    for (const s of job.steps) if (s !== publish) expect(JSON.stringify(s), s.name ?? s.uses).not.toContain('secrets.');
  });

  it('refuses a tag that is not the package\'s version', () => {
    const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(runStep(step("Check that the tag is the package's version"), { GITHUB_REF_NAME: `v${version}` }).code).toBe(0);
    const wrong = runStep(step("Check that the tag is the package's version"), { GITHUB_REF_NAME: 'v99.0.0' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`the tag v99.0.0 is not v${version}, the version in package.json`);
  });

  it('packs the built package without install-time scripts, with the repository a provenance statement names', () => {
    const pack = runStep(step('Pack'), { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/fleet-reconciler' });
    expect(pack.code, pack.stderr).toBe(0);
    const tarball = pack.outputs.tarball!;
    try {
      expect(tarball).toMatch(/\/release\/fleet-reconciler-\d+\.\d+\.\d+\.tgz$/);
      const manifest = JSON.parse(spawnSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }).stdout) as Record<string, unknown>;
      expect(manifest.scripts).toBeUndefined();
      expect(manifest.devDependencies).toBeUndefined();
      expect(manifest.repository).toEqual({ type: 'git', url: 'git+https://github.com/acme/fleet-reconciler.git' });
      expect(manifest.bin).toEqual({ reconcile: 'dist/cli/bin.js' });
      const listing = spawnSync('tar', ['-tzvf', tarball, 'package/dist/cli/bin.js'], { encoding: 'utf8' }).stdout;
      expect(listing).toMatch(/^-rwxr-xr-x /);
    } finally {
      rmSync(join(REPO_ROOT, 'release'), { recursive: true, force: true });
    }
  });
});
