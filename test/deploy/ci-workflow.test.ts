// The CI workflow example: its plan step is run for real (bash, with `npx reconcile` bound to
// the built command in --sandbox), its comment script is run against a fake pull-request API,
// and its secrets list is checked against what the example manifests reference.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { NODE24, REPO_ROOT } from './tools.js';

const WORKFLOW = join(REPO_ROOT, 'examples', '.github', 'workflows', 'reconcile.yml');
const BIN = join(REPO_ROOT, 'dist', 'cli', 'bin.js');

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
interface Job {
  if?: string;
  permissions?: Record<string, string>;
  environment?: string;
  steps: Step[];
}
interface Workflow {
  on: { pull_request?: unknown; push?: { branches: string[] } };
  env: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflow = parseYaml(readFileSync(WORKFLOW, 'utf8')) as Workflow;
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

describe('CI workflow example', () => {
  let work: string;
  let bin: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'reconciler-ci-'));
    bin = work;
    cpSync(join(REPO_ROOT, 'examples'), join(work, 'repo'), { recursive: true });
    // `npx reconcile ARGS` runs the built command against the in-process emulator.
    writeFileSync(join(work, 'npx'), `#!/bin/sh\n[ "$1" = reconcile ] || { echo "unexpected npx $1" >&2; exit 127; }\nshift\nexec "${NODE24}" "${BIN}" "$@" --sandbox\n`);
    chmodSync(join(work, 'npx'), 0o755);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  let steps = 0;
  const runStep = (s: Step, cwd: string) => {
    const output = join(work, `output-${++steps}`);
    writeFileSync(output, '');
    const result = spawnSync('bash', ['-e', '-c', s.run!], {
      cwd,
      encoding: 'utf8',
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: work, GITHUB_OUTPUT: output, GITHUB_STEP_SUMMARY: join(work, 'summary.md') },
      timeout: 120_000,
    });
    return { ...result, outputs: Object.fromEntries(readFileSync(output, 'utf8').split('\n').filter(Boolean).map((l) => l.split('=') as [string, string])) };
  };

  it('plans on pull requests and leaves applying to the daemon unless asked', () => {
    expect(workflow.on.pull_request).toBeDefined();
    expect(workflow.on.push?.branches).toEqual(['main']);
    expect(workflow.jobs.plan!.if).toBe("github.event_name == 'pull_request'");
    expect(workflow.jobs.plan!.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
    expect(step('plan', 'Plan').run).toContain('npx reconcile . --dry-run --output markdown --detailed-exitcode > plan.md');
    expect(workflow.jobs.apply!.if).toContain("vars.RECONCILE_APPLY_FROM_CI == 'true'");
    expect(workflow.jobs.apply!.environment).toBe('production');
    const apply = step('apply', 'Apply').run!;
    expect(apply).toMatch(/npx reconcile \. /);
    expect(apply).not.toContain('--dry-run');
    expect(workflow.env.RECONCILE_RATE_LIMIT).toMatch(/^\d+\/\d+s$/);
  });

  it('passes every value the manifests reference to the plan and the apply, and the token from a secret', () => {
    const referenced = [...referencedEnv(join(REPO_ROOT, 'examples'))].sort();
    expect(referenced.length).toBeGreaterThan(0);
    for (const job of ['plan', 'apply'] as const) {
      const env = step(job, job === 'plan' ? 'Plan' : 'Apply').env!;
      expect(Object.keys(env).filter((k) => k !== 'MANAGEMENT_API_TOKEN').sort(), job).toEqual(referenced);
      for (const [key, value] of Object.entries(env)) expect(value, key).toBe(`\${{ secrets.${key} }}`);
    }
  });

  it('the validate and plan steps succeed on changes (exit 2) and write the markdown plan', () => {
    const repo = join(work, 'repo');
    const validate = runStep(step('plan', 'Validate'), repo);
    expect(validate.status, validate.stderr).toBe(0);
    const plan = runStep(step('plan', 'Plan'), repo);
    expect(plan.status, plan.stderr).toBe(0);
    expect(plan.outputs.exitcode).toBe('2');
    const markdown = readFileSync(join(repo, 'plan.md'), 'utf8');
    expect(markdown).toMatch(/create/);
    expect(markdown).toContain('Project/shop-production');
  }, 120_000);

  it('the plan step fails when the plan fails (broken manifests)', () => {
    const broken = join(work, 'broken');
    cpSync(join(REPO_ROOT, 'examples'), broken, { recursive: true });
    writeFileSync(join(broken, 'broken.yaml'), 'apiVersion: reconciler/v1\nkind: Project\nmetadata: {name: [unclosed\n');
    const plan = runStep(step('plan', 'Plan'), broken);
    expect(plan.status).not.toBe(0);
    expect(plan.outputs.exitcode).toBe('1');
    expect(plan.stderr).toContain('reconcile exited with 1');
  }, 120_000);

  it('the comment script creates one comment, then updates it, and truncates a huge plan', async () => {
    const script = step('plan', 'Comment the plan on the pull request').with!.script!;
    const comments: { id: number; body: string }[] = [{ id: 1, body: 'an unrelated comment' }];
    const github = {
      paginate: async (fn: (args: unknown) => Promise<{ data: unknown[] }>, args: unknown) => (await fn(args)).data,
      rest: {
        issues: {
          listComments: async () => ({ data: comments }),
          createComment: async ({ body }: { body: string }) => void comments.push({ id: comments.length + 1, body }),
          updateComment: async ({ comment_id, body }: { comment_id: number; body: string }) => void (comments.find((c) => c.id === comment_id)!.body = body),
        },
      },
    };
    const context = { repo: { owner: 'acme', repo: 'fleet' }, issue: { number: 7 } };
    const dir = mkdtempSync(join(work, 'comment-'));
    const run = async (plan: string, exitCode: string) => {
      writeFileSync(join(dir, 'plan.md'), plan);
      const cwd = process.cwd();
      process.chdir(dir);
      try {
        const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
        await new AsyncFunction('require', 'github', 'context', 'process', script)(createRequire(import.meta.url), github, context, { env: { EXIT_CODE: exitCode } });
      } finally {
        process.chdir(cwd);
      }
    };
    await run('**Plan: 1 to create**', '2');
    expect(comments).toHaveLength(2);
    expect(comments[1]!.body).toContain('Merging this changes the fleet.');
    expect(comments[1]!.body).toContain('**Plan: 1 to create**');
    await run('**Plan: no changes**', '0');
    expect(comments).toHaveLength(2);
    expect(comments[1]!.body).toContain('No changes.');
    expect(comments[0]!.body).toBe('an unrelated comment');
    await run('x'.repeat(100_000), '2');
    expect(comments[1]!.body.length).toBeLessThan(65_536);
    expect(comments[1]!.body).toContain('plan truncated');
  });
});
