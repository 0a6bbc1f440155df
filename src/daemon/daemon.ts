import { resolve } from 'node:path';
import { openApiSession, type ApiSession } from '../cli/api-session.js';
import { openSandboxSession } from '../cli/sandbox-session.js';
import { UsageError, stringOption, type CommandContext } from '../cli/context.js';
import { systemClock, type Clock } from '../util/clock.js';
import { createLogger, type Logger } from '../util/logger.js';
import { ApiHealth } from './api-health.js';
import { Daemon } from './controller.js';
import { InvalidScheduleError, nodeCronTrigger, type CronTrigger } from './cron-trigger.js';
import { InvalidAddressError, parseListenAddress, startHttpServer, type RunningHttpServer } from './http-server.js';
import { createMetrics, createNotificationMetrics } from './metrics.js';
import { DEFAULT_OBSERVE, InvalidObserveListError, parseObserveList } from './observe-list.js';
import { createObserver, observeReadsPerProject } from './observer.js';
import { watchSource } from './source-watcher.js';
import { triggerRoutes, type TriggerSettings } from './trigger.js';
import { NotificationsConfigError, type NotificationSettings } from '../notify/config.js';
import { eventsFromPass } from '../notify/events.js';
import { Notifier } from '../notify/notifier.js';
import { notificationSettings } from '../notify/setup.js';
import type { ObservedResource } from '../reconcile/kinds/observed.js';

/** Longest a shutdown takes, from the signal to the exit (documented in the README). */
export const SHUTDOWN_BUDGET_MS = 10_000;
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
  resync: string;
  metricsAddress: ReturnType<typeof parseListenAddress>;
  logLevel: string;
  dryRun: boolean;
  allowEmpty: boolean;
  sandbox: boolean;
  /** Observed-only facts read on each drift re-check (`--observe`). */
  observe: ObservedResource[];
  notifications?: NotificationSettings;
  triggers: TriggerSettings;
}

/** Validates the daemon's options up front, with messages that name the option. */
async function settingsFrom(context: CommandContext): Promise<DaemonSettings> {
  if (context.positionals.length > 1) {
    throw new UsageError(`expected at most one manifests directory, got ${context.positionals.length}: ${context.positionals.join(' ')}`);
  }
  const manifests = stringOption(context, 'manifests') ?? context.positionals[0] ?? '.';
  const resync = stringOption(context, 'resync') ?? '*/10 * * * *';
  try {
    nodeCronTrigger(resync);
  } catch (error) {
    if (error instanceof InvalidScheduleError) throw new UsageError(error.message);
    throw error;
  }
  let metricsAddress;
  try {
    metricsAddress = parseListenAddress(stringOption(context, 'metrics-addr') ?? '0.0.0.0:9464');
  } catch (error) {
    if (error instanceof InvalidAddressError) throw new UsageError(error.message);
    throw error;
  }
  // main.ts has checked it against LOG_LEVELS.
  const logLevel = stringOption(context, 'log-level') ?? 'info';
  let observe: ObservedResource[];
  try {
    observe = parseObserveList(stringOption(context, 'observe') ?? DEFAULT_OBSERVE);
  } catch (error) {
    if (error instanceof InvalidObserveListError) throw new UsageError(error.message);
    throw error;
  }
  let notifications: NotificationSettings | undefined;
  try {
    notifications = await notificationSettings(context);
  } catch (error) {
    if (error instanceof NotificationsConfigError) throw new UsageError(error.message);
    throw error;
  }
  const tokenFile = stringOption(context, 'trigger-token-file');
  const webhookSecretFile = stringOption(context, 'webhook-secret-file');
  return {
    notifications,
    triggers: {
      ...(tokenFile ? { tokenFile: resolve(context.cwd, tokenFile) } : {}),
      ...(webhookSecretFile ? { webhookSecretFile: resolve(context.cwd, webhookSecretFile) } : {}),
    },
    manifestsPath: resolve(context.cwd, manifests),
    resync,
    metricsAddress,
    logLevel,
    dryRun: context.values['dry-run'] === true,
    allowEmpty: context.values['allow-empty'] === true,
    sandbox: context.values.sandbox === true,
    observe,
  };
}

/**
 * `reconcile --watch`: the long-running daemon. Logs JSON lines on stdout (readable on a TTY),
 * serves `/metrics`, `/healthz` and `/readyz`, and exits 0 within SHUTDOWN_BUDGET_MS of
 * SIGTERM or SIGINT (main.ts aborts `context.signal`).
 */
export async function runDaemon(context: CommandContext): Promise<number> {
  const settings = await settingsFrom(context);
  const clock = systemClock;
  const isTty = (context.stdout as { isTTY?: boolean }).isTTY === true;
  const log: Logger = createLogger({
    level: settings.logLevel,
    pretty: isTty,
    prettyFd: 1,
    destination: context.stdout,
  });
  const metrics = createMetrics(undefined, { clock });
  const health = new ApiHealth(clock);
  const trigger: CronTrigger = nodeCronTrigger(settings.resync);
  const notifier = settings.notifications
    ? new Notifier({
        settings: settings.notifications,
        clock,
        log,
        env: context.env,
        metrics: createNotificationMetrics(metrics.registry, settings.notifications.receivers.map((receiver) => receiver.name)),
      })
    : undefined;

  let session: ApiSession & { clock?: Clock };
  try {
    const telemetry = health.wrap(metrics);
    session = settings.sandbox
      ? await openSandboxSession(context, log, { telemetry })
      : await openApiSession(context, { telemetry, log, clock });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    log.fatal({ err: error }, 'could not set up the API client');
    log.flush?.();
    return 1;
  }
  metrics.budget(session.client.budget().remaining, session.client.budget().effectiveLimit);

  const [{ runPass }, { loadManifests }] = await Promise.all([import('../reconcile/engine.js'), import('../manifests/load.js')]);

  const daemon = new Daemon({
    manifestsPath: settings.manifestsPath,
    loadManifests: (dir) => loadManifests(dir),
    runPass: (request) =>
      runPass({
        manifests: request.manifests,
        client: session.client,
        stateDir: session.stateDir,
        dryRun: settings.dryRun,
        env: context.env,
        log,
        // The sandbox's clock runs waits at the emulator's lifecycle speed.
        clock: session.clock ?? clock,
        sandbox: settings.sandbox,
        allowEmpty: settings.allowEmpty,
        signal: request.signal,
        priority: request.priority,
        ...(request.projects ? { projects: request.projects } : {}),
      }),
    // The same list with --dry-run: every read is side-effect free (network bans are read with
    // a POST that changes nothing).
    ...(settings.observe.length > 0
      ? { observe: createObserver({ api: session.client.api, resources: settings.observe, clock, log }), observeReadsPerProject: observeReadsPerProject(settings.observe) }
      : {}),
    metrics,
    log,
    clock,
    trigger,
    budget: () => {
      const budget = session.client.budget();
      return { limit: budget.effectiveLimit, windowMs: budget.windowMs };
    },
    watch: (path, onEvent) => watchSource({ path, onEvent, log, clock, ignore: [session.stateDir] }),
    allowEmpty: settings.allowEmpty,
    dryRun: settings.dryRun,
    ...(notifier ? { onPass: (result, report) => notifier.publish(eventsFromPass(result, report, clock.now())) } : {}),
  });

  const routes = triggerRoutes(daemon, settings.triggers, log);
  let server: RunningHttpServer | undefined;
  try {
    server = await startHttpServer(
      settings.metricsAddress,
      {
        metrics: async () => {
          const budget = session.client.budget();
          metrics.budget(budget.remaining, budget.effectiveLimit);
          return { contentType: metrics.contentType, body: await metrics.render() };
        },
        readiness: () => {
          const reasons = [...daemon.readiness().reasons];
          const problem = health.problem(Math.max(READY_INTERVALS * trigger.intervalMs(), READY_MIN_MS));
          if (problem) reasons.push(problem);
          return { ready: reasons.length === 0, reasons };
        },
        post: routes,
      },
      log,
    );
  } catch (error) {
    log.fatal({ err: error, address: settings.metricsAddress }, 'could not listen on --metrics-addr');
    await notifier?.close();
    await session.close();
    return 1;
  }

  log.info(
    {
      manifests: settings.manifestsPath,
      metrics: server.url,
      resync: settings.resync,
      observe: settings.observe,
      dryRun: settings.dryRun,
      sandbox: settings.sandbox ? session.baseUrl : undefined,
      rate: session.rate,
      notify: settings.notifications?.receivers.map((receiver) => `${receiver.name} (${receiver.type})`),
      triggers: Object.keys(routes),
    },
    'daemon started',
  );

  const started = daemon.start().catch((error: unknown) => log.error({ err: error }, 'daemon start failed'));
  await waitForAbort(context.signal);

  const reason = context.signal.reason instanceof Error ? context.signal.reason.message : 'signal';
  log.info({ reason, budgetMs: SHUTDOWN_BUDGET_MS }, 'shutting down');
  const settled = await daemon.stop(PASS_GRACE_MS);
  await within(started, 100);
  if (!settled) log.warn({ graceMs: PASS_GRACE_MS }, 'passes did not stop in time; abandoning them');
  const closed = await within(
    Promise.allSettled([session.close(), server.close(), notifier?.close()]).then(() => true),
    CLOSE_GRACE_MS,
  );
  if (!closed) log.warn({ graceMs: CLOSE_GRACE_MS }, 'closing the client or the metrics server timed out');
  log.info({}, 'stopped');
  log.flush?.();
  if (!settled || !closed) {
    // Something abandoned above still holds the event loop (a pass stuck in user code, a socket):
    // the exit must stay within the documented bound anyway. Unref'd: a clean exit is not delayed.
    setTimeout(() => process.exit(0), SHUTDOWN_BUDGET_MS - PASS_GRACE_MS - CLOSE_GRACE_MS).unref();
  }
  return 0;
}
