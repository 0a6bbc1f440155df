// `reconcile show FILE`: a saved plan rendered as its dry run rendered it (text, json or
// markdown). Reads the file only: no manifests, no API.
import { resolve } from 'node:path';
import { UsageError, type ContextOf } from '../context.js';
import { EXIT, outputFormat, render } from './reconcile.js';
import { colorWanted } from '../../util/logger.js';
import { isTty } from '../logging.js';
import { PlanFileError, readSavedPlan } from '../../reconcile/plan-file.js';

export async function run(context: ContextOf<'show'>): Promise<number> {
  if (context.positionals.length !== 1) throw new UsageError('show: expected one saved plan: reconcile show FILE [--output text|json|markdown]');
  const file = context.positionals[0]!;
  const format = outputFormat(context);
  try {
    const plan = await readSavedPlan(resolve(context.cwd, file), file);
    const color = format === 'text' && colorWanted(context.env, isTty(context.stdout));
    context.stdout.write(render(plan.result, format, color, plan.heading));
    return EXIT.success;
  } catch (error) {
    if (!(error instanceof PlanFileError)) throw error;
    context.stderr.write(`reconcile: ${error.message}\n`);
    return EXIT.error;
  }
}
