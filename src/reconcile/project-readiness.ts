// Waiting for a project: until it and the services its configuration needs are healthy (after
// a creation or a restore).
import { TransientError } from '../api/errors.js';
import type { ManagementApi } from '../api/endpoints.js';
import type { AnyDocument, ProjectDocument } from '../manifests/types.js';
import type { Clock } from '../util/clock.js';
import { formatElapsed, progressGate } from '../util/progress.js';
import { KIND_MODULES } from './registry.js';
import type { KindModule, Logger } from './types.js';

/** Statuses from which a project will not come up by waiting. */
const TERMINAL = new Set(['INIT_FAILED', 'REMOVED', 'RESTORE_FAILED', 'PAUSE_FAILED', 'GOING_DOWN']);

export class ProjectNotReadyError extends Error {
  constructor(readonly project: string, readonly status: string, detail: string) {
    super(`project ${project} is not ready (status ${status}): ${detail}`);
    this.name = 'ProjectNotReadyError';
  }
}

/**
 * Services whose health the configuration of this project needs before it is written: the
 * database, and each module's `services` when the project uses it: a configuration section
 * (a module with a `key`) the Project document declares, a sub-resource kind (a module with a
 * `document`) the project has documents of (SSO providers need auth).
 */
export function servicesNeeded(document: ProjectDocument, documents: readonly AnyDocument[], modules: readonly KindModule[] = KIND_MODULES): string[] {
  const spec = document.spec as unknown as Record<string, unknown>;
  const services = new Set<string>(['db']);
  const mine = new Set(documents.filter((d) => d.kind !== 'Project' && d.kind !== 'Organization' && (d.spec as { project?: string }).project === document.metadata.name).map((d) => d.kind as string));
  for (const module of modules) {
    const key = (module as { key?: unknown }).key;
    const used = typeof key === 'string' ? Boolean(spec[key]) : module.document !== undefined && mine.has(module.document.kind);
    if (used) for (const service of module.services ?? []) services.add(service);
  }
  return [...services];
}

export interface WaitOptions {
  api: ManagementApi;
  clock: Clock;
  log: Logger;
  signal?: AbortSignal;
  /** Give up after this long (clock time). */
  timeoutMs?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export interface Readiness {
  status: string;
  health: Record<string, boolean>;
}

/**
 * Waits, polling with backoff on the injected clock at `verify` priority, until the project
 * is ACTIVE_HEALTHY and every needed service reports healthy: ACTIVE_HEALTHY alone does not
 * mean a configuration write will succeed.
 */
export async function waitUntilReady(name: string, ref: string, services: readonly string[], options: WaitOptions): Promise<Readiness> {
  const timeoutMs = options.timeoutMs ?? 30 * 60_000;
  const started = options.clock.now();
  let delay = options.initialDelayMs ?? 500;
  const maxDelay = options.maxDelayMs ?? 15_000;
  const call = { priority: 'verify' as const, project: name, ...(options.signal ? { signal: options.signal } : {}) };
  let status = 'UNKNOWN';
  let health: Record<string, boolean> = {};
  // A new project takes minutes: say what it waits for, at most every few seconds of clock time.
  const progressDue = progressGate(options.clock);
  const progress = (waitingFor: string, fields: Record<string, unknown>) => {
    if (!progressDue()) return;
    const elapsedS = Math.round((options.clock.now() - started) / 1000);
    options.log.info({ wait: 'project', project: name, elapsedS, ...fields }, `waiting for project ${name} ${waitingFor} (${formatElapsed(elapsedS)} so far)`);
  };
  const pause = async () => {
    if (options.clock.now() - started + delay > timeoutMs) {
      throw new ProjectNotReadyError(name, status, `not ready after ${Math.round(timeoutMs / 1000)}s`);
    }
    await options.clock.sleep(delay, options.signal);
    delay = Math.min(maxDelay, Math.round(delay * 1.6));
  };
  for (;;) {
    try {
      status = (await options.api.getProject(ref, call)).status;
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      await pause();
      continue;
    }
    if (status === 'ACTIVE_HEALTHY') break;
    if (TERMINAL.has(status)) throw new ProjectNotReadyError(name, status, 'the project will not come up by waiting');
    progress(`to become ACTIVE_HEALTHY: ${status}`, { status });
    await pause();
  }
  for (;;) {
    try {
      const items = await options.api.getServicesHealth(ref, { ...call, query: { services: [...services] } });
      health = Object.fromEntries(items.map((item) => [item.name, item.healthy === true || item.status === 'ACTIVE_HEALTHY']));
      if (services.every((service) => health[service] === true)) return { status, health };
      const unhealthy = services.filter((service) => health[service] !== true);
      progress(`to report its services healthy: ${unhealthy.join(', ')} not yet`, { services: unhealthy });
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
    }
    await pause();
  }
}
