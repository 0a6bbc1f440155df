import type { DatabaseUpgradeStatusResponse } from '../../../api/types.js';
import type { KindContext, PlanEntry, ProjectScope } from '../../types.js';
import type { ConfigSection } from './section.js';
import { readOptions, sectionEntry, sectionManaged, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectPostgresVersion', key: 'postgres_version' } as const;
const DONE = new Set(['9_completed_upgrade', '10_completed_post_physical_backup']);

/** The major version of `15`, `15.1.0.117`, `17-oriole` or `17.4.1.054`. */
export function majorVersion(version: string | number | undefined | null): number | undefined {
  if (version === undefined || version === null) return undefined;
  const major = Number.parseInt(String(version), 10);
  return Number.isFinite(major) ? major : undefined;
}

/**
 * Postgres major version upgrades. The live version comes from the project list the engine
 * already read (no request when it matches). When it is older: the upgrade status (an
 * upgrade may be under way: `pending` with its progress), then the eligibility; the
 * upgrade starts towards the offered target of the desired major version. Not eligible,
 * not offered, a failed attempt or a downgrade: `blocked` with the reason.
 */
export const postgresVersionConfig: ConfigSection<'ProjectPostgresVersion'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'paused',
    property: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)*$', description: 'Target Postgres version: upgrade when the live version is older and the project is eligible.' },
  },
  services: [],
  // Once an upgrade starts the project is UPGRADING and its configuration cannot be read back.
  appliesAfterReadBack: true,
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const target = String(scope.document.spec.postgres_version);
    // No ref: a project this pass creates (one that exists but is not running is not planned).
    if (scope.ref === undefined) {
      return [
        sectionEntry(scope, SECTION, { action: 'create', changes: [{ path: SECTION.key, after: target }], reason: 'upgraded after creation when the new project runs an older version' }),
      ];
    }
    const version = scope.database?.version ?? (await ctx.api.getProject(scope.ref, readOptions(scope, ctx))).database?.version;
    return [await decide(scope, ctx, scope.ref, version, target)];
  },
  // A project planned before it existed: its version is known only now, so decide now, and
  // start the upgrade when that decision is one. An `update` starts the planned upgrade.
  async apply(entry, scope, ctx) {
    const ref = refAtApply(scope, ctx);
    if (entry.action === 'create') {
      const project = await ctx.api.getProject(ref, readOptions(scope, ctx));
      const next = await decide({ ...scope, ref }, ctx, ref, project.database?.version, String(scope.document.spec.postgres_version));
      if (next.action === 'update' && !next.observeOnly) await upgrade(next, scope, ctx, ref);
      return;
    }
    await upgrade(entry, scope, ctx, ref);
  },
  // The version comes from the project list: no read.
  async export({ project }) {
    const major = majorVersion(project.database?.version);
    return major === undefined ? undefined : String(major);
  },
};

async function decide(scope: ProjectScope, ctx: KindContext, ref: string, version: string | undefined, target: string): Promise<PlanEntry> {
  const liveMajor = majorVersion(version);
  const wantMajor = majorVersion(target);
  if (liveMajor === undefined || wantMajor === undefined) {
    return sectionEntry(scope, SECTION, { action: 'blocked', reason: `cannot compare the live version \`${version ?? 'unknown'}\` with \`${target}\`` });
  }
  if (liveMajor === wantMajor) return sectionEntry(scope, SECTION, { action: 'noop' });
  const changes = [{ path: SECTION.key, before: String(liveMajor), after: target }];
  if (liveMajor > wantMajor) {
    return sectionEntry(scope, SECTION, { action: 'blocked', changes, reason: `the project runs ${version}: a major version cannot be downgraded` });
  }

  const { databaseUpgradeStatus: status } = await ctx.api.getPostgresUpgradeStatus(ref, readOptions(scope, ctx));
  const upgrade = describe(status);
  if (upgrade?.inProgress) {
    return sectionEntry(scope, SECTION, { action: 'noop', pending: true, changes, reason: `upgrade to ${upgrade.target} in progress: ${upgrade.progress}` });
  }
  if (upgrade && upgrade.target === wantMajor && upgrade.done) {
    return sectionEntry(scope, SECTION, { action: 'noop', pending: true, changes, reason: `upgrade to ${upgrade.target} completed (${upgrade.progress}); waiting for the project to report it` });
  }
  if (upgrade && upgrade.target === wantMajor && upgrade.error) {
    // Starting again on every pass could loop on the same failure: a person looks first.
    return sectionEntry(scope, SECTION, { action: 'blocked', changes, reason: `the last upgrade to ${upgrade.target} failed: ${upgrade.error}` });
  }

  const eligibility = await ctx.api.getPostgresUpgradeEligibility(ref, readOptions(scope, ctx));
  if (!eligibility.eligible) {
    const why = (eligibility.validation_errors ?? []).map((item) => item.type);
    return sectionEntry(scope, SECTION, { action: 'blocked', changes, reason: `the project is not eligible for an upgrade${why.length ? `: ${why.join(', ')}` : ''}` });
  }
  const offered = eligibility.target_upgrade_versions ?? [];
  const candidate = offered.find((item) => majorVersion(item.postgres_version) === wantMajor);
  if (!candidate) {
    const list = offered.map((item) => item.postgres_version).join(', ') || 'none';
    return sectionEntry(scope, SECTION, { action: 'blocked', changes, reason: `version ${target} is not offered as an upgrade target (offered: ${list})` });
  }
  const estimate = eligibility.duration_estimate_hours ? `, about ${eligibility.duration_estimate_hours} h` : '';
  // The offered version the upgrade goes to is observed here: the apply sends it as planned.
  const upgradeTarget: UpgradeTarget = { target_version: candidate.postgres_version, ...(candidate.release_channel ? { release_channel: candidate.release_channel } : {}) };
  return sectionEntry(
    scope,
    SECTION,
    { action: 'update', changes, reason: `upgrade ${version} to ${candidate.postgres_version} (${candidate.release_channel}${estimate})` },
    { ...upgradeTarget },
  );
}

/** The entry's `target` of a planned upgrade: the body of the upgrade request. */
interface UpgradeTarget {
  target_version: string;
  release_channel?: string;
}

async function upgrade(entry: PlanEntry, scope: ProjectScope, ctx: KindContext, ref: string): Promise<void> {
  const { target_version, release_channel } = entry.target as unknown as UpgradeTarget;
  await ctx.api.upgradePostgresVersion(ref, { target_version, ...(release_channel ? { release_channel } : {}) }, writeOptions(scope, ctx));
}

interface UpgradeState {
  target: number | undefined;
  progress: string;
  error: string | undefined;
  done: boolean;
  inProgress: boolean;
}

function describe(status: DatabaseUpgradeStatusResponse['databaseUpgradeStatus'] | undefined): UpgradeState | undefined {
  if (!status) return undefined;
  const progress = status.progress ?? 'unknown';
  // `status` 0 is a failed attempt even when the service names no error step.
  const error = status.error ?? (status.status === 0 ? 'failed' : undefined);
  const done = DONE.has(progress);
  return { target: majorVersion(status.target_version), progress, error, done, inProgress: !error && !done };
}
