// The checks of a Rollout document when a checkout is loaded, its document kind's `check` facet
// (the Rollout is no managed kind, but its checks are declared as a kind's are, beside its
// schema): one Rollout for the fleet or one each shard, wave names once each, and windows with a
// cron schedule node-cron reads and a time zone the runtime knows. The checks that need the
// projects and the shard map are checks.ts's.
import { createRequire } from 'node:module';
import { Cron } from 'croner';
import { textOf as str, type CheckedEntry, type CrossCheckContext, type KindCheck } from '../../manifests/load-facets.js';

/** One Rollout per shard with a shard map (each naming its `spec.shard`), else one for the whole fleet; then its waves and windows. */
export const checkRolloutDocuments: KindCheck = (entries, check) => {
  for (const entry of entries) {
    check.claim('rollout', str(entry.spec.shard) ?? '', entry, '/metadata/name', (first) => `a second Rollout document${str(entry.spec.shard) ? ` for shard \`${str(entry.spec.shard)}\`` : ''}: the first is at ${check.where(first, '/metadata/name')} (one Rollout orders the whole fleet, or one each shard)`);
    if (entry.valid) checkRollout(entry, check.error);
  }
};

/** Wave names once each; windows with a cron schedule node-cron reads and a time zone the runtime knows. */
function checkRollout(entry: CheckedEntry, error: CrossCheckContext['error']): void {
  const waves = Array.isArray(entry.spec.waves) ? (entry.spec.waves as Array<{ name?: unknown }>) : [];
  const names = new Map<unknown, number>();
  waves.forEach((wave, index) => {
    const first = names.get(wave.name);
    if (first !== undefined) error(entry, `/spec/waves/${index}/name`, `two waves named \`${String(wave.name)}\`: also /spec/waves/${first}/name`);
    else names.set(wave.name, index);
    if (wave.name === 'rest' && index !== waves.length - 1) error(entry, `/spec/waves/${index}/name`, 'the name `rest` is the implicit last wave: only the last wave may take it');
  });
  const windows = Array.isArray(entry.spec.windows) ? (entry.spec.windows as Array<{ schedule?: unknown; timeZone?: unknown }>) : [];
  windows.forEach((window, index) => {
    if (typeof window.schedule === 'string') {
      const fields = window.schedule.trim().split(/\s+/).length;
      // The gate computes windows with croner: a schedule it cannot read is refused as well. It
      // is asked first, since it bounds every value to its field: node-cron expands a range as
      // written, and `0-99999999 * * * *` keeps it busy for most of a minute before it throws.
      const why = fields !== 5 ? `five fields expected, got ${fields}` : cronerProblem(window.schedule) ?? nodeCronProblem(window.schedule);
      if (why !== undefined) error(entry, `/spec/windows/${index}/schedule`, `not a cron expression such as \`0 2 * * 6\`: ${why}`);
    }
    if (typeof window.timeZone === 'string') {
      try {
        new Intl.DateTimeFormat('en', { timeZone: window.timeZone });
      } catch {
        error(entry, `/spec/windows/${index}/timeZone`, `unknown time zone \`${window.timeZone}\`: expected an IANA name such as \`Europe/Berlin\` or \`UTC\``);
      }
    }
  });
}

type NodeCron = typeof import('node-cron');
let nodeCron: NodeCron | undefined;

/**
 * node-cron, loaded when a window's schedule is first checked: most checkouts have no window,
 * and loading it costs every process about 20 ms of CPU at its start.
 */
const cronModule = (): NodeCron => (nodeCron ??= createRequire(import.meta.url)('node-cron') as NodeCron);

function nodeCronProblem(schedule: string): string | undefined {
  try {
    const detail = cronModule().validateDetailed(schedule);
    return detail.valid ? undefined : detail.errors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'invalid';
  } catch (error) {
    return (error as Error).message;
  }
}

function cronerProblem(schedule: string): string | undefined {
  try {
    new Cron(schedule, { mode: '5-part' });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
