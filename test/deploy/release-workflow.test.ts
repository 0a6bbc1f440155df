// The release workflow (.github/workflows/release.yml): on a version tag, once the CI workflow
// passed on the tagged commit, one job without secrets or write permissions builds the npm
// package, the Helm chart and the container image from that commit; the publishing jobs, each
// with the one permission it needs, download what it built and run nothing of the checkout.
// Its shell steps run here in bash as the runner runs them (with a stand-in `gh` where GitHub
// is asked); the steps that need GitHub or Docker are checked as written.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT, helmTool, toolGate } from './tools.js';

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string | boolean | number>;
}
interface Job {
  needs?: string | string[];
  if?: string;
  permissions: Record<string, string>;
  environment?: string;
  outputs?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

const FILE = join(REPO_ROOT, '.github', 'workflows', 'release.yml');
const text = readFileSync(FILE, 'utf8');
const workflow = parseYaml(text) as Workflow;
const ci = parseYaml(readFileSync(join(REPO_ROOT, '.github', 'workflows', 'ci.yml'), 'utf8')) as Workflow;
const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const jobs = workflow.jobs;
const step = (job: string, name: string) => {
  const found = jobs[job]!.steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step "${name}" in job ${job}`);
  return found;
};
const needs = (job: string): string[] => [jobs[job]!.needs ?? []].flat();
/** Every job a job waits for, directly or not. */
const upstream = (job: string): Set<string> => new Set(needs(job).flatMap((n) => [n, ...upstream(n)]));
const work = mkdtempSync(join(tmpdir(), 'reconciler-release-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A `run:` step as the runner does it: `bash -e`, the step's env, GITHUB_OUTPUT. */
function runStep(s: Step, env: Record<string, string>, path = process.env.PATH ?? '') {
  const output = join(work, `output-${s.id ?? 'step'}`);
  writeFileSync(output, '');
  const { HOME } = process.env;
  const result = spawnSync('bash', ['-e', '-c', s.run!], { cwd: REPO_ROOT, encoding: 'utf8', env: { PATH: path, HOME, ...env, GITHUB_OUTPUT: output } });
  const outputs = Object.fromEntries(readFileSync(output, 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, outputs };
}

/** A permission that publishes or signs: anything `write`, and the OIDC token. */
const publishing = (job: string) => Object.entries(jobs[job]!.permissions).some(([name, level]) => level === 'write' || name === 'id-token');

describe('release workflow', () => {
  it('runs on version tags only, with no permission by default and each job\'s own', () => {
    expect(Object.keys(workflow.on)).toEqual(['push']);
    expect(workflow.on.push).toEqual({ tags: ['v*.*.*'] });
    expect(workflow.permissions).toEqual({});
    expect(Object.fromEntries(Object.entries(jobs).map(([name, job]) => [name, job.permissions]))).toEqual({
      tested: { actions: 'read' },
      build: { contents: 'read' },
      image: { packages: 'write' },
      'github-release': { contents: 'write' },
      npm: { 'id-token': 'write' },
    });
    expect(jobs.npm!.environment).toBe('release');
    expect(jobs.npm!.if).toBe("vars.NPM_PUBLISH == 'true'");
  });

  it('builds after the CI workflow passed on the commit, and publishes only after the build', () => {
    expect(needs('build')).toEqual(['tested']);
    for (const job of ['image', 'github-release', 'npm']) {
      expect(upstream(job).has('build'), job).toBe(true);
      expect(upstream(job).has('tested'), job).toBe(true);
    }
    // The tarball is attached after the image and the chart are in the registry, and published
    // to npm after the GitHub release exists.
    expect(upstream('github-release').has('image')).toBe(true);
    expect(upstream('npm').has('github-release')).toBe(true);
    // The CI workflow this job waits for runs on the same tags and on main.
    expect(step('tested', 'Wait for the CI workflow to pass on this commit').run).toContain('actions/workflows/ci.yml/runs?head_sha=$GITHUB_SHA');
    expect((ci.on as { push: { tags: string[]; branches: string[] } }).push).toEqual({ branches: ['main'], tags: ['v*.*.*'] });
    expect(ci.jobs.test!.steps.find((s) => s.name === 'Test')!.run).toBe('bash .ci/run');
    expect(ci.permissions).toEqual({ contents: 'read' });
  });

  it('runs no test, install or build, and no code of the checkout, in a job that may publish', () => {
    for (const [name, job] of Object.entries(jobs)) {
      const runs = job.steps.map((s) => s.run ?? '').join('\n');
      const uses = job.steps.filter((s) => s.uses).map((s) => s.uses!.split('@')[0]);
      if (publishing(name)) {
        expect(uses, `${name}: nothing checked out`).not.toContain('actions/checkout');
        expect(uses.every((u) => u === 'actions/download-artifact' || u === 'actions/setup-node'), name).toBe(true);
        expect(uses, `${name}: takes the build's artifact`).toContain('actions/download-artifact');
        expect(runs, name).not.toMatch(/\.ci\/run|npm (ci|test|install|run)|vitest|node scripts|docker build/);
      }
    }
    // The one job with a checkout: no test suite, no write permission.
    const build = jobs.build!;
    expect(publishing('build')).toBe(false);
    expect(build.steps.map((s) => s.run ?? '').join('\n')).not.toMatch(/\.ci\/run|npm test|vitest/);
  });

  it('builds every released artifact from the tagged commit in the build job, and uploads them as one artifact', () => {
    const build = jobs.build!;
    const checkout = build.steps.find((s) => s.uses?.startsWith('actions/checkout@'))!;
    // The default ref: the commit of the tag that triggered the run, which `tested` checked.
    expect(checkout.with).toEqual({ 'persist-credentials': false });
    expect(step('build', 'Pack').run).toContain('node scripts/pack-release.mjs --repository "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY" release');
    expect(step('build', 'Package the chart').run).toContain('node scripts/package-chart.mjs --image "$IMAGE" release');
    expect(step('build', 'Build the image').run).toContain('--tag "$IMAGE:$VERSION" .');
    expect(step('build', 'Build the image').run).toContain('docker save "$IMAGE:$VERSION" --output release/image.tar');
    const upload = build.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
    expect(upload.with).toMatchObject({ name: 'release', path: 'release/' });
    for (const job of ['image', 'github-release', 'npm']) {
      const download = jobs[job]!.steps.find((s) => s.uses?.startsWith('actions/download-artifact@'))!;
      expect(download.with, job).toEqual({ name: 'release', path: 'release' });
    }
    // What the publishing jobs publish is named by the build job's outputs.
    expect(build.outputs).toEqual({
      version: '${{ steps.version.outputs.version }}',
      image: '${{ steps.image.outputs.image }}',
      tarball: '${{ steps.pack.outputs.tarball }}',
      chart: '${{ steps.chart.outputs.chart }}',
    });
    const push = step('image', 'Push the image and the chart');
    expect(push.env).toMatchObject({ IMAGE: '${{ needs.build.outputs.image }}', VERSION: '${{ needs.build.outputs.version }}', CHART: '${{ needs.build.outputs.chart }}' });
    expect(push.run).toContain('docker load --input release/image.tar');
    expect(push.run).toContain('docker push "$IMAGE:$VERSION"');
    expect(push.run).toContain('helm push "release/$CHART" "oci://$IMAGE/charts"');
    expect(step('github-release', 'Attach the tarball and the chart to the release').run).toBe('gh release create "$GITHUB_REF_NAME" "release/$TARBALL" "release/$CHART" --verify-tag --title "$GITHUB_REF_NAME" --generate-notes');
    const publish = step('npm', 'Publish to the npm registry with provenance');
    expect(publish.run).toBe('npm publish "release/$TARBALL" --provenance --access public');
    expect(publish.env).toEqual({ NODE_AUTH_TOKEN: '${{ secrets.NPM_TOKEN }}', TARBALL: '${{ needs.build.outputs.tarball }}' });
    // The registry token reaches the publish step alone; the build job holds no token at all.
    for (const job of Object.values(jobs)) for (const s of job.steps) if (s !== publish) expect(JSON.stringify(s), s.name ?? s.uses).not.toContain('secrets.');
    expect(JSON.stringify(build)).not.toContain('github.token');
  });

  it('pins every action by commit SHA, and leaves no checkout credentials behind', () => {
    for (const file of [text, readFileSync(join(REPO_ROOT, '.github', 'workflows', 'ci.yml'), 'utf8')]) {
      for (const line of file.split('\n').filter((l) => l.includes('uses:'))) expect(line).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
    }
    expect(jobs.npm!.steps[0]!.with?.['registry-url']).toBe('https://registry.npmjs.org');
  });

  describe('waits for the CI workflow on the tagged commit', () => {
    const wait = step('tested', 'Wait for the CI workflow to pass on this commit');
    /** A stand-in `gh` that answers each call with the next line of `answers` (the last one repeats). */
    const fakeGh = (answers: string[]) => {
      const bin = mkdtempSync(join(work, 'gh-'));
      writeFileSync(join(bin, 'answers'), answers.join('\n') + '\n');
      writeFileSync(join(bin, 'calls'), '');
      writeFileSync(join(bin, 'gh'), `#!/bin/bash\necho "$*" >> "${bin}/calls"\nn=$(wc -l < "${bin}/calls")\nline=$(sed -n "\${n}p" "${bin}/answers")\n[ -n "$line" ] || line=$(tail -n 1 "${bin}/answers")\nprintf '%b\\n' "$line"\n`);
      chmodSync(join(bin, 'gh'), 0o755);
      return { bin, calls: () => readFileSync(join(bin, 'calls'), 'utf8').trim().split('\n') };
    };
    const env = { GITHUB_REPOSITORY: 'acme/fleet-reconciler', GITHUB_SHA: 'a'.repeat(40), GH_TOKEN: 'unused', CI_POLL_SECONDS: '0' };

    it('goes on when a run passed', () => {
      const gh = fakeGh(['completed failure\\ncompleted success']);
      const result = runStep(wait, env, `${gh.bin}:${process.env.PATH}`);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`CI passed on ${'a'.repeat(40)}`);
      expect(gh.calls()[0]).toContain(`api repos/acme/fleet-reconciler/actions/workflows/ci.yml/runs?head_sha=${'a'.repeat(40)}`);
    });

    it('waits while a run is in progress', () => {
      const gh = fakeGh(['in_progress null', 'queued null', 'completed success']);
      const result = runStep(wait, env, `${gh.bin}:${process.env.PATH}`);
      expect(result.code, result.stderr).toBe(0);
      expect(gh.calls()).toHaveLength(3);
    });

    it('stops the release when CI failed or never ran on the commit', () => {
      for (const answer of ['completed failure', '']) {
        const gh = fakeGh([answer]);
        const result = runStep(wait, env, `${gh.bin}:${process.env.PATH}`);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('a release publishes only a tested commit');
      }
    });
  });

  it('refuses a tag that is not the package\'s version', () => {
    const check = step('build', "Check that the tag is the package's version");
    const right = runStep(check, { GITHUB_REF_NAME: `v${version}` });
    expect(right.code).toBe(0);
    expect(right.outputs.version).toBe(version);
    const wrong = runStep(check, { GITHUB_REF_NAME: 'v99.0.0' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`the tag v99.0.0 is not v${version}, the version in package.json`);
  });

  it('packs the built package without install-time scripts, with the repository a provenance statement names', () => {
    const pack = runStep(step('build', 'Pack'), { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/fleet-reconciler' });
    expect(pack.code, pack.stderr).toBe(0);
    try {
      expect(pack.outputs.tarball).toBe(`fleet-reconciler-${version}.tgz`);
      const tarball = join(REPO_ROOT, 'release', pack.outputs.tarball!);
      const manifest = JSON.parse(spawnSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }).stdout) as Record<string, unknown>;
      expect(manifest.scripts).toBeUndefined();
      expect(manifest.devDependencies).toBeUndefined();
      expect(manifest.allowScripts).toBeUndefined();
      expect(manifest.repository).toEqual({ type: 'git', url: 'git+https://github.com/acme/fleet-reconciler.git' });
      expect(manifest.bin).toEqual({ reconcile: 'dist/cli/bin.js' });
      const listing = spawnSync('tar', ['-tzvf', tarball, 'package/dist/cli/bin.js'], { encoding: 'utf8' }).stdout;
      expect(listing).toMatch(/^-rwxr-xr-x /);
    } finally {
      rmSync(join(REPO_ROOT, 'release'), { recursive: true, force: true });
    }
  });

  const helmGate = toolGate(helmTool());
  it.skipIf(helmGate.skip)('packages the chart with the package\'s version, defaulting to the image it pushes, tagged with that version', () => {
    helmGate.assertPresent();
    const image = runStep(step('build', 'Image name'), { GITHUB_REPOSITORY: 'Acme/Fleet-Reconciler' });
    expect(image.code, image.stderr).toBe(0);
    // ghcr.io names are lower case.
    expect(image.outputs.image).toBe('ghcr.io/acme/fleet-reconciler');
    const chart = runStep(step('build', 'Package the chart'), { IMAGE: image.outputs.image! });
    expect(chart.code, chart.stderr).toBe(0);
    try {
      expect(chart.outputs.chart).toBe(`reconciler-${version}.tgz`);
      const archive = join(REPO_ROOT, 'release', chart.outputs.chart!);
      const read = (member: string) => parseYaml(spawnSync('tar', ['-xzOf', archive, `reconciler/${member}`], { encoding: 'utf8' }).stdout) as Record<string, unknown>;
      expect(read('Chart.yaml')).toMatchObject({ name: 'reconciler', version, appVersion: version });
      expect(read('values.yaml').image).toMatchObject({ repository: 'ghcr.io/acme/fleet-reconciler', tag: version, digest: '' });
      // The image job pushes "$IMAGE:$VERSION" with the same two outputs of the build job.
      expect(step('build', 'Build the image').env).toEqual({ IMAGE: '${{ steps.image.outputs.image }}', VERSION: '${{ steps.version.outputs.version }}' });
      expect(step('build', 'Package the chart').env).toEqual({ IMAGE: '${{ steps.image.outputs.image }}' });
    } finally {
      rmSync(join(REPO_ROOT, 'release'), { recursive: true, force: true });
    }
  });

  it('keeps the checkout\'s chart version with the package\'s', () => {
    const chart = parseYaml(readFileSync(join(REPO_ROOT, 'helm', 'reconciler', 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    expect(chart).toMatchObject({ version, appVersion: version });
  });
});
