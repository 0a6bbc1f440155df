// `reconcile [DIR]`: one pass (plan with --dry-run, else apply), the result on stdout in the
// chosen format, logs on stderr. `--watch` hands over to the daemon.
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { openApiSession, type ApiSession } from '../api-session.js';
import { openSandboxSession } from '../sandbox-session.js';
import { UsageError, type CommandContext } from '../context.js';
import { referenceOptions } from '../reference-options.js';
import type { Logger } from '../../util/logger.js';
import { colorWanted } from '../../util/logger.js';
import { isTty, streamLogger } from '../logging.js';
import type { Clock } from '../../util/clock.js';
import type { PassResult } from '../../reconcile/types.js';
import { isChange } from '../../reconcile/summary.js';
import type { PassOptions } from '../../reconcile/engine.js';
import type { Refusal } from '../../reconcile/plan-file.js';
import type { ManifestSet } from '../../manifests/types.js';
import { renderText } from '../../reconcile/render/text.js';
import { renderJson } from '../../reconcile/render/json.js';
import { renderMarkdown } from '../../reconcile/render/markdown.js';
import { systemClock } from '../../util/clock.js';
import { formatElapsed } from '../../util/progress.js';
import { LOCK_FILE, StateLock, StateLockHeldError, commandLine, describeHolder } from '../../util/state-lock.js';
import { shardAuthInputs } from '../../shards/credentials.js';
import { credentialPathProblems } from '../credential-paths.js';
import { ManifestsTreeWriteError, assertOutsideManifests, protectManifestsTree } from '../../util/manifests-tree.js';
import { requireShard, stateDirOf } from '../process-scope.js';
import { DAEMON_DEFAULT_RATE, ONE_SHOT_DEFAULT_RATE } from '../settings.js';
import { parseRate } from '../../util/rate.js';

const OUTPUT_FORMATS = ['text', 'json', 'markdown'] as const;
type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Exit codes of the reconcile command (shared/INTERFACE.md). */
export const EXIT = { success: 0, error: 1, changes: 2 } as const;

/** The manifests directory: DIR or --manifests (not both, unless equal), default the working directory. */
export function manifestsDir(context: Pick<CommandContext, 'positionals' | 'cwd' | 'settings'>): string {
  const positional = context.positionals[0];
  const flag = context.settings.manifests;
  if (context.positionals.length > 1) throw new UsageError(`expected at most one manifests directory, got ${context.positionals.length}: ${context.positionals.join(' ')}`);
  if (positional !== undefined && flag !== undefined && resolve(context.cwd, positional) !== resolve(context.cwd, flag)) {
    throw new UsageError(`two manifests directories given: ${positional} and --manifests ${flag}`);
  }
  return resolve(context.cwd, positional ?? flag ?? '.');
}

export function outputFormat(context: Pick<CommandContext, 'settings'>): OutputFormat {
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
function planHeading(context: CommandContext, dir: string): { dir: string; environment: string } {
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
export function commandLogger(context: CommandContext): Logger {
  return streamLogger(context, context.stderr);
}

export async function run(context: CommandContext): Promise<number> {
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

/** Load, lock, open a session, run one pass, render it: the plain command, and `apply FILE`. */
export async function executePass(context: CommandContext, request: PassRequest): Promise<number> {
  const { dir, dryRun, format, log } = request;
  const detailed = context.settings.detailedExitcode;
  const shardName = context.settings.shard;
  const timeoutMs = context.settings.lockTimeoutMs;
  const organizationWait = context.settings.organizationWaitMs;
  const sandbox = context.settings.sandbox;
  if (shardName !== undefined && sandbox) throw new UsageError('--shard needs a real API (its credentials come from the shard map): drop --sandbox');
  const { loadShardedManifests } = await import('../../shards/load-sharded.js');
  const sharded = await loadShardedManifests(dir, { cwd: context.cwd, load: { references: referenceOptions(context) }, ...(shardName !== undefined ? { shard: shardName } : {}), ...optionalShardsFile(context) });
  const manifests = sharded.set;
  const color = format === 'text' && colorWanted(context.env, isTty(context.stdout));
  const heading = planHeading(context, dir);
  // On a screen (both streams a terminal, the plan as text) the plan already lists every manifest
  // error and refusal: a log line for each would show it twice. Piped or redirected, the log
  // keeps them, as a log file or CI annotation must stand on its own.
  const planShowsErrors = format === 'text' && isTty(context.stdout) && isTty(context.stderr);

  const { runPass, invalidPassResult, refusedPassResult } = await import('../../reconcile/engine.js');
  if (manifests.errors.length > 0) {
    // Invalid manifests need no API: report every error and stop.
    if (!planShowsErrors) for (const error of manifests.errors) log.error({ file: error.file, line: error.line, path: error.path }, error.message);
    context.stdout.write(render(invalidPassResult(manifests, manifests.errors, dryRun, Date.now()), format, color, heading));
    return EXIT.error;
  }
  // Credential files inside the manifests tree are refused before anything is read or written;
  // and nothing this process writes goes into the tree (util/manifests-tree.ts).
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
  // A dry run changes nothing; a sandbox's fleet is its own.
  if (!dryRun && !sandbox) requireShard(sharded.map, sharded.shard);

  // A writer holds the state directory's lock, taken before the session (opening the client
  // writes the request window). A dry run takes none: it writes no record of the state
  // directory (the pass records nothing of its own, and a dry run's status is not recorded);
  // only the request window, whose writes share it with a running daemon under a lock of their
  // own (api/window-store.ts). With OAuth, the rotated refresh token is written there too: a
  // dry run then takes the lock as a writer does.
  const needsLock = !dryRun || oauthInStateDir(context.env);
  let lock: StateLock | undefined;
  const lost = new AbortController();
  const takeLock = async (stateDir: string): Promise<boolean> => {
    try {
      assertOutsideManifests(join(stateDir, LOCK_FILE));
    } catch (error) {
      if (!(error instanceof ManifestsTreeWriteError)) throw error;
      log.error({ stateDir }, `the state directory ${stateDir} lies inside the manifests tree ${error.root}: choose --state-dir outside it, or a dot-directory such as .reconcile`);
      return false;
    }
    const result = await StateLock.acquire({
      dir: stateDir,
      clock: systemClock,
      timeoutMs,
      command: commandLine(),
      onLost: (holder) => {
        log.error({ holder }, `the state lock of ${stateDir} was taken over by another process: stopping this pass`);
        lost.abort(new Error('the state lock was lost'));
      },
    });
    if (result.acquired) {
      lock = result.lock;
      if (result.tookOver) log.warn({ stateDir, holder: result.tookOver, generation: result.lock.generation }, `took over the stale state lock of ${describeHolder(result.tookOver, systemClock.now())}`);
      return true;
    }
    log.error({ stateDir, holder: result.holder }, new StateLockHeldError(stateDir, result.holder, systemClock.now()).message);
    return false;
  };
  let session: (ApiSession & { clock?: Clock; rolloutClock?: Clock }) | undefined;
  try {
    if (sandbox) {
      session = await openSandboxSession(context.settings, log);
      if (!(await takeLock(session.stateDir))) return EXIT.error;
    } else {
      const stateDir = stateDirOf(context.settings, sharded.shard?.name);
      if (needsLock && !(await takeLock(stateDir))) return EXIT.error;
      session = await openApiSession(context.settings, context.env, {
        log,
        ...(sharded.shard
          ? {
              shard: {
                auth: shardAuthInputs(sharded.shard, context.env, context.settings.apiUrl),
                stateDir,
                ...(sharded.shard.rate ? { rate: sharded.shard.rate } : {}),
              },
            }
          : {}),
      });
    }
    const passOptions = {
      manifests,
      client: session.client,
      stateDir: session.stateDir,
      env: context.env,
      log,
      sandbox,
      allowEmpty: context.settings.allowEmpty,
      organizationWaitMs: organizationWait,
      // A fenced write that finds the lock taken marks it lost at once (before the heartbeat says so).
      signal: AbortSignal.any([context.signal, lost.signal, ...(lock ? [(lock as StateLock).signal] : [])]),
      ...(session.clock ? { clock: session.clock } : {}),
      ...(session.rolloutClock ? { rolloutClock: session.rolloutClock } : {}),
      ...(!sandbox && context.settings.rateLimit === undefined && !sharded.shard?.rate ? { budgetNote: ONE_SHOT_BUDGET_NOTE } : {}),
    };
    // On a terminal, a one-shot apply shows the plan and asks first; what is applied is then
    // exactly the plan shown (checked entry for entry, as a saved plan is).
    let confirmed: PassOptions['savedPlan'];
    if (!dryRun && !savedPlan && wantsConfirmation(context, sandbox, request)) {
      const planned = await runPass({ ...passOptions, dryRun: true });
      context.stdout.write(render(planned, format, color, heading));
      // Nothing to apply (in sync, or nothing could be planned): the plan says why. A plan with
      // changes is asked about even when part of it failed or is blocked, as a direct apply
      // would apply the rest.
      if (!planned.plan.hasChanges) {
        log.info({ result: planned.result, requests: planned.requests, changes: planned.plan.hasChanges, dryRun: true }, 'pass finished: nothing to apply');
        return exitCode(planned, false);
      }
      if (!(await confirm(context, 'Apply these changes? Only `y` or `yes` applies. [y/N] '))) {
        context.stderr.write('Nothing was applied.\n');
        return EXIT.error;
      }
      const { buildSavedPlan, entryRefusals, newSalt } = await import('../../reconcile/plan-file.js');
      const shown = buildSavedPlan({ manifests, result: planned, salt: newSalt(), secrets: [], now: Date.now() });
      savedPlan = { check: (entries) => entryRefusals(shown, entries) };
      // A rollout's later waves write only changes the plan shown had, with the same action and
      // field changes (what they depend on may have been created since; the earlier waves'
      // entries are in sync by then).
      const asShown = (entry: PassResult['plan']['entries'][number]) =>
        JSON.stringify([entry.action, entry.changes.map((change) => (change.sensitive ? { path: change.path, sensitive: true } : change))]);
      const shownEntries = new Map(planned.plan.entries.map((entry) => [entry.id, asShown(entry)]));
      confirmed = {
        check: (entries) =>
          entries
            .filter((entry) => isChange(entry) && shownEntries.get(entry.id) !== asShown(entry))
            .map((entry) => ({ resource: entry.id, reason: `not as in the plan that was confirmed: the live state or the manifests now call for \`${entry.action}\`${entry.changes.length ? ` of ${entry.changes.map((c) => c.path).join(', ')}` : ''}` })),
      };
    }
    let result = await runPass({ ...passOptions, dryRun, ...(savedPlan ? { savedPlan } : {}) });
    // A rollout's gates: a direct apply waits through each soak and applies the next wave,
    // until every wave is done, the rollout halts, or what is left waits for a window or an
    // approval (the daemon's work). `reconcile apply FILE` applies only what its gates allowed.
    let anyFailed = result.result !== 'success';
    if (!dryRun && !request.beforeSession) {
      const gateClock = session.rolloutClock ?? session.clock ?? systemClock;
      for (;;) {
        const next = result.rollout?.next;
        if (!next || next.reason === 'window' || result.rollout?.halted || passOptions.signal.aborted) break;
        if (format === 'text') context.stdout.write(`${render(result, format, color, heading)}\n`);
        await waitForGate(result.rollout!, gateClock, log, passOptions.signal);
        if (passOptions.signal.aborted) break;
        result = await runPass({ ...passOptions, dryRun, ...(confirmed ? { savedPlan: confirmed } : {}) });
        anyFailed ||= result.result !== 'success';
      }
    }
    // A halted rollout is a failed apply, whether the halting pass failed or its health check did.
    if ((anyFailed || (!dryRun && result.rollout?.halted !== undefined)) && result.result === 'success') result = { ...result, result: 'failed' };
    // What an apply found and did, for `reconcile status` without a daemon (a dry run records nothing).
    // A lock found lost by a fenced write is marked at once, before the heartbeat's report.
    const lockLost = () => lost.signal.aborted || ((lock as StateLock | undefined)?.signal.aborted ?? false);
    if (!dryRun && !lockLost()) {
      const { recordPassInStateDir } = await import('../../status/status-file.js');
      await recordPassInStateDir(session.stateDir, result, { newestCheckout: true }, systemClock.now()).catch((error: unknown) =>
        log.warn({ err: error, stateDir: session!.stateDir }, 'recording the status in the state directory failed; reconcile status shows an older view'),
      );
    }
    const override = await request.afterPass?.(result, manifests, sandbox, heading);
    context.stdout.write(render(result, format, color, heading));
    log.info(
      { result: result.result, requests: result.requests, changes: result.plan.hasChanges, dryRun, ...(sharded.shard ? { shard: sharded.shard.name } : {}) },
      'pass finished',
    );
    if (lockLost()) return EXIT.error;
    return override ?? exitCode(result, detailed);
  } finally {
    await session?.close();
    await (lock as StateLock | undefined)?.release();
  }
}

/** OAuth whose rotated refresh token is kept in the state directory (no MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE). */
function oauthInStateDir(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.MANAGEMENT_API_OAUTH_CLIENT_ID) && !env.MANAGEMENT_API_OAUTH_REFRESH_TOKEN_FILE;
}

/**
 * Waits for a rollout's next gate (the end of the current wave's soak), with progress lines:
 * one when the wait starts, then about every sixth of it (at least every 5 s of the gate's clock).
 */
async function waitForGate(rollout: NonNullable<PassResult['rollout']>, clock: Clock, log: Logger, signal?: AbortSignal): Promise<void> {
  const next = rollout.next!;
  const index = rollout.waves.findIndex((wave) => wave.state === 'soaking' || wave.state === 'applying');
  const wave = rollout.waves[index];
  const following = rollout.waves[index + 1];
  const total = Math.max(0, next.at - clock.now());
  const chunk = Math.max(5_000, Math.ceil(total / 6));
  const fields = { gate: next.reason, rollout: rollout.name, ...(wave ? { wave: wave.name } : {}), ...(following ? { next: following.name } : {}) };
  if (next.reason === 'soak' && wave) {
    log.info({ ...fields, soakS: Math.round(total / 1000) }, `rollout ${rollout.name}: wave ${wave.name} is applied and healthy; soaking for ${formatElapsed(total / 1000)} before ${following ? `wave ${following.name}` : 'the rollout is done'}`);
  }
  for (;;) {
    const left = next.at - clock.now();
    if (left <= 0) break;
    try {
      await clock.sleep(Math.min(left, chunk), signal);
    } catch {
      return;
    }
    const remaining = next.at - clock.now();
    if (remaining > 0) log.info({ ...fields, leftS: Math.round(remaining / 1000) }, `rollout ${rollout.name}: wave ${wave?.name ?? ''} soaking, ${formatElapsed(remaining / 1000)} left`);
  }
  log.info(fields, following ? `rollout ${rollout.name}: the gate of wave ${wave?.name ?? ''} is due; checking its health, then wave ${following.name}` : `rollout ${rollout.name}: the last soak ended; checking its health`);
}

/**
 * Whether a one-shot apply asks before it writes: its standard input (given by bin.ts; a
 * caller in the same process passes none and is never asked) is a terminal (a script's,
 * a pipe's or CI's never is), `--yes` is not given, it is the plain command (not `apply FILE`,
 * whose plan was reviewed when it was saved), and it runs against an API (the sandbox's fleet
 * is a throwaway emulator's).
 */
function wantsConfirmation(context: CommandContext, sandbox: boolean, request: PassRequest): boolean {
  if (context.settings.yes || sandbox || request.beforeSession) return false;
  return context.stdin !== undefined && isTty(context.stdin);
}

/** Asks on standard error, reads one line; true for `y` or `yes` (any case) only. End of input or a signal is a no. */
async function confirm(context: CommandContext, question: string): Promise<boolean> {
  const input = context.stdin!;
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
async function savePlan(context: CommandContext, path: string, result: PassResult, manifests: ManifestSet, sandbox: boolean, log: Logger, heading: { dir: string; environment: string }): Promise<number | undefined> {
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

function optionalShardsFile(context: CommandContext): { shardsFile?: string } {
  const file = context.settings.shards;
  return file === undefined ? {} : { shardsFile: file };
}
