import type { PoolerConfigResponse } from '../../../api/types.js';
import { convertOpenApiSchema, REGIONS, type JsonSchema } from '../../../manifests/schema-source.js';
import type { ReadReplicaSpec } from '../../../manifests/types.js';
import { NotFoundError } from '../../../api/errors.js';
import { POOLER_LIST, readPoolerList } from './pooler-list.js';
import { loadReplicaIntents, openIntents, replicaIntentKey, type ReplicaSetupIntent } from './replica-intents.js';
import type { ConfigSection } from './section.js';
import { sectionEntry, sectionManaged, sectionSpec, writeOptions } from './section-plan.js';
import { refAtApply } from '../common.js';

const SECTION = { kind: 'ProjectReadReplicas', key: 'read_replicas' } as const;

// Longest first, so a region is never matched by a shorter name inside it.
const REGIONS_LONGEST_FIRST = [...REGIONS].sort((a, b) => b.length - a.length);

interface LiveReplica {
  identifier: string;
  region: string | undefined;
}

/** What an apply of the section works from (the entry's `target`): replica ids and regions, nothing secret. */
interface ReplicaTarget {
  live: LiveReplica[];
  /** Identifiers of the live replicas to remove. */
  remove: string[];
  /** Regions to set a replica up in, one item per replica. */
  setUp: string[];
}

/** The region of a READ_REPLICA pooler entry: its identifier names it, else its host. */
export function replicaRegion(entry: Pick<PoolerConfigResponse, 'identifier' | 'db_host'>): string | undefined {
  for (const text of [entry.identifier, entry.db_host]) {
    if (typeof text !== 'string') continue;
    const found = REGIONS_LONGEST_FIRST.find((region) => text.includes(region));
    if (found) return found;
  }
  return undefined;
}

/**
 * Read replicas are a declared complete set: the list in the manifest is every replica the
 * project should have, counted per region. Missing ones are set up; live ones the list no
 * longer has are removed — and nothing else. They are read from the READ_REPLICA entries
 * of the pooler list, the same GET the pooler section uses.
 */
export const readReplicasConfig: ConfigSection<'ProjectReadReplicas'> = {
  kind: SECTION.kind,
  key: SECTION.key,
  schema: {
    after: 'cryptoext',
    property: { type: 'array', items: { $ref: '#/$defs/ReadReplicaSpec' }, description: 'The complete set of read replicas, one item each.' },
    defs: (openapi) => ({
      ReadReplicaSpec: {
        title: 'ReadReplicaSpec',
        description: 'One read replica.',
        type: 'object',
        properties: {
          read_replica_region: {
            ...convertOpenApiSchema((openapi.components.schemas.SetUpReadReplicaBody!.properties as Record<string, JsonSchema>).read_replica_region!),
            description: 'Region of the replica.',
          },
        },
        required: ['read_replica_region'],
        additionalProperties: false,
      },
    }),
  },
  services: [],
  manages: (scope) => sectionManaged(scope, SECTION.key),
  async plan(scope, ctx) {
    const desired = sectionSpec<ReadReplicaSpec[]>(scope, SECTION.key).map((item) => item.read_replica_region).sort();
    const live: LiveReplica[] = [];
    if (scope.ref !== undefined) {
      const list = await readPoolerList(scope, ctx, scope.ref, SECTION.kind);
      for (const item of list) {
        if (item.database_type === 'READ_REPLICA') live.push({ identifier: item.identifier, region: replicaRegion(item) });
      }
    }
    const unknown = live.filter((replica) => replica.region === undefined);
    if (unknown.length > 0) {
      return [
        sectionEntry(scope, SECTION, {
          action: 'blocked',
          reason: `live read replica ${unknown.map((r) => `\`${r.identifier}\``).join(', ')} does not show its region: matching the list would be a guess`,
        }),
      ];
    }

    // Per region: keep as many live replicas as the list asks for; the rest go, the shortfall is set up.
    const remaining = new Map<string, number>();
    for (const region of desired) remaining.set(region, (remaining.get(region) ?? 0) + 1);
    const toRemove: LiveReplica[] = [];
    for (const replica of [...live].sort((a, b) => a.identifier.localeCompare(b.identifier))) {
      const left = remaining.get(replica.region!) ?? 0;
      if (left > 0) remaining.set(replica.region!, left - 1);
      else toRemove.push(replica);
    }
    // Setups sent earlier that the list does not show yet are in flight, not missing.
    const inFlight = scope.ref === undefined ? [] : openIntents(await loadReplicaIntents(ctx.state, scope.ref), live, ctx.clock.now());
    const waiting: string[] = [];
    for (const intent of inFlight) {
      const left = remaining.get(intent.region) ?? 0;
      if (left > 0) {
        remaining.set(intent.region, left - 1);
        waiting.push(intent.region);
      }
    }
    const toSetUp = [...remaining].flatMap(([region, count]) => Array<string>(count).fill(region)).sort();
    if (toSetUp.length === 0 && toRemove.length === 0) {
      if (waiting.length === 0) return [sectionEntry(scope, SECTION, { action: 'noop' })];
      return [sectionEntry(scope, SECTION, { action: 'noop', pending: true, reason: `setting up ${waiting.sort().join(', ')}: not in the list yet` })];
    }

    const before = live.map((replica) => replica.region!).sort();
    const reasonParts = [
      ...(toSetUp.length ? [`set up ${toSetUp.join(', ')}`] : []),
      ...(toRemove.length ? [`remove ${toRemove.map((r) => `${r.region} (${r.identifier})`).join(', ')}: no longer in the list`] : []),
    ];
    const change = { path: SECTION.key, after: desired, ...(scope.ref !== undefined ? { before } : {}) };
    // The live replicas and the removals are ids observed now: the apply works from them, not from a second read.
    const target: ReplicaTarget = { live, remove: toRemove.map((r) => r.identifier), setUp: toSetUp };
    return [
      sectionEntry(scope, SECTION, { action: scope.ref === undefined ? 'create' : 'update', changes: [change], reason: reasonParts.join('; ') }, { ...target }),
    ];
  },
  async apply(entry, scope, ctx) {
    const { live, remove, setUp } = entry.target as unknown as ReplicaTarget;
    const ref = refAtApply(scope, ctx);
    for (const identifier of remove) {
      try {
        await ctx.api.removeAReadReplica(ref, { database_identifier: identifier }, writeOptions(scope, ctx));
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
    for (const region of setUp) {
      const intents = openIntents(await loadReplicaIntents(ctx.state, ref), live, ctx.clock.now());
      const intent: ReplicaSetupIntent = { region, at: ctx.clock.now(), known: live.filter((r) => r.region === region).map((r) => r.identifier) };
      await ctx.state.set(replicaIntentKey(ref), [...intents, intent]);
      await ctx.api.setupAReadReplica(ref, { read_replica_region: region }, writeOptions(scope, ctx));
    }
  },
  async export({ api, ref, read }) {
    const poolers = await read(() => api.getPoolerConfig(ref), POOLER_LIST);
    const regions = (poolers ?? []).filter((p) => p.database_type === 'READ_REPLICA').map(replicaRegion).filter((r): r is string => r !== undefined);
    return regions.length > 0 ? regions.sort().map((region) => ({ read_replica_region: region })) : undefined;
  },
};
