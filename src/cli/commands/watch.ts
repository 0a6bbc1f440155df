import { join, resolve } from 'node:path';
import { openApiSession, type ApiSession } from '../api-session.js';
import { openSandboxSession } from '../sandbox-session.js';
import { UsageError, type CommandContext } from '../context.js';
import { referenceOptions } from '../reference-options.js';
import { systemClock, type Clock } from '../../util/clock.js';
import type { Logger } from '../../util/logger.js';
import { streamLogger } from '../logging.js';
import { buildRevision, packageVersion } from '../version.js';
import { ApiHealth } from '../../daemon/api-health.js';
import { Daemon } from '../../daemon/controller.js';
import { nodeCronTrigger, type CronTrigger } from '../../daemon/cron-trigger.js';
import { freshnessWriter } from '../../daemon/freshness-file.js';
import { parseListenAddress, startHttpServer, type RunningHttpServer } from '../../daemon/http-server.js';
import { createMetrics, createNotificationMetrics } from '../../daemon/metrics.js';
import { createObserver, observeReadsPerProject } from '../../daemon/observer.js';
import { watchSource } from '../../daemon/source-watcher.js';
import { triggerRoutes, type TriggerSettings } from '../../daemon/trigger.js';
import { StatusBoard } from '../../daemon/status-board.js';
import { statusRoutes, type StatusRouteSettings } from '../../daemon/status-routes.js';
import { projectNames } from '../../daemon/change-set.js';
import { NotificationsConfigError, type NotificationSettings } from '../../notify/config.js';
import { eventFromBrokenRevision, eventsFromPass } from '../../notify/events.js';
import { DEDUP_STATE_FILE, Notifier } from '../../notify/notifier.js';
import { notificationSettings } from '../notification-settings.js';
import type { ObservedResource } from '../../reconcile/kinds/observed.js';
import { credentialPathProblems } from '../credential-paths.js';
import { ManifestsTreeWriteError, assertOutsideManifests, protectManifestsTree } from '../../util/manifests-tree.js';
import { notificationSecretFiles } from '../notification-settings.js';
import { LOCK_FILE, StateLock, StateLockHeldError, commandLine, describeHolder, waitForStateLock } from '../../util/state-lock.js';
import { shardAuthInputs } from '../../shards/credentials.js';
import { findShard, readShardMapFor } from '../../shards/load-sharded.js';
import { ParseCache } from '../../manifests/parse-cache.js';
import { requireShard, stateDirOf } from '../process-scope.js';
import { ShardMapError, type Shard, type ShardMap } from '../../shards/shard-map.js';

/** Longest a shutdown takes, from the signal to the exit (documented in docs/operations.md). */
const SHUTDOWN_BUDGET_MS = 10_000;
/** Of that, how long passes in flight get to return after their signal is aborted. */
const PASS_GRACE_MS = 7_000;
/** Then the client's close (persisting the request window) and the HTTP server. */
const CLOSE_GRACE_MS = 2_000;

/** `/readyz` wants a valid answer from the API within this many resync intervals (and at least 15 minutes). */
const READY_INTERVALS = 3;
const READY_MIN_MS = 15 * 60_000;

function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work.finally(() => clearTimeout(timer)),
    new Promise<undefined>((resolveTimeout) => {
      timer = setTimeout(() => resolveTimeout(undefined), ms);
      timer.unref();
    }),
  ]);
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolveAbort) => signal.addEventListener('abort', () => resolveAbort(), { once: true }));
}

interface DaemonSettings {
  manifestsPath: string;
  /** `continuous` or a cron expression. */
  resync: string;
  /** `--max-observation-age`, ms. */
  maxObservationAgeMs?: number;
  metricsAddress: ReturnType<typeof parseListenAddress>;
  /** `--metrics-per-resource`: per-resource series, or per project only. */
  metricsPerResource: boolean;
  dryRun: boolean;
  allowEmpty: boolean;
  sandbox: boolean;
  /** Observed-only facts read on each drift re-check (`--observe`). */
  observe: ObservedResource[];
  notifications?: NotificationSettings;
  triggers: TriggerSettings;
  /** `GET /status` and the status page: the token, the runbook's address. */
  status: StatusRouteSettings;
}

/** Seconds between the status page's refreshes. */
const STATUS_PAGE_REFRESH_SECONDS = 15;

/** Validates the daemon's options up front, with messages that name the option. */
async function settingsFrom(context: CommandContext): Promise<DaemonSettings> {
  if (context.positionals.length > 1) {
    throw new UsageError(`expected at most one manifests directory, got ${context.positionals.length}: ${context.positionals.join(' ')}`);
  }
  const options = context.settings;
  const manifests = options.manifests ?? context.positionals[0] ?? '.';
  let notifications: NotificationSettings | undefined;
  try {
    notifications = await notificationSettings(context);
  } catch (error) {
    if (error instanceof NotificationsConfigError) throw new UsageError(error.message);
    throw error;
  }
  const tokenFile = options.triggerTokenFile;
  const webhookSecretFile = options.webhookSecretFile;
  const statusTokenFile = options.statusTokenFile;
  const runbookUrl = options.runbookUrl;
  return {
    status: {
      refreshSeconds: STATUS_PAGE_REFRESH_SECONDS,
      ...(statusTokenFile ? { tokenFile: resolve(context.cwd, statusTokenFile) } : {}),
      public: options.statusPublic,
      ...(runbookUrl ? { runbookUrl } : {}),
    },
    notifications,
    triggers: {
      ...(tokenFile ? { tokenFile: resolve(context.cwd, tokenFile) } : {}),
      ...(webhookSecretFile ? { webhookSecretFile: resolve(context.cwd, webhookSecretFile) } : {}),
    },
    manifestsPath: resolve(context.cwd, manifests),
    resync: options.resync,
    ...(options.maxObservationAgeMs !== undefined ? { maxObservationAgeMs: options.maxObservationAgeMs } : {}),
    metricsAddress: options.metricsAddress,
    metricsPerResource: options.metricsPerResource,
    dryRun: options.dryRun,
    allowEmpty: options.allowEmpty,
    sandbox: options.sandbox,
    observe: options.observe,
  };
}

/**
 * `reconcile --watch`: the long-running daemon. Logs JSON lines on stdout (readable on a TTY),
 * serves `/metrics`, `/healthz` and `/readyz`, and exits 0 within SHUTDOWN_BUDGET_MS of
 * SIGTERM or SIGINT (main.ts aborts `context.signal`).
 */
export async function runDaemon(context: CommandContext): Promise<number> {
  const settings = await settingsFrom(context);
  const timeoutMs = context.settings.lockTimeoutMs;
  const organizationWait = context.settings.organizationWaitMs;
  const shardName = context.settings.shard;
  const shardsFile = context.settings.shards;
  if (shardName !== undefined && settings.sandbox) throw new UsageError('--shard needs a real API (its credentials come from the shard map): drop --sandbox');
  const clock = systemClock;
  const log: Logger = streamLogger(context, context.stdout);
  const metrics = createMetrics(undefined, {
    clock,
    perResource: settings.metricsPerResource,
    build: { version: packageVersion(), revision: buildRevision(context.env) },
  });
  const health = new ApiHealth(clock);
  const trigger: CronTrigger | 'continuous' = settings.resync === 'continuous' ? 'continuous' : nodeCronTrigger(settings.resync);
  if (settings.maxObservationAgeMs !== undefined) metrics.setMaxObservationAge(settings.maxObservationAgeMs / 1000);
  // /readyz's API check looks back over a few resync periods: the cron interval, or the continuous bound.
  const resyncPeriodMs = () => (trigger === 'continuous' ? (daemon?.observationAgeBound() ?? 0) : trigger.intervalMs());
  const notifier = settings.notifications
    ? new Notifier({
        settings: settings.notifications,
        clock,
        log,
        env: context.env,
        metrics: createNotificationMetrics(metrics.registry, settings.notifications.receivers.map((receiver) => receiver.name)),
      })
    : undefined;

  // The shard's credentials and state directory are read once, at start; the partition is
  // checked again with every revision.
  const scope = { cwd: context.cwd, ...(shardsFile !== undefined ? { shardsFile } : {}) };
  let shard: Shard | undefined;
  let map: ShardMap | undefined;
  try {
    map = await readShardMapFor(settings.manifestsPath, scope);
  } catch (error) {
    if (!(error instanceof ShardMapError)) throw error;
    for (const e of error.errors) log.fatal({ file: e.file, line: e.line, path: e.path }, e.message);
    log.flush?.();
    return 1;
  }
  if (shardName !== undefined) {
    if (!map) throw new UsageError(`--shard ${shardName} needs a shard map: shards.yaml in the manifests directory or --shards FILE`);
    const found = findShard(map, shardName);
    if (!('selector' in found)) throw new UsageError(found.message);
    shard = found;
  }
  if (!settings.dryRun && !settings.sandbox) requireShard(map, shard);

  // Credential and secret files inside the manifests tree are refused; nothing this process
  // writes goes into the tree (util/manifests-tree.ts).
  const credentialProblems = credentialPathProblems(context, settings.manifestsPath, [
    ['--trigger-token-file', settings.triggers.tokenFile],
    ['--webhook-secret-file', settings.triggers.webhookSecretFile],
    ['--status-token-file', settings.status.tokenFile],
    ...(settings.notifications?.receivers ?? []).flatMap((receiver): Array<[string, string]> =>
      notificationSecretFiles(receiver).map((file) => [`the notification receiver \`${receiver.name}\`'s secret file`, file]),
    ),
    ...(map?.shards ?? []).flatMap((s): Array<[string, string]> => [
      ...('tokenFile' in s.credentials ? [[`${map!.file}: shard \`${s.name}\` credentials.tokenFile`, s.credentials.tokenFile] as [string, string]] : []),
      ...('oauth' in s.credentials && s.credentials.oauth.refreshTokenFile !== undefined
        ? [[`${map!.file}: shard \`${s.name}\` credentials.oauth.refreshTokenFile`, s.credentials.oauth.refreshTokenFile] as [string, string]]
        : []),
    ]),
  ]);
  if (credentialProblems.length > 0) {
    for (const problem of credentialProblems) log.fatal({}, problem);
    log.flush?.();
    await notifier?.close();
    return 1;
  }
  protectManifestsTree(settings.manifestsPath);

  let session: (ApiSession & { clock?: Clock; rolloutClock?: Clock }) | undefined;
  let daemon: Daemon | undefined;
  let board: StatusBoard | undefined;
  // Why this process may not write yet (another process holds the state directory's lock).
  let lockProblem: string | undefined = 'the state directory lock is not taken yet';
  let server: RunningHttpServer;
  // The routes exist from the start (a webhook may arrive while the lock is awaited); until the
  // daemon runs they answer 503.
  const routes = Object.fromEntries(
    Object.entries(
      triggerRoutes(
        {
          requestPass: (request) => daemon!.requestPass(request),
          reload: () => daemon!.reload(),
          approve: (request) => daemon!.approve(request),
          resume: (request) => daemon!.resume(request),
        },
        settings.triggers,
        log,
      ),
    ).map(([path, route]) => [
      path,
      { ...route, handle: (request: Parameters<typeof route.handle>[0]) => (daemon ? route.handle(request) : Promise.resolve({ status: 503, body: { message: lockProblem ?? 'the daemon is starting' } })) },
    ]),
  );
  // The view exists once the state directory is locked and read; until then the answer is 503.
  const statusGets = Object.fromEntries(
    Object.entries(statusRoutes({ view: () => board!.view() }, settings.status, log)).map(([path, route]) => [
      path,
      {
        handle: (request: Parameters<typeof route.handle>[0]) =>
          board ? route.handle(request) : Promise.resolve({ status: 503, contentType: 'application/json', body: JSON.stringify({ message: lockProblem ?? 'the daemon is starting' }) }),
      },
    ]),
  );
  try {
    // Up before the lock is taken: a waiting daemon answers /readyz with the reason.
    server = await startHttpServer(
      settings.metricsAddress,
      {
        metrics: async () => {
          if (session) {
            const budget = session.client.budget();
            metrics.budget(budget.remaining, budget.effectiveLimit);
          }
          return { contentType: metrics.contentType, body: await metrics.render() };
        },
        readiness: () => {
          const reasons = lockProblem ? [lockProblem] : [];
          if (daemon) reasons.push(...daemon.readiness().reasons);
          else if (!lockProblem) reasons.push('starting');
          const problem = health.problem(Math.max(READY_INTERVALS * resyncPeriodMs(), READY_MIN_MS));
          if (problem && !lockProblem) reasons.push(problem);
          return { ready: reasons.length === 0, reasons };
        },
        post: routes,
        get: statusGets,
      },
      log,
    );
  } catch (error) {
    log.fatal({ err: error, address: settings.metricsAddress }, 'could not listen on --metrics-addr');
    await notifier?.close();
    log.flush?.();
    return 1;
  }

  log.info({ metrics: server.url }, 'serving /metrics, /healthz, /readyz, /status and the status page (/)');
  const lost = new AbortController();
  let lock: StateLock | undefined;
  let stateDirRefused = false;
  const waitForLock = async (stateDir: string): Promise<boolean> => {
    try {
      assertOutsideManifests(join(stateDir, LOCK_FILE));
    } catch (error) {
      if (!(error instanceof ManifestsTreeWriteError)) throw error;
      lockProblem = `the state directory ${stateDir} lies inside the manifests tree ${error.root}`;
      stateDirRefused = true;
      log.fatal({ stateDir }, `${lockProblem}: choose --state-dir outside it, or a dot-directory such as .reconcile`);
      return false;
    }
    let reported: string | undefined;
    const taken = await waitForStateLock({
      dir: stateDir,
      clock,
      timeoutMs,
      command: commandLine(),
      signal: context.signal,
      onWaiting: (holder) => {
        const held = new StateLockHeldError(stateDir, holder, clock.now());
        lockProblem = held.message;
        // Once per holder: the wait retries every heartbeat interval.
        if (reported !== holder.id) log.warn({ stateDir, holder }, `waiting: ${held.message}; taking over when its heartbeat is older than ${timeoutMs / 1000} s`);
        reported = holder.id;
      },
      onLost: (holder) => {
        metrics.setStateLockHeld(false);
        lockProblem = `the state lock of ${stateDir} was taken over by another process`;
        log.error({ stateDir, holder }, 'the state lock was taken over by another process: stopping (restart to wait for it again)');
        lost.abort(new Error('the state lock was lost'));
      },
    });
    if (!taken) return false;
    lock = taken.lock;
    lockProblem = undefined;
    metrics.setStateLockHeld(true);
    if (taken.tookOver) {
      const age = clock.now() - taken.tookOver.heartbeatAt;
      // `holderGone`: its process no longer exists (taken at once), else its heartbeat was older than the timeout.
      const gone = age <= timeoutMs;
      log.warn({ stateDir, holder: taken.tookOver, heartbeatAgeMs: age, lockTimeoutMs: timeoutMs, holderGone: gone, generation: taken.lock.generation }, `took over the stale state lock of ${describeHolder(taken.tookOver, clock.now())}${gone ? ': its process is gone' : ''}`);
    }
    log.info({ stateDir, generation: taken.lock.generation }, 'holding the state directory lock');
    return true;
  };
  const release = async () => {
    await (lock as StateLock | undefined)?.release();
    metrics.setStateLockHeld(false);
  };

  try {
    const telemetry = health.wrap(metrics);
    if (settings.sandbox) {
      session = await openSandboxSession(context.settings, log, { telemetry });
      if (!(await waitForLock(session.stateDir))) {
        await Promise.allSettled([session.close(), server.close(), notifier?.close()]);
        return stateDirRefused ? 1 : 0;
      }
    } else {
      const stateDir = stateDirOf(context.settings, shard?.name);
      if (!(await waitForLock(stateDir))) {
        await Promise.allSettled([server.close(), notifier?.close()]);
        return stateDirRefused ? 1 : 0;
      }
      session = await openApiSession(context.settings, context.env, {
        telemetry,
        log,
        clock,
        ...(shard
          ? { shard: { auth: shardAuthInputs(shard, context.env, context.settings.apiUrl), stateDir, ...(shard.rate ? { rate: shard.rate } : {}) } }
          : {}),
      });
    }
  } catch (error) {
    await release();
    await Promise.allSettled([server.close(), notifier?.close()]);
    if (error instanceof UsageError) throw error;
    log.fatal({ err: error }, 'could not set up the API client');
    log.flush?.();
    return 1;
  }
  const open: ApiSession & { clock?: Clock; rolloutClock?: Clock } = session;
  metrics.budget(open.client.budget().remaining, open.client.budget().effectiveLimit);

  const [{ runPass }, { loadShardedManifests }] = await Promise.all([import('../../reconcile/engine.js'), import('../../shards/load-sharded.js')]);

  // What earlier processes sent: a restart does not send standing failures again.
  await notifier?.restore(join(open.stateDir, DEDUP_STATE_FILE));
  const freshnessFile = freshnessWriter(
    open.stateDir,
    { resync: settings.resync, ...(settings.maxObservationAgeMs !== undefined ? { maxObservationAgeSeconds: settings.maxObservationAgeMs / 1000 } : {}) },
    clock,
    log,
  );
  const statusBoard = new StatusBoard({
    stateDir: open.stateDir,
    clock,
    log,
    dryRun: settings.dryRun,
    ...(shard ? { shard: shard.name } : {}),
    live: () => {
      const current = daemon?.current();
      const bound = daemon?.observationAgeBound();
      return {
        ...(current?.revision ? { revision: current.revision } : {}),
        ...(current ? { projects: projectNames(current.set) } : {}),
        freshness: {
          resync: settings.resync,
          ...(bound !== undefined ? { boundSeconds: bound / 1000 } : {}),
          ...(settings.maxObservationAgeMs !== undefined ? { maxObservationAgeSeconds: settings.maxObservationAgeMs / 1000 } : {}),
        },
      };
    },
  });
  await statusBoard.load();
  board = statusBoard;
  // Each commit's load parses again only the files it changed.
  const parseCache = new ParseCache();
  daemon = new Daemon({
    manifestsPath: settings.manifestsPath,
    loadManifests: async (dir) => {
      const sharded = await loadShardedManifests(dir, { ...scope, load: { references: referenceOptions(context), parseCache }, ...(shard ? { shard: shard.name } : {}) });
      metrics.setUnownedProjects(sharded.unowned);
      return sharded.set;
    },
    runPass: (request) =>
      runPass({
        manifests: request.manifests,
        client: open.client,
        stateDir: open.stateDir,
        dryRun: settings.dryRun,
        env: context.env,
        log,
        // The sandbox's clock runs waits at the emulator's lifecycle speed.
        clock: open.clock ?? clock,
        ...(open.rolloutClock ? { rolloutClock: open.rolloutClock } : {}),
        sandbox: settings.sandbox,
        allowEmpty: settings.allowEmpty,
        organizationWaitMs: organizationWait,
        signal: AbortSignal.any([request.signal, lost.signal]),
        priority: request.priority,
        ...(request.projects ? { projects: request.projects } : {}),
      }),
    // The same list with --dry-run: every read is side-effect free (network bans are read with
    // a POST that changes nothing).
    ...(settings.observe.length > 0
      ? { observe: createObserver({ api: open.client.api, resources: settings.observe, clock, log }), observeReadsPerProject: observeReadsPerProject(settings.observe) }
      : {}),
    metrics,
    log,
    clock,
    trigger,
    budget: () => {
      const budget = open.client.budget();
      return { limit: budget.effectiveLimit, windowMs: budget.windowMs };
    },
    watch: (path, onEvent) => watchSource({ path, onEvent, log, clock, ignore: [open.stateDir] }),
    allowEmpty: settings.allowEmpty,
    dryRun: settings.dryRun,
    ...(settings.maxObservationAgeMs !== undefined ? { maxObservationAgeMs: settings.maxObservationAgeMs } : {}),
    triggerIntervalMs: context.settings.triggerIntervalMs,
    onFreshness: (freshness) => freshnessFile.write(freshness),
    stateDir: open.stateDir,
    ...(open.rolloutClock ? { rolloutClock: open.rolloutClock } : {}),
    onPass: (result, report) => {
      notifier?.publish(eventsFromPass(result, report, clock.now()));
      statusBoard.recordPass(result, report);
    },
    onManifests: (check) => {
      const broken = eventFromBrokenRevision(check, settings.dryRun, clock.now());
      if (broken) notifier?.publish([broken]);
      statusBoard.recordManifests(check.revision, check.errors);
    },
  });

  log.info(
    {
      manifests: settings.manifestsPath,
      metrics: server.url,
      resync: settings.resync,
      observe: settings.observe,
      dryRun: settings.dryRun,
      sandbox: settings.sandbox ? open.baseUrl : undefined,
      rate: open.rate,
      ...(shard ? { shard: shard.name } : {}),
      notify: settings.notifications?.receivers.map((receiver) => `${receiver.name} (${receiver.type})`),
      triggers: Object.keys(routes),
    },
    'daemon started',
  );

  const started = daemon.start().catch((error: unknown) => log.error({ err: error }, 'daemon start failed'));
  await Promise.race([waitForAbort(context.signal), waitForAbort(lost.signal)]);

  const reason = lost.signal.aborted ? 'the state lock was lost' : context.signal.reason instanceof Error ? context.signal.reason.message : 'signal';
  log.info({ reason, budgetMs: SHUTDOWN_BUDGET_MS }, 'shutting down');
  const settled = await daemon.stop(PASS_GRACE_MS);
  await within(started, 100);
  if (!settled) log.warn({ graceMs: PASS_GRACE_MS }, 'passes did not stop in time; abandoning them');
  const closed = await within(
    Promise.allSettled([freshnessFile.flush(), statusBoard.flush(), open.close(), server.close(), notifier?.close()]).then(() => true),
    CLOSE_GRACE_MS,
  );
  if (!closed) log.warn({ graceMs: CLOSE_GRACE_MS }, 'closing the client or the metrics server timed out');
  // After the client's close: the request window is persisted under the lock.
  await release();
  log.info({}, 'stopped');
  log.flush?.();
  if (!settled || !closed) {
    // Something abandoned above still holds the event loop (a pass stuck in user code, a socket):
    // the exit must stay within the documented bound anyway. Unref'd: a clean exit is not delayed.
    setTimeout(() => process.exit(0), SHUTDOWN_BUDGET_MS - PASS_GRACE_MS - CLOSE_GRACE_MS).unref();
  }
  return lost.signal.aborted ? 1 : 0;
}
