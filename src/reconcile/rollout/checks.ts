// Checks of Rollout documents against the projects of the whole checkout, run by every load
// (`validate`, every pass, the daemon): a declared wave whose selector matches no project (a
// typo would silently drop the canary), a `shard` that names no shard of the map, two Rollouts
// for the same projects, and a rollout whose waves span shards. Shards share nothing: a shard
// cannot see another's progress, so a rollout across shards would let one shard's tenants go
// ahead while the canary's shard is halted. It is refused before anything is applied.
import type { AnyDocument, ManifestError, ProjectDocument, RolloutDocument } from '../../manifests/types.js';
import { IMPLICIT_WAVE, matchesSelector, placeInWaves, rolloutDocuments } from './config.js';

/** What the checks know of a shard map: each project's owner and the shards' names. */
export interface ShardOwners {
  file: string;
  shards: readonly string[];
  owners: ReadonlyMap<string, string>;
}

function at(document: RolloutDocument, path: string, message: string): ManifestError {
  return { file: document.source.file, line: document.source.line, column: document.source.column, path, message };
}

function checkWaves(document: RolloutDocument, projects: readonly ProjectDocument[], scope: string): ManifestError[] {
  return (document.spec.waves ?? []).flatMap((wave, index) =>
    projects.some((project) => matchesSelector(wave.selector, project))
      ? []
      : [at(document, `/spec/waves/${index}/selector`, `wave \`${wave.name}\` of Rollout \`${document.metadata.name}\` selects no project${scope} (selector ${JSON.stringify(wave.selector)}): a wave that selects nothing would pass at once; fix the selector or remove the wave`)],
  );
}

/** The shards the waves of an unscoped Rollout select, wave by wave. */
function shardsOfWaves(document: RolloutDocument, projects: readonly ProjectDocument[], map: ShardOwners): Map<string, Set<string>> {
  const waves = document.spec.waves ?? [];
  const placed = placeInWaves(document.spec, projects.filter((p) => p.spec.policy?.suspend !== true));
  const byWave = new Map<string, Set<string>>();
  for (const [project, index] of placed) {
    const owner = map.owners.get(project);
    if (owner === undefined) continue;
    const name = waves[index]?.name ?? IMPLICIT_WAVE;
    byWave.set(name, (byWave.get(name) ?? new Set()).add(owner));
  }
  return byWave;
}

export function checkRollouts(documents: readonly AnyDocument[], map?: ShardOwners): ManifestError[] {
  const rollouts = rolloutDocuments(documents);
  if (rollouts.length === 0) return [];
  const projects = documents.filter((d): d is ProjectDocument => d.kind === 'Project');
  const errors: ManifestError[] = [];
  const unscoped = rollouts.filter((r) => r.spec.shard === undefined);
  for (const rollout of rollouts) {
    const shard = rollout.spec.shard;
    if (shard === undefined) {
      errors.push(...checkWaves(rollout, projects, ''));
      if (map && (rollout.spec.waves ?? []).length > 0) {
        const byWave = shardsOfWaves(rollout, projects, map);
        const shards = new Set([...byWave.values()].flatMap((set) => [...set]));
        if (shards.size > 1) {
          const order = [...(rollout.spec.waves ?? []).map((wave) => wave.name), IMPLICIT_WAVE].filter((wave) => byWave.has(wave));
          const detail = order.map((wave) => `${wave}: ${[...byWave.get(wave)!].sort().join(', ')}`).join('; ');
          errors.push(at(rollout, '/spec/waves', `the waves of Rollout \`${rollout.metadata.name}\` select projects of ${shards.size} shards of ${map.file} (${detail}): shards share no progress, so a rollout never spans them; write one Rollout per shard, each with \`spec.shard\` and its own canary wave`));
        }
      }
      continue;
    }
    if (!map) {
      errors.push(at(rollout, '/spec/shard', `Rollout \`${rollout.metadata.name}\` names shard \`${shard}\` but there is no shard map`));
      continue;
    }
    if (!map.shards.includes(shard)) {
      errors.push(at(rollout, '/spec/shard', `Rollout \`${rollout.metadata.name}\` names shard \`${shard}\`: no shard of that name in ${map.file} (shards: ${map.shards.join(', ')})`));
      continue;
    }
    if (unscoped.length > 0) {
      errors.push(at(rollout, '/spec/shard', `Rollout \`${rollout.metadata.name}\` orders shard \`${shard}\`, and Rollout \`${unscoped[0]!.metadata.name}\` (no \`spec.shard\`) orders every shard: give each Rollout a shard`));
    }
    errors.push(...checkWaves(rollout, projects.filter((p) => map.owners.get(p.metadata.name) === shard), ` of shard \`${shard}\``));
  }
  return errors;
}
