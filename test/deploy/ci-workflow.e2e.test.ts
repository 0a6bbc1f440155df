// The CI workflow example, run as far as it can be without GitHub: a separate manifests
// repository (the examples, a package.json and a lockfile) installs the package from the
// tarball `npm pack` makes of this project; the workflow's own steps run in bash with the real
// `npm` and `npx`, `node_modules/` present, against an emulator started here; the comment job's
// script runs against a fake pull-request API. The Node that runs it all is the project's
// Node 24, or the one RECONCILE_TEST_NODE names (CI runs this file under Node 22 too).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { loadManifests } from '../../src/reconcile/load-manifests.js';
import { NODE24, REPO_ROOT, which } from './tools.js';

const WORKFLOW_FILE = join(REPO_ROOT, 'examples', '.github', 'workflows', 'reconcile.yml');
const NODE = process.env.RECONCILE_TEST_NODE || NODE24;
const MARKER = '<!-- reconcile-plan -->';

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
  if?: string;
  needs?: string | string[];
  permissions?: Record<string, string>;
  environment?: string;
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflowText = readFileSync(WORKFLOW_FILE, 'utf8');
const workflow = parseYaml(workflowText) as Workflow;
const step = (job: string, name: string) => {
  const found = workflow.jobs[job]!.steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step "${name}" in job ${job}`);
  return found;
};

/** Every `valueFrom.env` name in the example manifests. */
function referencedEnv(dir: string): Set<string> {
  const names = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      const from = (value as { valueFrom?: { env?: unknown } }).valueFrom;
      if (from && typeof from.env === 'string') names.add(from.env);
      Object.values(value).forEach(visit);
    }
  };
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      if (entry.startsWith('.') || entry === 'ci') continue;
      const path = join(d, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(entry)) for (const document of parseAllDocuments(readFileSync(path, 'utf8'))) visit(document.toJSON());
    }
  };
  walk(dir);
  return names;
}

/** Every file below `dir`, relative, without descending into node_modules. */
function filesOf(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesOf(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}

describe('CI workflow example (static)', () => {
  it('plans on pull requests and leaves applying to the daemon unless asked', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    expect((workflow.on.push as { branches: string[] }).branches).toEqual(['main']);
    expect(workflow.jobs.plan!.if).toBe("github.event_name == 'pull_request'");
    expect(step('plan', 'Plan').run).toContain('npx reconcile "$MANIFESTS_DIR" --dry-run --output markdown --detailed-exitcode > plan.md');
    expect(step('plan', 'Validate').run).toContain('npx reconcile validate "$MANIFESTS_DIR" --output github');
    expect(workflow.jobs.apply!.if).toContain("vars.RECONCILE_APPLY_FROM_CI == 'true'");
    expect(workflow.jobs.apply!.environment).toBe('production');
    const apply = step('apply', 'Apply').run!;
    expect(apply).toMatch(/npx reconcile "\$MANIFESTS_DIR" /);
    expect(apply).not.toContain('--dry-run');
    expect(workflow.env.RECONCILE_RATE_LIMIT).toMatch(/^\d+\/\d+s$/);
  });

  it('pins every action by commit SHA and never leaves the checkout credentials behind', () => {
    const uses = Object.values(workflow.jobs).flatMap((job) => job.steps.filter((s) => s.uses).map((s) => s.uses!));
    expect(uses.length).toBeGreaterThanOrEqual(7);
    for (const use of uses) expect(use).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
    for (const line of workflowText.split('\n').filter((l) => l.includes('uses:'))) expect(line, 'the tag beside the SHA').toMatch(/@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
    for (const [name, job] of Object.entries(workflow.jobs)) {
      for (const s of job.steps.filter((s) => s.uses?.startsWith('actions/checkout@'))) expect(s.with?.['persist-credentials'], name).toBe(false);
    }
  });

  it('gives no write token to the pull request\'s code, and no secret to the job that writes', () => {
    expect(workflowText).not.toContain('pull_request_target');
    expect(workflow.permissions).toEqual({});
    expect(workflow.jobs.plan!.permissions).toEqual({ contents: 'read' });
    expect(workflow.jobs.apply!.permissions).toEqual({ contents: 'read' });
    const comment = workflow.jobs.comment!;
    expect(comment.permissions).toEqual({ 'pull-requests': 'write' });
    expect(comment.needs).toBe('plan');
    expect(comment.if).toContain('always()');
    expect(comment.if).toContain('github.event.pull_request.head.repo.full_name == github.repository');
    // It checks nothing out and runs nothing: it downloads the rendered text and posts it.
    expect(comment.steps.map((s) => s.uses?.split('@')[0])).toEqual(['actions/download-artifact', 'actions/github-script']);
    expect(comment.steps.some((s) => s.run)).toBe(false);
    expect(JSON.stringify(comment)).not.toContain('secrets.');
    // In the plan job, secrets reach the plan step only.
    for (const s of workflow.jobs.plan!.steps) if (s.name !== 'Plan') expect(JSON.stringify(s), s.name ?? s.uses).not.toContain('secrets.');
    // The comment is rendered and kept whatever happened before.
    expect(step('plan', 'Render the comment').if).toBe('always()');
    expect(step('plan', 'Keep the comment for the comment job').if).toBe('always()');
  });

  it('passes every value the manifests reference to the plan and the apply, and the token from a secret', () => {
    const referenced = [...referencedEnv(join(REPO_ROOT, 'examples'))].sort();
    expect(referenced.length).toBeGreaterThan(0);
    for (const [job, name] of [['plan', 'Plan'], ['apply', 'Apply']] as const) {
      const env = step(job, name).env!;
      expect(Object.keys(env).filter((k) => k !== 'MANAGEMENT_API_TOKEN').sort(), job).toEqual(referenced);
      for (const [key, value] of Object.entries(env)) expect(value, key).toBe(`\${{ secrets.${key} }}`);
    }
  });
});

describe('getting started against the real API', () => {
  const text = readFileSync(join(REPO_ROOT, 'docs', 'getting-started.md'), 'utf8');
  it('lists every variable the examples reference, and points to the emulator', () => {
    // The table of variables: its first column.
    const rows = text.split('\n').filter((l) => /^\| `[A-Z]/.test(l)).map((l) => l.split('|')[1]!);
    const listed = new Set(rows.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)));
    expect([...listed].sort()).toEqual([...referencedEnv(join(REPO_ROOT, 'examples'))].sort());
    expect(text).toContain('`npx reconcile emulator`');
    expect(text).toContain('[The emulator](emulator.md)');
  });

  it('the line labelled as the pull-request comment plans only, and the .gitignore advice keeps the state directory out', () => {
    const line = text.split('\n').find((l) => l.includes('# the plan as a pull-request comment'))!;
    expect(line).toContain('--dry-run');
    expect(line).toContain('--output markdown');
    for (const doc of [text, readFileSync(join(REPO_ROOT, 'docs', 'ci.md'), 'utf8')]) expect(doc).toContain("printf 'node_modules/\\n.reconcile/\\n' >> .gitignore");
  });
});

describe('CI workflow example, run in a manifests repository that installs the packed package', () => {
  let work: string;
  let repo: string;
  let bin: string;
  let tarball: string;
  let installOutput = '';
  let emulator: RunningEmulator;
  const referenced = [...referencedEnv(join(REPO_ROOT, 'examples'))];
  const secrets = Object.fromEntries(referenced.map((name) => [name, `ci-secret-value-${name.toLowerCase()}`]));

  /** The machine's environment without npm's own (a parent `npm test` sets npm_config_* that would steer installs). */
  const baseEnv = () => {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !/^(npm_|MANAGEMENT_API_|RECONCILE_|GITHUB_)/i.test(key)) env[key] = value;
    }
    return { ...env, PATH: `${bin}:${process.env.PATH}`, CI: 'true', NO_COLOR: '1' };
  };

  const exec = (command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });

  /** A `run:` step as the runner does it: `bash -e`, the workflow's and the step's env, GITHUB_OUTPUT. */
  const runStep = async (s: Step, cwd: string, env: Record<string, string> = {}): Promise<Run> => {
    const output = join(work, `output-${s.id ?? 'step'}-${Date.now()}-${Math.floor(performance.now() * 1000)}`);
    writeFileSync(output, '');
    const result = await exec('bash', ['-e', '-c', s.run!], cwd, { ...baseEnv(), ...workflow.env, ...env, GITHUB_OUTPUT: output });
    const outputs = Object.fromEntries(readFileSync(output, 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    return { ...result, outputs };
  };

  /** The plan job's steps after the install: validate, plan, render, then the final check. */
  const planJob = async (cwd: string, planEnv: Record<string, string>) => {
    const validate = await runStep(step('plan', 'Validate'), cwd);
    const plan = await runStep(step('plan', 'Plan'), cwd, planEnv);
    const exits = { VALIDATE_EXIT: validate.outputs.exitcode ?? '', PLAN_EXIT: plan.outputs.exitcode ?? '' };
    const render = await runStep(step('plan', 'Render the comment'), cwd, { ...exits, RUN_URL: 'https://github.example/acme/fleet/actions/runs/1' });
    const verdict = await runStep(step('plan', 'Fail when the manifests are invalid or the plan could not be made'), cwd, exits);
    return { validate, plan, render, verdict, comment: readFileSync(join(cwd, 'comment.md'), 'utf8') };
  };

  beforeAll(async () => {
    if (!existsSync(join(REPO_ROOT, 'dist', 'cli', 'bin.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    work = mkdtempSync(join(tmpdir(), 'reconciler-ci-'));
    // `node`, `npm` and `npx` as the runner's setup-node puts them on PATH: npm and npx are
    // node scripts, so they run on the Node chosen here.
    bin = join(work, 'bin');
    mkdirSync(bin);
    symlinkSync(NODE, join(bin, 'node'));
    for (const tool of ['npm', 'npx']) {
      const path = which(tool);
      if (!path) throw new Error(`${tool} not found on PATH`);
      symlinkSync(path, join(bin, tool));
    }
    // The package as published and attached to a release: scripts/pack-release.mjs, the
    // release workflow's pack step (dist/ is built already).
    const pack = await exec('node', [join(REPO_ROOT, 'scripts', 'pack-release.mjs'), work], REPO_ROOT, baseEnv());
    expect(pack.code, pack.stderr).toBe(0);
    tarball = pack.stdout.trim();
    expect(tarball).toBe(join(work, 'fleet-reconciler-0.1.0.tgz'));
    // The manifests repository: the examples (with the workflow under .github/), a
    // package.json of its own, and the reconciler installed from the tarball, which writes
    // the lockfile. The registry (or the npm cache) provides the dependencies.
    repo = join(work, 'fleet');
    cpSync(join(REPO_ROOT, 'examples'), repo, { recursive: true });
    writeFileSync(join(repo, 'package.json'), `${JSON.stringify({ name: 'fleet-manifests', private: true }, null, 2)}\n`);
    writeFileSync(join(repo, '.gitignore'), 'node_modules/\nplan.md\nplan.log\ncomment.md\n');
    const install = await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--save-exact', tarball], repo, baseEnv());
    expect(install.code, install.stderr).toBe(0);
    installOutput = install.stdout + install.stderr;
    emulator = await startEmulator({ port: 0, speed: 600, rateLimit: { limit: 100_000, windowMs: 60_000 } });
  }, 300_000);

  afterAll(async () => {
    await emulator?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('installs as a dependency with a lockfile: the runtime, its schemas, no bench, chaos, tests or sources', async () => {
    const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual(['fleet-reconciler']);
    expect(existsSync(join(repo, 'package-lock.json'))).toBe(true);
    const installed = join(repo, 'node_modules', 'fleet-reconciler');
    const files = filesOf(installed);
    for (const path of ['package.json', 'dist/cli/bin.js', 'dist/cli/main.js', 'dist/emulator/index.js', 'schemas/api/openapi.json', 'schemas/project.schema.json']) expect(files, path).toContain(path);
    expect(files.filter((f) => /^(src|test|helm|examples|dist\/bench|dist\/chaos|dist\/api\/generate)\//.test(f) || /generate-schemas|\.ts$|tsconfig/.test(f))).toEqual([]);
    expect(existsSync(join(repo, 'node_modules', '.bin', 'reconcile'))).toBe(true);
    const own = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { private?: boolean; engines: { node: string }; bin: Record<string, string>; scripts?: unknown; devDependencies?: unknown };
    expect(own.private).toBeUndefined();
    // No install-time script (the checkout's `prepare` builds dist/, which the package ships):
    // npm has nothing to warn about or ask approval for.
    expect(own.scripts).toBeUndefined();
    expect(own.devDependencies).toBeUndefined();
    expect(installOutput).not.toMatch(/install-scripts|allowScripts|prepare/);
    expect(own.engines.node).toBe('^22.22.0 || >=24.0.0');
    expect(own.bin).toEqual({ reconcile: 'dist/cli/bin.js' });
    const version = await exec('npx', ['reconcile', '--version'], repo, baseEnv());
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toContain('0.1.0');
  });

  it('`npx fleet-reconciler --dry-run` works with only manifests, a lockfile and node_modules/', async () => {
    const run = await exec('npx', ['fleet-reconciler', '.', '--sandbox', '--dry-run', '--detailed-exitcode', '--output', 'markdown'], repo, baseEnv());
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout.split('\n')[0]).toBe('### Manifests `.` against the sandbox (in-process emulator)');
    expect(run.stdout).toContain('`Project/shop-production`');
    expect(run.stdout).not.toContain('node_modules');
  }, 120_000);

  it('the Node running it is the one asked for (RECONCILE_TEST_NODE, else the project\'s)', async () => {
    const asked = await exec(NODE, ['--version'], repo, baseEnv());
    const used = await exec('npx', ['--no', '-c', 'node --version'], repo, baseEnv());
    expect(used.stdout.trim()).toBe(asked.stdout.trim());
    expect(['22', '24']).toContain(/^v(\d+)\./.exec(asked.stdout)![1]);
  });

  it('a fresh checkout: npm ci, validate with annotations, plan with changes (2), the comment says so, the job passes', async () => {
    const checkout = join(work, 'checkout');
    cpSync(repo, checkout, { recursive: true, filter: (source) => !source.includes('node_modules') });
    const install = await runStep(step('plan', 'Install the reconciler'), checkout);
    expect(install.code, install.stderr).toBe(0);
    expect(existsSync(join(checkout, 'node_modules', '.bin', 'reconcile'))).toBe(true);

    const job = await planJob(checkout, { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, ...secrets });
    // Validate: the secrets are not in its environment (they reach the plan step alone), and it
    // needs none: no warning per reference, one notice that names the variables the plan needs.
    expect(job.validate.outputs.exitcode, job.validate.stdout + job.validate.stderr).toBe('0');
    const annotations = job.validate.stdout.split('\n').filter((l) => l.startsWith('::'));
    expect(annotations).toEqual([`::notice title=reconcile validate%3A secret references::12 secret references read environment variables that are not set in this step (validate needs none; the plan and the apply do): ${[...referenced].sort().join(', ')}`]);
    // Every document and file of the examples the repository was made from.
    const examples = await loadManifests(join(REPO_ROOT, 'examples'));
    expect(job.validate.stdout).toMatch(new RegExp(`^valid: ${examples.documents.length} documents in ${examples.files.length} files$`, 'm'));
    expect(job.validate.stdout).not.toContain('node_modules');
    // Plan: exit 2, the markdown names the directory and the environment.
    expect(job.plan.outputs.exitcode, job.plan.stderr).toBe('2');
    expect(job.plan.code).toBe(0);
    const plan = readFileSync(join(checkout, 'plan.md'), 'utf8');
    expect(plan.split('\n')[0]).toBe(`### Manifests \`.\` against ${emulator.url}`);
    expect(plan).toContain('```diff');
    // The comment: marker, verdict, the plan.
    expect(job.render.code, job.render.stderr).toBe(0);
    expect(job.comment.split('\n').slice(0, 2)).toEqual([MARKER, '**Merging this changes the fleet.** Review the plan below.']);
    expect(job.comment).toContain(plan);
    expect(job.verdict.code).toBe(0);
    for (const value of [...Object.values(secrets), emulator.token]) expect(job.comment + job.plan.stderr + job.validate.stdout).not.toContain(value);
  }, 300_000);

  it('invalid manifests: annotations, a comment that says the plan failed and why, then a failed job', async () => {
    const broken = join(work, 'broken');
    cpSync(repo, broken, { recursive: true });
    writeFileSync(join(broken, 'projects', 'broken.yaml'), 'apiVersion: reconciler/v1\nkind: Project\nmetadata:\n  name: broken\nspec:\n  organization: acme-commerce\n  region: eu-west-1\n  no_such_field: 1\n');
    const job = await planJob(broken, { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: emulator.token, ...secrets });
    expect(job.validate.outputs.exitcode).toBe('1');
    expect(job.validate.stdout).toMatch(/^::error file=projects\/broken\.yaml,line=8,col=3,title=reconcile validate%3A \/spec\/no_such_field::/m);
    expect(job.plan.outputs.exitcode).toBe('1');
    expect(job.comment.split('\n')[1]).toMatch(/^\*\*The plan failed \(exit code 1\):\*\* do not merge on the strength of this comment/);
    expect(job.comment).toContain('**Validation failed:** the errors are annotated on the files of this pull request.');
    expect(job.comment).toContain('**Manifests are invalid: nothing was planned or applied (1 error).**');
    expect(job.verdict.code).toBe(1);
    expect(job.verdict.stderr).toContain('reconcile validate exited with 1');
  }, 120_000);

  it('an unset token: the comment carries the command\'s own error, the job fails', async () => {
    const job = await planJob(repo, { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: '', ...secrets });
    expect(job.validate.outputs.exitcode).toBe('0');
    expect(job.plan.outputs.exitcode).toBe('1');
    expect(readFileSync(join(repo, 'plan.md'), 'utf8')).toBe('');
    expect(job.comment).toContain('**The plan failed (exit code 1):**');
    expect(job.comment).toMatch(/```\nreconcile: .*token.*\n```/i);
    expect(job.verdict.code).toBe(1);
  }, 120_000);

  it('an API failure (a token the API refuses): the comment says nothing was observed, the job fails', async () => {
    const job = await planJob(repo, { MANAGEMENT_API_URL: emulator.url, MANAGEMENT_API_TOKEN: 'pat_refused_by_the_api', ...secrets });
    expect(job.plan.outputs.exitcode).toBe('1');
    expect(job.comment).toContain('**The plan failed (exit code 1):**');
    expect(job.comment).toMatch(/\*\*Could not observe the fleet: UnauthorizedError: GET \/v1\/projects: 401 /);
    expect(job.comment).not.toContain('pat_refused_by_the_api');
    expect(job.verdict.code).toBe(1);
  }, 120_000);

  it('renders every outcome: no changes, changes, a failed plan, a plan that did not run', async () => {
    const dir = mkdtempSync(join(work, 'render-'));
    const render = async (planExit: string, plan: string) => {
      writeFileSync(join(dir, 'plan.md'), plan);
      const run = await runStep(step('plan', 'Render the comment'), dir, { VALIDATE_EXIT: '0', PLAN_EXIT: planExit, RUN_URL: 'https://github.example/run' });
      expect(run.code, run.stderr).toBe(0);
      return readFileSync(join(dir, 'comment.md'), 'utf8').split('\n');
    };
    expect((await render('0', 'the plan\n'))[1]).toBe('**No changes:** merging this leaves the fleet as it is.');
    expect((await render('2', 'the plan\n'))[1]).toBe('**Merging this changes the fleet.** Review the plan below.');
    expect((await render('3', ''))[1]).toMatch(/^\*\*The plan failed \(exit code 3\):\*\*/);
    expect((await render('', ''))[1]).toBe('**The plan did not run** (an earlier step failed): [the job log](https://github.example/run) says why.');
  });
});

describe('CI workflow example, the comment job', () => {
  const script = String(step('comment', 'Comment the plan on the pull request').with!.script);
  const bot = { type: 'Bot' };
  const human = { type: 'User' };

  const fakeGithub = (comments: { id: number; body: string; user: { type: string } }[]) => ({
    paginate: async (fn: (args: unknown) => Promise<{ data: unknown[] }>, args: unknown) => (await fn(args)).data,
    rest: {
      issues: {
        listComments: async () => ({ data: comments }),
        createComment: async ({ body, issue_number }: { body: string; issue_number: number }) => {
          expect(issue_number).toBe(7);
          comments.push({ id: comments.length + 1, body, user: bot });
        },
        updateComment: async ({ comment_id, body }: { comment_id: number; body: string }) => void (comments.find((c) => c.id === comment_id)!.body = body),
      },
    },
  });

  const post = async (comments: { id: number; body: string; user: { type: string } }[], body: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'reconciler-comment-'));
    writeFileSync(join(dir, 'comment.md'), body);
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
      await new AsyncFunction('require', 'github', 'context', script)(createRequire(import.meta.url), fakeGithub(comments), { repo: { owner: 'acme', repo: 'fleet' }, issue: { number: 7 } });
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('creates one comment, then updates it in place, whatever the outcome; other comments stay', async () => {
    const comments = [
      { id: 1, body: 'an unrelated comment', user: human },
      { id: 2, body: `${MARKER}\nquoted by a person`, user: human },
    ];
    await post(comments, `${MARKER}\n**Merging this changes the fleet.** Review the plan below.\n\nthe plan\n`);
    expect(comments).toHaveLength(3);
    expect(comments[2]!.body).toContain('Merging this changes the fleet.');
    // A later push whose plan failed replaces the comment: the old verdict does not stay.
    await post(comments, `${MARKER}\n**The plan failed (exit code 1):** ...\n`);
    expect(comments).toHaveLength(3);
    expect(comments[2]!.body).toContain('The plan failed');
    expect(comments[2]!.body).not.toContain('Merging this changes the fleet.');
    expect(comments.slice(0, 2).map((c) => c.body)).toEqual(['an unrelated comment', `${MARKER}\nquoted by a person`]);
  });

  it('refuses a file that is not a rendered comment, or too long for one', async () => {
    await expect(post([], 'no marker')).rejects.toThrow('does not start with the marker');
    await expect(post([], `${MARKER}\n${'x'.repeat(70_000)}`)).rejects.toThrow('more than the 65536 a comment holds');
  });
});
