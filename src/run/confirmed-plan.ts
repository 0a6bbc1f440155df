// A confirmed apply (a one-shot apply on a terminal shows its plan and asks first) applies
// exactly the plan that was shown: its first pass is checked against the shown plan entry for
// entry, as a saved plan is; a rollout's later waves write only changes the shown plan had,
// with the same action and field changes (what they depend on may have been created since;
// the earlier waves' entries are in sync by then).
import type { ManifestSet } from '../manifests/types.js';
import type { PassResult } from '../reconcile/types.js';
import { isChange } from '../reconcile/summary.js';
import type { PlanCheck } from './pass.js';

export interface ConfirmedPlan {
  /** The check of the first apply. */
  first: PlanCheck;
  /** The check of every later wave. */
  waves: PlanCheck;
}

export async function confirmedPlan(manifests: ManifestSet, shown: PassResult): Promise<ConfirmedPlan> {
  const { buildSavedPlan, entryRefusals, newSalt } = await import('../reconcile/plan-file.js');
  const saved = buildSavedPlan({ manifests, result: shown, salt: newSalt(), secrets: [], now: Date.now() });
  const asShown = (entry: PassResult['plan']['entries'][number]) =>
    JSON.stringify([entry.action, entry.changes.map((change) => (change.sensitive ? { path: change.path, sensitive: true } : change))]);
  const shownEntries = new Map(shown.plan.entries.map((entry) => [entry.id, asShown(entry)]));
  return {
    first: { check: (entries) => entryRefusals(saved, entries) },
    waves: {
      check: (entries) =>
        entries
          .filter((entry) => isChange(entry) && shownEntries.get(entry.id) !== asShown(entry))
          .map((entry) => ({ resource: entry.id, reason: `not as in the plan that was confirmed: the live state or the manifests now call for \`${entry.action}\`${entry.changes.length ? ` of ${entry.changes.map((c) => c.path).join(', ')}` : ''}` })),
    },
  };
}
