// `reconcile apply FILE [DIR]`: apply exactly a saved plan, or refuse it whole. Before any
// request: the plan's age, the manifests' revision and content, and every secret reference's
// value (by salted digest). Then one pass observes and plans again; the engine applies only
// when that plan is the saved plan, entry for entry (docs/saved-plans.md).
import { resolve } from 'node:path';
import { UsageError, type CommandContext } from '../context.js';
import { commandLogger, executePass, outputFormat, EXIT } from './reconcile.js';
import { ageRefusal, entryRefusals, manifestRefusals, PlanFileError, readSavedPlan, secretDigests } from '../../reconcile/plan-file.js';
import { secretResolver } from '../../reconcile/secret-check.js';

export async function run(context: CommandContext): Promise<number> {
  const [file, positionalDir, ...rest] = context.positionals;
  if (file === undefined) throw new UsageError('apply: expected a saved plan: reconcile apply FILE [DIR]');
  if (rest.length > 0) throw new UsageError(`apply: expected a plan file and at most one manifests directory, got ${context.positionals.join(' ')}`);
  if (context.settings.dryRun || context.settings.watch) throw new UsageError('apply: a saved plan is applied once: drop --dry-run and --watch');
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
  const given = positionalDir ?? flagDir;
  const dir = given !== undefined ? resolve(context.cwd, given) : plan.manifests.dir;

  return executePass(context, {
    dir,
    dryRun: false,
    format,
    log,
    beforeSession: async (manifests, sandbox) => {
      const age = ageRefusal(plan, Date.now(), maxAgeMs, maxAgeText);
      if (age) return { refusals: [age], plan: plan.result.plan };
      const secrets = secretResolver({ env: context.env, sandbox, onPlaceholder: () => undefined });
      // A reference that no longer resolves is the pass's own located error; here it is a changed value.
      const digests = await secretDigests(manifests.documents, (ref, document) => secrets.resolve(ref, document).catch(() => ''), Buffer.from(plan.secrets.salt, 'hex'));
      const refusals = manifestRefusals(plan, manifests, digests);
      if (refusals.length > 0) return { refusals, plan: plan.result.plan };
      return { refusals: [], savedPlan: { check: (entries) => entryRefusals(plan, entries) } };
    },
  });
}
