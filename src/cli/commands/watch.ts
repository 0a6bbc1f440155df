import { join, resolve } from 'node:path';
import { UsageError, type ContextOf } from '../context.js';
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
import { protectManifestsTree } from '../../util/manifests-tree.js';
import { notificationSecretFiles } from '../notification-settings.js';
import { findShard, loadShardedManifests, readShardMapFor } from '../../shards/load-sharded.js';
import { ParseCache } from '../../manifests/parse-cache.js';
import { requireShard, stateDirOf } from '../process-scope.js';
import { ShardMapError, type Shard, type ShardMap } from '../../shards/shard-map.js';
import { openDaemonRun, type DaemonRun } from '../../run/conductor.js';
import { runSettings, sessionOpeners } from '../run-request.js';

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
async function settingsFrom(context: ContextOf<'reconcile'>): Promise<DaemonSettings> {
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

/** What the daemon's parts share while it starts, runs and stops. */
interface DaemonState {
  context: ContextOf<'reconcile'>;
  settings: DaemonSettings;
  clock: Clock;
  log: Logger;
  metrics: ReturnType<typeof createMetrics>;
  health: ApiHealth;
  trigger: CronTrigger | 'continuous';
  notifier?: Notifier;
  /** Why this process may not write yet (another process holds the state directory's lock). */
  lockProblem?: string;
  run?: DaemonRun;
  daemon?: Daemon;
  board?: StatusBoard;
  /** The trigger routes served (for the start's log line). */
  triggerPaths?: string[];
}

/** The shard map, and this process's shard in it. */
interface ShardScope {
  map?: ShardMap;
  shard?: Shard;
  /** Where the shard map is read from. */
  scope: { cwd: string; shardsFile?: string };
}

/**
 * `reconcile --watch`: the long-running daemon. Logs JSON lines on stdout (readable on a TTY),
 * serves `/metrics`, `/healthz` and `/readyz`, and exits 0 within SHUTDOWN_BUDGET_MS of
 * SIGTERM or SIGINT (main.ts aborts `context.signal`). The state lock, the session and each
 * pass are the conductor's (src/run/conductor.ts).
 */
export async function runDaemon(context: ContextOf<'reconcile'>): Promise<number> {
  const settings = await settingsFrom(context);
  if (context.settings.shard !== undefined && settings.sandbox) throw new UsageError('--shard needs a real API (its credentials come from the shard map): drop --sandbox');
  const state = daemonState(context, settings);
  const scope = await shardScope(state);
  if (typeof scope === 'number') return scope;
  if (!(await credentialFilesOutsideTree(state, scope))) return 1;
  const server = await startServer(state);
  if (!server) return 1;
  const run = await openRun(state, scope, server);
  if (typeof run === 'number') return run;
  const daemon = await startDaemon(state, scope, run, server);
  return shutDown(state, run, daemon, server);
}

function daemonState(context: ContextOf<'reconcile'>, settings: DaemonSettings): DaemonState {
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
  const notifier = settings.notifications
    ? new Notifier({
        settings: settings.notifications,
        clock,
        log,
        env: context.env,
        metrics: createNotificationMetrics(metrics.registry, settings.notifications.receivers.map((receiver) => receiver.name)),
      })
    : undefined;
  return {
    context,
    settings,
    clock,
    log,
    metrics,
    health,
    trigger,
    ...(notifier ? { notifier } : {}),
    lockProblem: 'the state directory lock is not taken yet',
  };
}

/**
 * The shard's credentials and state directory are read once, at start; the partition is
 * checked again with every revision.
 */
async function shardScope(state: DaemonState): Promise<ShardScope | number> {
  const { context, settings, log } = state;
  const shardName = context.settings.shard;
  const shardsFile = context.settings.shards;
  const scope = { cwd: context.cwd, ...(shardsFile !== undefined ? { shardsFile } : {}) };
  let map: ShardMap | undefined;
  try {
    map = await readShardMapFor(settings.manifestsPath, scope);
  } catch (error) {
    if (!(error instanceof ShardMapError)) throw error;
    for (const e of error.errors) log.fatal({ file: e.file, line: e.line, path: e.path }, e.message);
    log.flush?.();
    return 1;
  }
  let shard: Shard | undefined;
  if (shardName !== undefined) {
    if (!map) throw new UsageError(`--shard ${shardName} needs a shard map: shards.yaml in the manifests directory or --shards FILE`);
    const found = findShard(map, shardName);
    if (!('selector' in found)) throw new UsageError(found.message);
    shard = found;
  }
  if (!settings.dryRun && !settings.sandbox) requireShard(map, shard);
  return { ...(map ? { map } : {}), ...(shard ? { shard } : {}), scope };
}

/**
 * Credential and secret files inside the manifests tree are refused; nothing this process
 * writes goes into the tree (util/manifests-tree.ts).
 */
async function credentialFilesOutsideTree(state: DaemonState, { map }: ShardScope): Promise<boolean> {
  const { context, settings, log } = state;
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
    await state.notifier?.close();
    return false;
  }
  protectManifestsTree(settings.manifestsPath);
  return true;
}

/**
 * The HTTP server, up before the lock is taken: a waiting daemon answers /readyz with the
 * reason. The routes exist from the start (a webhook may arrive while the lock is awaited);
 * until the daemon runs they answer 503, and so does the status view until the state
 * directory is locked and read.
 */
async function startServer(state: DaemonState): Promise<RunningHttpServer | undefined> {
  const { settings, log, metrics, health, trigger } = state;
  const notYet = () => state.lockProblem ?? 'the daemon is starting';
  const routes = Object.fromEntries(
    Object.entries(
      triggerRoutes(
        {
          requestPass: (request) => state.daemon!.requestPass(request),
          reload: () => state.daemon!.reload(),
          approve: (request) => state.daemon!.approve(request),
          resume: (request) => state.daemon!.resume(request),
        },
        settings.triggers,
        log,
      ),
    ).map(([path, route]) => [
      path,
      { ...route, handle: (request: Parameters<typeof route.handle>[0]) => (state.daemon ? route.handle(request) : Promise.resolve({ status: 503, body: { message: notYet() } })) },
    ]),
  );
  const statusGets = Object.fromEntries(
    Object.entries(statusRoutes({ view: () => state.board!.view() }, settings.status, log)).map(([path, route]) => [
      path,
      {
        handle: (request: Parameters<typeof route.handle>[0]) =>
          state.board ? route.handle(request) : Promise.resolve({ status: 503, contentType: 'application/json', body: JSON.stringify({ message: notYet() }) }),
      },
    ]),
  );
  // /readyz's API check looks back over a few resync periods: the cron interval, or the continuous bound.
  state.triggerPaths = Object.keys(routes);
  const resyncPeriodMs = () => (trigger === 'continuous' ? (state.daemon?.observationAgeBound() ?? 0) : trigger.intervalMs());
  try {
    return await startHttpServer(
      settings.metricsAddress,
      {
        metrics: async () => {
          const session = state.run?.held.session;
          if (session) {
            const budget = session.client.budget();
            metrics.budget(budget.remaining, budget.effectiveLimit);
          }
          return { contentType: metrics.contentType, body: await metrics.render() };
        },
        readiness: () => {
          const { lockProblem, daemon } = state;
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
    await state.notifier?.close();
    log.flush?.();
    return undefined;
  }
}

/** The conductor's run: the state lock waited for, the session opened; an exit code when it does not start. */
async function openRun(state: DaemonState, { shard }: ShardScope, server: RunningHttpServer): Promise<DaemonRun | number> {
  const { context, settings, log, metrics, clock } = state;
  log.info({ metrics: server.url }, 'serving /metrics, /healthz, /readyz, /status and the status page (/)');
  let opened: Awaited<ReturnType<typeof openDaemonRun>>;
  try {
    opened = await openDaemonRun({
      settings: runSettings(context.settings),
      env: context.env,
      log,
      openers: sessionOpeners(context),
      stateDir: stateDirOf(context.settings, shard?.name),
      ...(shard ? { shard } : {}),
      clock,
      dryRun: settings.dryRun,
      signal: context.signal,
      onWaiting: (problem) => {
        state.lockProblem = problem;
      },
      onTaken: () => {
        state.lockProblem = undefined;
        metrics.setStateLockHeld(true);
      },
      onLost: (problem) => {
        metrics.setStateLockHeld(false);
        state.lockProblem = problem;
      },
      telemetry: state.health.wrap(metrics),
    });
  } catch (error) {
    metrics.setStateLockHeld(false);
    await Promise.allSettled([server.close(), state.notifier?.close()]);
    if (error instanceof UsageError) throw error;
    log.fatal({ err: error }, 'could not set up the API client');
    log.flush?.();
    return 1;
  }
  if ('refused' in opened) {
    if (opened.refused === 'inside-manifests') state.lockProblem = opened.problem;
    await Promise.allSettled([server.close(), state.notifier?.close()]);
    return opened.refused === 'inside-manifests' ? 1 : 0;
  }
  state.run = opened.run;
  return opened.run;
}

/** The daemon's view of the status record, folded through the run's writer. */
function statusBoard(state: DaemonState, run: DaemonRun, shard: Shard | undefined): StatusBoard {
  const { settings } = state;
  return new StatusBoard({
    recorder: run.recorder,
    clock: state.clock,
    dryRun: settings.dryRun,
    ...(shard ? { shard: shard.name } : {}),
    live: () => {
      const current = state.daemon?.current();
      const bound = state.daemon?.observationAgeBound();
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
}

/** The controller: each revision's manifests (this shard's), its passes through the conductor, what it tells the notifier and the status board. */
function buildDaemon(state: DaemonState, { shard, scope }: ShardScope, run: DaemonRun, board: StatusBoard, freshnessFile: ReturnType<typeof freshnessWriter>): Daemon {
  const { context, settings, log, metrics, clock, notifier } = state;
  const session = run.held.session;
  // Each commit's load parses again only the files it changed.
  const parseCache = new ParseCache();
  return new Daemon({
    manifestsPath: settings.manifestsPath,
    loadManifests: async (dir) => {
      const sharded = await loadShardedManifests(dir, { ...scope, load: { references: referenceOptions(context), parseCache }, ...(shard ? { shard: shard.name } : {}) });
      metrics.setUnownedProjects(sharded.unowned);
      return sharded.set;
    },
    runPass: (request) => run.pass(request),
    // The same list with --dry-run: every read is side-effect free (network bans are read with
    // a POST that changes nothing).
    ...(settings.observe.length > 0
      ? { observe: createObserver({ api: session.client.api, resources: settings.observe, clock, log }), observeReadsPerProject: observeReadsPerProject(settings.observe) }
      : {}),
    metrics,
    log,
    clock,
    trigger: state.trigger,
    budget: () => {
      const budget = session.client.budget();
      return { limit: budget.effectiveLimit, windowMs: budget.windowMs };
    },
    watch: (path, onEvent) => watchSource({ path, onEvent, log, clock, ignore: [session.stateDir] }),
    allowEmpty: settings.allowEmpty,
    dryRun: settings.dryRun,
    ...(settings.maxObservationAgeMs !== undefined ? { maxObservationAgeMs: settings.maxObservationAgeMs } : {}),
    triggerIntervalMs: context.settings.triggerIntervalMs,
    onFreshness: (freshness) => freshnessFile.write(freshness),
    stateDir: session.stateDir,
    ...(session.rolloutClock ? { rolloutClock: session.rolloutClock } : {}),
    onPass: (result, report) => {
      notifier?.publish(eventsFromPass(result, report, clock.now()));
      board.recordPass(result, report);
    },
    onManifests: (check) => {
      const broken = eventFromBrokenRevision(check, settings.dryRun, clock.now());
      if (broken) notifier?.publish([broken]);
      board.recordManifests(check.revision, check.errors);
    },
  });
}

interface RunningDaemon {
  daemon: Daemon;
  started: Promise<unknown>;
  board: StatusBoard;
  freshnessFile: ReturnType<typeof freshnessWriter>;
}

/** The notifier's memory, the freshness file and the status board read back, then the controller started. */
async function startDaemon(state: DaemonState, scope: ShardScope, run: DaemonRun, server: RunningHttpServer): Promise<RunningDaemon> {
  const { settings, log, metrics, clock, notifier } = state;
  const session = run.held.session;
  metrics.budget(session.client.budget().remaining, session.client.budget().effectiveLimit);
  // What earlier processes sent: a restart does not send standing failures again.
  await notifier?.restore(join(session.stateDir, DEDUP_STATE_FILE));
  const freshnessFile = freshnessWriter(
    session.stateDir,
    { resync: settings.resync, ...(settings.maxObservationAgeMs !== undefined ? { maxObservationAgeSeconds: settings.maxObservationAgeMs / 1000 } : {}) },
    clock,
    log,
  );
  const board = statusBoard(state, run, scope.shard);
  await board.load();
  state.board = board;
  const daemon = buildDaemon(state, scope, run, board, freshnessFile);
  state.daemon = daemon;
  log.info(
    {
      manifests: settings.manifestsPath,
      metrics: server.url,
      resync: settings.resync,
      observe: settings.observe,
      dryRun: settings.dryRun,
      sandbox: settings.sandbox ? session.baseUrl : undefined,
      rate: session.rate,
      ...(scope.shard ? { shard: scope.shard.name } : {}),
      notify: settings.notifications?.receivers.map((receiver) => `${receiver.name} (${receiver.type})`),
      triggers: state.triggerPaths,
    },
    'daemon started',
  );
  const started = daemon.start().catch((error: unknown) => log.error({ err: error }, 'daemon start failed'));
  return { daemon, started, board, freshnessFile };
}

/** Runs until a signal or the lock's loss, then stops within SHUTDOWN_BUDGET_MS; the exit code. */
async function shutDown(state: DaemonState, run: DaemonRun, running: RunningDaemon, server: RunningHttpServer): Promise<number> {
  const { context, log, metrics, notifier } = state;
  const lost = run.held.lost;
  await Promise.race([waitForAbort(context.signal), waitForAbort(lost)]);
  const reason = lost.aborted ? 'the state lock was lost' : context.signal.reason instanceof Error ? context.signal.reason.message : 'signal';
  log.info({ reason, budgetMs: SHUTDOWN_BUDGET_MS }, 'shutting down');
  const settled = await running.daemon.stop(PASS_GRACE_MS);
  await within(running.started, 100);
  if (!settled) log.warn({ graceMs: PASS_GRACE_MS }, 'passes did not stop in time; abandoning them');
  const closed = await within(
    Promise.allSettled([running.freshnessFile.flush(), running.board.flush(), run.held.session.close(), server.close(), notifier?.close()]).then(() => true),
    CLOSE_GRACE_MS,
  );
  if (!closed) log.warn({ graceMs: CLOSE_GRACE_MS }, 'closing the client or the metrics server timed out');
  // After the client's close: the request window is persisted under the lock.
  await run.held.release();
  metrics.setStateLockHeld(false);
  log.info({}, 'stopped');
  log.flush?.();
  if (!settled || !closed) {
    // Something abandoned above still holds the event loop (a pass stuck in user code, a socket):
    // the exit must stay within the documented bound anyway. Unref'd: a clean exit is not delayed.
    setTimeout(() => process.exit(0), SHUTDOWN_BUDGET_MS - PASS_GRACE_MS - CLOSE_GRACE_MS).unref();
  }
  return lost.aborted ? 1 : 0;
}
