// `reconcile [DIR]`: one pass (plan with --dry-run, else apply), the result on stdout in the
// chosen format, logs on stderr. `--watch` hands over to the daemon.
import { resolve } from 'node:path';
import { openApiSession, type ApiSession } from '../api-session.js';
import { openSandboxSession } from '../sandbox-session.js';
import { UsageError, stringOption, type CommandContext } from '../context.js';
import { referenceOptions } from '../reference-options.js';
import type { Logger } from '../../util/logger.js';
import { colorWanted } from '../../util/logger.js';
import { isTty, streamLogger } from '../logging.js';
import type { Clock } from '../../util/clock.js';
import type { PassResult } from '../../reconcile/types.js';
import { renderText } from '../../reconcile/render/text.js';
import { renderJson } from '../../reconcile/render/json.js';
import { renderMarkdown } from '../../reconcile/render/markdown.js';
import { systemClock } from '../../util/clock.js';
import { StateLock, StateLockHeldError, commandLine, describeHolder } from '../../util/state-lock.js';
import { shardAuthInputs } from '../../shards/credentials.js';
import { lockTimeoutMs, requireShard, stateDirOf } from '../../shards/process-scope.js';

export const OUTPUT_FORMATS = ['text', 'json', 'markdown'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Exit codes of the reconcile command (shared/INTERFACE.md). */
export const EXIT = { success: 0, error: 1, changes: 2 } as const;

/** The manifests directory: DIR or --manifests (not both, unless equal), default the working directory. */
export function manifestsDir(context: CommandContext): string {
  const positional = context.positionals[0];
  const flag = stringOption(context, 'manifests');
  if (context.positionals.length > 1) throw new UsageError(`expected at most one manifests directory, got ${context.positionals.length}: ${context.positionals.join(' ')}`);
  if (positional !== undefined && flag !== undefined && resolve(context.cwd, positional) !== resolve(context.cwd, flag)) {
    throw new UsageError(`two manifests directories given: ${positional} and --manifests ${flag}`);
  }
  return resolve(context.cwd, positional ?? flag ?? '.');
}

export function outputFormat(context: CommandContext): OutputFormat {
  const value = stringOption(context, 'output') ?? 'text';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) {
    throw new UsageError(`--output: expected one of ${OUTPUT_FORMATS.join(', ')}, got \`${value}\``);
  }
  return value as OutputFormat;
}

export function render(result: PassResult, format: OutputFormat, color: boolean): string {
  if (format === 'json') return renderJson(result);
  if (format === 'markdown') return renderMarkdown(result);
  return renderText(result, { color });
}

/** 0 success; 1 invalid manifests, API failure or partial apply; 2 changes planned (dry run with --detailed-exitcode). */
export function exitCode(result: PassResult, detailed: boolean): number {
  if (result.result !== 'success') return EXIT.error;
  if (detailed && result.dryRun && result.plan.hasChanges) return EXIT.changes;
  return EXIT.success;
}

/** One-shot runs log to stderr so that stdout carries only the plan. */
export function commandLogger(context: CommandContext): Logger {
  return streamLogger(context, context.stderr);
}

export async function run(context: CommandContext): Promise<number> {
  if (context.values.watch === true) {
    const { runDaemon } = await import('../../daemon/daemon.js');
    return runDaemon(context);
  }
  const format = outputFormat(context);
  const dir = manifestsDir(context);
  const dryRun = context.values['dry-run'] === true;
  const detailed = context.values['detailed-exitcode'] === true;
  const log = commandLogger(context);

  const shardName = stringOption(context, 'shard');
  const timeoutMs = lockTimeoutMs(context);
  const sandbox = context.values.sandbox === true;
  if (shardName !== undefined && sandbox) throw new UsageError('--shard needs a real API (its credentials come from the shard map): drop --sandbox');
  const { loadShardedManifests } = await import('../../shards/load-sharded.js');
  const sharded = await loadShardedManifests(dir, { cwd: context.cwd, load: { references: referenceOptions(context) }, ...(shardName !== undefined ? { shard: shardName } : {}), ...optionalShardsFile(context) });
  const manifests = sharded.set;
  const color = format === 'text' && colorWanted(context.env, isTty(context.stdout));

  const { runPass, invalidPassResult } = await import('../../reconcile/engine.js');
  if (manifests.errors.length > 0) {
    // Invalid manifests need no API: report every error and stop.
    for (const error of manifests.errors) log.error({ file: error.file, line: error.line, path: error.path }, error.message);
    context.stdout.write(render(invalidPassResult(manifests, manifests.errors, dryRun, Date.now()), format, color));
    return EXIT.error;
  }
  // A dry run writes nothing but its request window; a sandbox's fleet is its own.
  if (!dryRun && !sandbox) requireShard(sharded.map, sharded.shard);

  // The lock comes before the session: opening the client already writes the request window.
  let lock: StateLock | undefined;
  const lost = new AbortController();
  const takeLock = async (stateDir: string): Promise<boolean> => {
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
      if (result.tookOver) log.warn({ stateDir, holder: result.tookOver }, `took over the stale state lock of ${describeHolder(result.tookOver, systemClock.now())}`);
      return true;
    }
    log.error({ stateDir, holder: result.holder }, new StateLockHeldError(stateDir, result.holder, systemClock.now()).message);
    return false;
  };
  let session: (ApiSession & { clock?: Clock }) | undefined;
  try {
    if (sandbox) {
      session = await openSandboxSession(context, log);
      if (!(await takeLock(session.stateDir))) return EXIT.error;
    } else {
      const stateDir = stateDirOf(context, sharded.shard?.name);
      if (!(await takeLock(stateDir))) return EXIT.error;
      session = await openApiSession(context, {
        log,
        ...(sharded.shard
          ? {
              shard: {
                auth: shardAuthInputs(sharded.shard, context.env, stringOption(context, 'api-url')),
                stateDir,
                ...(sharded.shard.rate ? { rate: sharded.shard.rate } : {}),
              },
            }
          : {}),
      });
    }
    const result = await runPass({
      manifests,
      client: session.client,
      stateDir: session.stateDir,
      dryRun,
      env: context.env,
      log,
      sandbox,
      allowEmpty: context.values['allow-empty'] === true,
      signal: AbortSignal.any([context.signal, lost.signal]),
      ...(session.clock ? { clock: session.clock } : {}),
    });
    context.stdout.write(render(result, format, color));
    log.info(
      { result: result.result, requests: result.requests, changes: result.plan.hasChanges, dryRun, ...(sharded.shard ? { shard: sharded.shard.name } : {}) },
      'pass finished',
    );
    return lost.signal.aborted ? EXIT.error : exitCode(result, detailed);
  } finally {
    await session?.close();
    await (lock as StateLock | undefined)?.release();
  }
}

function optionalShardsFile(context: CommandContext): { shardsFile?: string } {
  const file = stringOption(context, 'shards');
  return file === undefined ? {} : { shardsFile: file };
}
