// `reconcile [DIR]`: one pass (plan with --dry-run, else apply), the result on stdout in the
// chosen format, logs on stderr. `--watch` hands over to the daemon.
import { relative, resolve } from 'node:path';
import { UsageError, type CommandContext, type ContextOf } from '../context.js';
import type { Settings, SettingsOf } from '../settings.js';
import { referenceOptions } from '../reference-options.js';
import type { Logger } from '../../util/logger.js';
import { colorWanted } from '../../util/logger.js';
import { isTty, streamLogger } from '../logging.js';
import type { PassResult } from '../../reconcile/types.js';
import type { PassOptions } from '../../reconcile/engine.js';
import type { Refusal } from '../../reconcile/plan-file.js';
import type { ManifestSet } from '../../manifests/types.js';
import { renderText } from '../../reconcile/render/text.js';
import { renderJson, writeJson } from '../../reconcile/render/json.js';
import { renderMarkdown } from '../../reconcile/render/markdown.js';
import type { loadShardedManifests } from '../../shards/load-sharded.js';
import type { OneShotOutcome, OneShotRequest } from '../../run/conductor.js';
import { credentialPathProblems } from '../credential-paths.js';
import { protectManifestsTree } from '../../util/manifests-tree.js';
import { requireShard, stateDirOf } from '../process-scope.js';
import { runSettings, sessionOpeners } from '../run-request.js';
import { DAEMON_DEFAULT_RATE, ONE_SHOT_DEFAULT_RATE } from '../settings.js';
import { parseRate } from '../../util/rate.js';

/** What a pass of the command line reads: the settings `reconcile` and `reconcile apply` share. */
type PassContext = CommandContext<Pick<Settings, keyof SettingsOf<'reconcile'> & keyof SettingsOf<'apply'>>>;

const OUTPUT_FORMATS = ['text', 'json', 'markdown'] as const;
type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Exit codes of the reconcile command (shared/INTERFACE.md). */
export const EXIT = { success: 0, error: 1, changes: 2 } as const;

/** The manifests directory: DIR or --manifests (not both, unless equal), default the working directory. */
export function manifestsDir(context: { positionals: readonly string[]; cwd: string; settings: Pick<Settings, 'manifests'> }): string {
  const positional = context.positionals[0];
  const flag = context.settings.manifests;
  if (context.positionals.length > 1) throw new UsageError(`expected at most one manifests directory, got ${context.positionals.length}: ${context.positionals.join(' ')}`);
  if (positional !== undefined && flag !== undefined && resolve(context.cwd, positional) !== resolve(context.cwd, flag)) {
    throw new UsageError(`two manifests directories given: ${positional} and --manifests ${flag}`);
  }
  return resolve(context.cwd, positional ?? flag ?? '.');
}

export function outputFormat(context: { settings: Pick<Settings, 'output'> }): OutputFormat {
  const value = context.settings.output;
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) {
    throw new UsageError(`--output: expected one of ${OUTPUT_FORMATS.join(', ')}, got \`${value}\``);
  }
  return value as OutputFormat;
}

/** A pull request's plan carries the apply's forecast at the budget a daemon has by default. */
const DAEMON_FORECAST = { rate: parseRate(DAEMON_DEFAULT_RATE), budget: "the daemon's default budget" };

export function render(result: PassResult, format: OutputFormat, color: boolean, heading?: { dir: string; environment: string }): string {
  if (format === 'json') return renderJson(result);
  if (format === 'markdown') return renderMarkdown(result, { ...(heading ? { heading } : {}), forecast: DAEMON_FORECAST });
  return renderText(result, { color });
}

/**
 * What a markdown plan names on its first line: the manifests directory as given from the
 * working directory, and where it was planned (the API's origin, never a path or credentials
 * a URL may carry, or the sandbox).
 */
function planHeading(context: PassContext, dir: string): { dir: string; environment: string } {
  if (context.settings.sandbox) return { dir: relative(context.cwd, dir) || '.', environment: 'the sandbox (in-process emulator)' };
  const url = context.settings.apiUrl;
  let environment = 'an API URL that is not set';
  if (url) {
    try {
      environment = new URL(url).origin;
    } catch {
      environment = 'an API URL that is not a URL';
    }
  }
  return { dir: relative(context.cwd, dir) || '.', environment };
}

/** 0 success; 1 invalid manifests, API failure or partial apply; 2 changes planned (dry run with --detailed-exitcode). */
export function exitCode(result: PassResult, detailed: boolean): number {
  if (result.result !== 'success') return EXIT.error;
  if (detailed && result.dryRun && result.plan.hasChanges) return EXIT.changes;
  return EXIT.success;
}

/**
 * Said with a long forecast when the run has the one-shot default budget: the default leaves a
 * daemon on the same identity its share; an identity of its own may have the whole of it.
 */
export const ONE_SHOT_BUDGET_NOTE =
  `this run has the one-shot default budget (${ONE_SHOT_DEFAULT_RATE}, so that a daemon on the same identity keeps ${DAEMON_DEFAULT_RATE}); ` +
  'a CI identity of its own (another user\'s token: the limit is per user) runs at the full budget with --rate-limit 50/60s';

/** One-shot runs log to stderr so that stdout carries only the plan. */
export function commandLogger(context: Pick<CommandContext<Pick<Settings, 'logFormat' | 'logLevel'>>, 'settings' | 'env' | 'stderr'>): Logger {
  return streamLogger(context, context.stderr);
}

export async function run(context: ContextOf<'reconcile'>): Promise<number> {
  if (context.settings.watch) {
    if (context.settings.out !== undefined) throw new UsageError('--out FILE saves the plan of one dry run: it does not go with --watch');
    const { runDaemon } = await import('./watch.js');
    return runDaemon(context);
  }
  const dryRun = context.settings.dryRun;
  const out = context.settings.out;
  if (out !== undefined && !dryRun) throw new UsageError('--out FILE saves a plan: add --dry-run (then apply it with `reconcile apply FILE`)');
  const format = outputFormat(context);
  const dir = manifestsDir(context);
  const log = commandLogger(context);
  return executePass(context, {
    dir,
    dryRun,
    format,
    log,
    ...(out !== undefined ? { afterPass: (result, manifests, sandbox, heading) => savePlan(context, resolve(context.cwd, out), result, manifests, sandbox, log, heading) } : {}),
  });
}

/** What one pass of the command needs besides the command line. */
export interface PassRequest {
  dir: string;
  dryRun: boolean;
  format: OutputFormat;
  log: Logger;
  /**
   * Checks before any request (a saved plan against the manifests and secrets): refusals stop
   * the command with exit 1; otherwise what the pass must check its fresh plan against.
   */
  beforeSession?: (manifests: ManifestSet, sandbox: boolean) => Promise<{ refusals: Refusal[]; savedPlan?: PassOptions['savedPlan']; plan?: PassResult['plan'] }>;
  /** After the pass: an exit code overrides the result's. */
  afterPass?: (result: PassResult, manifests: ManifestSet, sandbox: boolean, heading: { dir: string; environment: string }) => Promise<number | undefined>;
}

/** Load, check, conduct one pass (src/run/conductor.ts), render it: the plain command, and `apply FILE`. */
export async function executePass(context: PassContext, request: PassRequest): Promise<number> {
  const loaded = await loadForPass(context, request);
  const admitted = await admitPass(context, request, loaded);
  if (typeof admitted === 'number') return admitted;
  const { conductPass } = await import('../../run/conductor.js');
  const outcome = await conductPass(oneShotRequest(context, request, loaded, admitted.savedPlan));
  return presentOutcome(context, request, loaded, outcome);
}

/** The manifests of the pass (this process's shard of them), and how its result is shown. */
interface LoadedPass {
  manifests: ManifestSet;
  sharded: Awaited<ReturnType<typeof loadShardedManifests>>;
  sandbox: boolean;
  color: boolean;
  heading: { dir: string; environment: string };
  /**
   * On a screen (both streams a terminal, the plan as text) the plan already lists every
   * manifest error and refusal: a log line for each would show it twice. Piped or redirected,
   * the log keeps them, as a log file or CI annotation must stand on its own.
   */
  planShowsErrors: boolean;
}

async function loadForPass(context: PassContext, request: PassRequest): Promise<LoadedPass> {
  const { dir, format } = request;
  const shardName = context.settings.shard;
  const sandbox = context.settings.sandbox;
  if (shardName !== undefined && sandbox) throw new UsageError('--shard needs a real API (its credentials come from the shard map): drop --sandbox');
  const { loadShardedManifests } = await import('../../shards/load-sharded.js');
  const sharded = await loadShardedManifests(dir, { cwd: context.cwd, load: { references: referenceOptions(context) }, ...(shardName !== undefined ? { shard: shardName } : {}), ...optionalShardsFile(context) });
  return {
    manifests: sharded.set,
    sharded,
    sandbox,
    color: format === 'text' && colorWanted(context.env, isTty(context.stdout)),
    heading: planHeading(context, dir),
    planShowsErrors: format === 'text' && isTty(context.stdout) && isTty(context.stderr),
  };
}

/**
 * What is checked before any request: the manifests (invalid ones need no API: every error is
 * reported), credential files inside the manifests tree (refused before anything is read or
 * written; nothing this process writes goes into the tree: util/manifests-tree.ts), a saved
 * plan against the manifests and secrets, and the shard of a writer (a dry run changes
 * nothing; a sandbox's fleet is its own). An exit code stops the command.
 */
async function admitPass(context: PassContext, request: PassRequest, loaded: LoadedPass): Promise<number | { savedPlan?: PassOptions['savedPlan'] }> {
  const { dryRun, format, log } = request;
  const { manifests, sandbox, color, heading, planShowsErrors } = loaded;
  const { invalidPassResult, refusedPassResult } = await import('../../reconcile/engine.js');
  if (manifests.errors.length > 0) {
    if (!planShowsErrors) for (const error of manifests.errors) log.error({ file: error.file, line: error.line, path: error.path }, error.message);
    context.stdout.write(render(invalidPassResult(manifests, manifests.errors, dryRun, Date.now()), format, color, heading));
    // An apply's broken revision shows in `reconcile status` too (a dry run records nothing; the sandbox's state is its own).
    if (!dryRun && !sandbox) {
      const { recordBrokenRevision } = await import('../../run/conductor.js');
      await recordBrokenRevision({ stateDir: stateDirOf(context.settings, loaded.sharded.shard?.name), timeoutMs: context.settings.lockTimeoutMs, log, ...(manifests.revision ? { revision: manifests.revision } : {}), errors: manifests.errors });
    }
    return EXIT.error;
  }
  const credentialProblems = credentialPathProblems(context, manifests.root);
  if (credentialProblems.length > 0) {
    for (const problem of credentialProblems) log.error({}, problem);
    return EXIT.error;
  }
  protectManifestsTree(manifests.root);
  let savedPlan: PassOptions['savedPlan'];
  if (request.beforeSession) {
    const checked = await request.beforeSession(manifests, sandbox);
    if (checked.refusals.length > 0) {
      if (!planShowsErrors) for (const refusal of checked.refusals) log.error({ resource: refusal.resource }, `the saved plan is refused: ${refusal.reason}`);
      context.stdout.write(render(refusedPassResult(manifests, checked.plan, checked.refusals, Date.now()), format, color, heading));
      return EXIT.error;
    }
    savedPlan = checked.savedPlan;
  }
  if (!dryRun && !sandbox) requireShard(loaded.sharded.map, loaded.sharded.shard);
  return savedPlan ? { savedPlan } : {};
}

/** The conductor's request: the pass, where it runs, and what the command shows on the way (the plan to confirm, a rollout's waves). */
function oneShotRequest(context: PassContext, request: PassRequest, loaded: LoadedPass, savedPlan: PassOptions['savedPlan']): OneShotRequest {
  const { format, log } = request;
  const shard = loaded.sharded.shard;
  const show = (result: PassResult) => context.stdout.write(render(result, format, loaded.color, loaded.heading));
  return {
    settings: runSettings(context.settings),
    env: context.env,
    log,
    openers: sessionOpeners(context),
    stateDir: stateDirOf(context.settings, shard?.name),
    ...(shard ? { shard } : {}),
    manifests: loaded.manifests,
    dryRun: request.dryRun,
    signal: context.signal,
    ...(savedPlan ? { savedPlan } : {}),
    ...(wantsConfirmation(context, loaded.sandbox, request)
      ? { confirm: { show, ask: () => confirm(context, 'Apply these changes? Only `y` or `yes` applies. [y/N] ') } }
      : {}),
    ...(format === 'text' ? { onWave: (result: PassResult) => context.stdout.write(`${render(result, format, loaded.color, loaded.heading)}\n`) } : {}),
    defaultBudgetNote: ONE_SHOT_BUDGET_NOTE,
  };
}

/** The outcome on stdout (the plan or result), in the log, and as the exit code. */
async function presentOutcome(context: PassContext, request: PassRequest, loaded: LoadedPass, outcome: OneShotOutcome): Promise<number> {
  const { dryRun, format, log } = request;
  switch (outcome.kind) {
    case 'not-locked':
      return EXIT.error;
    case 'nothing-to-apply': {
      const planned = outcome.planned;
      log.info({ result: planned.result, requests: planned.requests, changes: planned.plan.hasChanges, dryRun: true }, 'pass finished: nothing to apply');
      return exitCode(planned, false);
    }
    case 'declined':
      context.stderr.write('Nothing was applied.\n');
      return EXIT.error;
    case 'done': {
      const { result } = outcome;
      const shard = loaded.sharded.shard;
      const override = await request.afterPass?.(result, loaded.manifests, loaded.sandbox, loaded.heading);
      // JSON goes out piece by piece: a large fleet's result is never one string in memory.
      if (format === 'json') await writeJson(result, context.stdout);
      else context.stdout.write(render(result, format, loaded.color, loaded.heading));
      log.info({ result: result.result, requests: result.requests, changes: result.plan.hasChanges, dryRun, ...(shard ? { shard: shard.name } : {}) }, 'pass finished');
      if (outcome.lockLost) return EXIT.error;
      return override ?? exitCode(result, context.settings.detailedExitcode);
    }
  }
}

/**
 * Whether a one-shot apply asks before it writes: its standard input (given by bin.ts; a
 * caller in the same process passes none and is never asked) is a terminal (a script's,
 * a pipe's or CI's never is), `--yes` is not given, it is the plain command (not `apply FILE`,
 * whose plan was reviewed when it was saved), and it runs against an API (the sandbox's fleet
 * is a throwaway emulator's).
 */
function wantsConfirmation(context: PassContext, sandbox: boolean, request: PassRequest): boolean {
  if (context.settings.yes || sandbox || request.beforeSession) return false;
  return context.stdin !== undefined && isTty(context.stdin);
}

/** Asks on standard error, reads one line; true for `y` or `yes` (any case) only. End of input or a signal is a no. */
async function confirm(context: PassContext, question: string): Promise<boolean> {
  const input = context.stdin!;
  // Loaded when a person is asked, not by every process at its start.
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input, output: context.stderr, terminal: false });
  try {
    const answer = await new Promise<string | undefined>((resolveAnswer) => {
      const onAbort = () => resolveAnswer(undefined);
      context.signal.addEventListener('abort', onAbort, { once: true });
      lines.once('close', () => resolveAnswer(undefined));
      lines.once('line', (line) => {
        context.signal.removeEventListener('abort', onAbort);
        resolveAnswer(line);
      });
      context.stderr.write(question);
    });
    if (answer === undefined) context.stderr.write('\n');
    return answer !== undefined && /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    lines.close();
    input.pause();
  }
}

/** `--out FILE`: the dry run's plan as data, with what it was computed from; never a secret value. */
async function savePlan(context: PassContext, path: string, result: PassResult, manifests: ManifestSet, sandbox: boolean, log: Logger, heading: { dir: string; environment: string }): Promise<number | undefined> {
  if (result.result === 'invalid' || (result.result === 'failed' && result.plan.entries.length === 0)) {
    log.error({ file: path }, 'the pass planned nothing: no plan is saved');
    return EXIT.error;
  }
  const { buildSavedPlan, newSalt, secretDigests, writeSavedPlan } = await import('../../reconcile/plan-file.js');
  const { secretResolver } = await import('../../reconcile/secret-check.js');
  const salt = newSalt();
  const secrets = secretResolver({ env: context.env, sandbox, onPlaceholder: () => undefined });
  const digests = await secretDigests(manifests.documents, (ref, document) => secrets.resolve(ref, document), salt);
  await writeSavedPlan(path, buildSavedPlan({ manifests, result, salt, secrets: digests, now: Date.now(), heading }));
  log.info({ file: path, entries: result.plan.entries.length }, 'plan saved');
  return undefined;
}

function optionalShardsFile(context: PassContext): { shardsFile?: string } {
  const file = context.settings.shards;
  return file === undefined ? {} : { shardsFile: file };
}
