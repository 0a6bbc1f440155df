// One pass on an open session: the engine's options made from the session (client, state
// directory, clocks) and the run's settings. Every pass the commands and the daemon run comes
// through here (test/architecture/pass-path.test.ts).
import type { ManifestSet } from '../manifests/types.js';
import type { Logger, PassResult } from '../reconcile/types.js';
import type { PassOptions } from '../reconcile/engine.js';
import type { Clock } from '../util/clock.js';
import type { PassSession } from './session.js';

/** A saved or confirmed plan the pass's own plan is checked against, entry for entry. */
export type PlanCheck = NonNullable<PassOptions['savedPlan']>;

/** What every pass of a run shares. */
export interface PassContext {
  session: PassSession;
  env: NodeJS.ProcessEnv;
  log: Logger;
  sandbox: boolean;
  allowEmpty?: boolean;
  organizationWaitMs?: number;
  /** The clock when the session has none of its own (the sandbox's runs waits at its speed). */
  clock?: Clock;
  /** Said with a long forecast (the one-shot default budget). */
  budgetNote?: string;
}

/** What one pass asks for. */
export interface PassAsk {
  manifests: ManifestSet;
  dryRun: boolean;
  signal: AbortSignal;
  priority?: 'write' | 'drift';
  /** Only these Project manifests; undefined: the whole fleet. */
  projects?: string[];
  savedPlan?: PlanCheck;
}

export async function passOnSession(context: PassContext, ask: PassAsk): Promise<PassResult> {
  const { runPass } = await import('../reconcile/engine.js');
  const { session } = context;
  const clock = session.clock ?? context.clock;
  return runPass({
    manifests: ask.manifests,
    client: session.client,
    stateDir: session.stateDir,
    dryRun: ask.dryRun,
    env: context.env,
    log: context.log,
    signal: ask.signal,
    ...(context.sandbox ? { sandbox: true } : {}),
    ...(context.allowEmpty !== undefined ? { allowEmpty: context.allowEmpty } : {}),
    ...(context.organizationWaitMs !== undefined ? { organizationWaitMs: context.organizationWaitMs } : {}),
    ...(clock ? { clock } : {}),
    ...(session.rolloutClock ? { rolloutClock: session.rolloutClock } : {}),
    ...(context.budgetNote !== undefined ? { budgetNote: context.budgetNote } : {}),
    ...(ask.priority ? { priority: ask.priority } : {}),
    ...(ask.projects ? { projects: ask.projects } : {}),
    ...(ask.savedPlan ? { savedPlan: ask.savedPlan } : {}),
  });
}
