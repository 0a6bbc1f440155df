// `reconcile apply FILE [DIR]`: apply exactly a saved plan to the checkout it runs in (the
// working directory, or DIR), or refuse it whole. Before any request: the plan's age, the manifests' revision and content, and every secret reference's
// value (by salted digest). Then one pass observes and plans again; the engine applies only
// when that plan is the saved plan, entry for entry (docs/saved-plans.md).
import { resolve } from 'node:path';
import { UsageError, type ContextOf } from '../context.js';
import { commandLogger, executePass, outputFormat, EXIT } from './reconcile.js';
import { ageRefusal, entryRefusals, manifestRefusals, PlanFileError, readSavedPlan, secretDigests } from '../../reconcile/plan-file.js';
import { secretResolver } from '../../reconcile/secret-check.js';

export async function run(context: ContextOf<'apply'>): Promise<number> {
  const [file, positionalDir, ...rest] = context.positionals;
  if (file === undefined) throw new UsageError('apply: expected a saved plan: reconcile apply FILE [DIR]');
  if (rest.length > 0) throw new UsageError(`apply: expected a plan file and at most one manifests directory, got ${context.positionals.join(' ')}`);
  const { ms: maxAgeMs, text: maxAgeText } = context.settings.maxPlanAge;
  const format = outputFormat(context);
  const log = commandLogger(context);

  let plan;
  try {
    plan = await readSavedPlan(resolve(context.cwd, file), file);
  } catch (error) {
    if (!(error instanceof PlanFileError)) throw error;
    context.stderr.write(`reconcile: ${error.message}\n`);
    return EXIT.error;
  }
  const flagDir = context.settings.manifests;
  if (positionalDir !== undefined && flagDir !== undefined && resolve(context.cwd, positionalDir) !== resolve(context.cwd, flagDir)) {
    throw new UsageError(`two manifests directories given: ${positionalDir} and --manifests ${flagDir}`);
  }
  // The checkout this command runs in (or the one named), never the directory recorded in the
  // plan: the plan is made by the pull request's job, from code it runs, and only says what was
  // planned. Its content must be the checkout's (revision and digest), or the plan is refused.
  const dir = resolve(context.cwd, positionalDir ?? flagDir ?? '.');

  return executePass(context, {
    dir,
    dryRun: false,
    format,
    log,
    beforeSession: async (manifests, sandbox) => {
      const where = `the checkout ${manifests.root} at revision ${manifests.revision ?? '(none: not a git checkout)'}`;
      log.info({ dir: manifests.root, revision: manifests.revision ?? null, plannedIn: plan.manifests.dir }, `applying the saved plan ${file} to ${where}`);
      const age = ageRefusal(plan, Date.now(), maxAgeMs, maxAgeText);
      if (age) return { refusals: [age], plan: plan.result.plan };
      const secrets = secretResolver({ env: context.env, sandbox, onPlaceholder: () => undefined });
      // A reference that no longer resolves is the pass's own located error; here it is a changed value.
      const digests = await secretDigests(manifests.documents, (ref, document) => secrets.resolve(ref, document).catch(() => ''), Buffer.from(plan.secrets.salt, 'hex'));
      const refusals = manifestRefusals(plan, manifests, digests);
      if (refusals.length > 0) return { refusals, plan: plan.result.plan };
      return { refusals: [], savedPlan: { check: (entries) => entryRefusals(plan, entries) } };
    },
    afterPass: async (result, manifests) => {
      const where = `the checkout ${manifests.root} at revision ${manifests.revision ?? '(none: not a git checkout)'}`;
      if (result.result === 'success') log.info({ dir: manifests.root, revision: manifests.revision ?? null }, `applied the saved plan ${file} to ${where}`);
      else log.error({ dir: manifests.root, revision: manifests.revision ?? null, result: result.result }, `the saved plan ${file} was not fully applied to ${where}`);
      return undefined;
    },
  });
}
