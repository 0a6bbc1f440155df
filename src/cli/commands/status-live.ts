// `reconcile status --live` (and `--sandbox`): a dry pass (reads only) plus the observed-only
// reads of every live project, as a table per project or JSON. Drift is not an error: exit 0
// unless the manifests are invalid or a read failed.
import { resolve } from 'node:path';
import { streamLogger } from '../logging.js';
import { colorWanted } from '../../util/logger.js';
import { systemClock } from '../../util/clock.js';
import { observationFailed, observeProject, type ObservedProjectState } from '../../reconcile/kinds/observed.js';
import { buildStatusReport, renderStatusJson, renderStatusText } from '../../reconcile/kinds/status-report.js';
import { openApiSession, type ApiSession } from '../api-session.js';
import { readFreshness } from '../../daemon/freshness-file.js';
import { openSandboxSession } from '../sandbox-session.js';
import type { Clock } from '../../util/clock.js';
import { UsageError, type ContextOf } from '../context.js';
import { referenceOptions } from '../reference-options.js';
import { didYouMean } from '../../manifests/suggest.js';

/** `--live`: a dry pass through the API and the observed-only reads, as a table per project or JSON. */
export async function runLive(context: ContextOf<'status'>, output: 'text' | 'json'): Promise<number> {
  const dir = resolve(context.cwd, context.positionals[0] ?? context.settings.manifests ?? '.');
  const log = streamLogger(context, context.stderr);

  const { loadManifests } = await import('../../reconcile/load-manifests.js');
  const manifests = await loadManifests(dir, { references: referenceOptions(context) });
  if (manifests.errors.length) {
    for (const e of manifests.errors) {
      context.stderr.write(`${e.file}:${e.line}:${e.column}: ${e.path ? `${e.path}: ` : ''}${e.message}${e.hint ? ` (${e.hint})` : ''}\n`);
    }
    context.stderr.write(`reconcile: status: ${manifests.errors.length} manifest error(s); nothing was read\n`);
    return 1;
  }

  const session: ApiSession & { clock?: Clock } =
    context.settings.sandbox ? await openSandboxSession(context.settings, log) : await openApiSession(context.settings, context.env, { log });
  try {
    const { passOnSession } = await import('../../run/pass.js');
    // `--project NAME` limits the report (and its reads) to one Project manifest.
    const only = context.settings.project;
    if (only !== undefined && !manifests.documents.some((d) => d.kind === 'Project' && d.metadata.name === only)) {
      const hint = didYouMean(only, manifests.documents.filter((d) => d.kind === 'Project').map((d) => d.metadata.name));
      throw new UsageError(`status: --project \`${only}\` names no Project manifest in ${dir}${hint === undefined ? '' : `; ${hint}`}`);
    }
    const result = await passOnSession(
      // A status read times a rollout on the session's clock (no rollout clock of its own).
      { session: { ...session, rolloutClock: undefined }, env: context.env, log, sandbox: context.settings.sandbox },
      { ...(only !== undefined ? { projects: [only] } : {}), manifests, dryRun: true, signal: context.signal },
    );
    const observed = new Map<string, ObservedProjectState>();
    // A user waits for this: the reads go at `verify` priority, all projects at once (the client paces them).
    await Promise.all(
      result.projects.map(async (project) => {
        if (!project.ref) return;
        observed.set(project.ref, await observeProject(session.client.api, project.ref, { priority: 'verify', project: project.name, signal: context.signal }));
      }),
    );
    const now = systemClock.now();
    const report = buildStatusReport(result, observed, now);
    const freshness = await readFreshness(session.stateDir, now);
    if (freshness) report.freshness = freshness;
    const stdoutIsTty = (context.stdout as { isTTY?: boolean }).isTTY === true;
    context.stdout.write(output === 'json' ? renderStatusJson(report) : renderStatusText(report, { color: colorWanted(context.env, stdoutIsTty) }));
    const readFailed = [...observed.values()].some(observationFailed);
    return result.result === 'success' && !readFailed ? 0 : 1;
  } finally {
    await session.close();
  }
}
