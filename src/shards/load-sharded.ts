// Loads the manifest set as a process of a sharded fleet sees it: the whole set is read and
// checked (every process checks that the shard map partitions the fleet), then narrowed to
// the shard's own documents. Without a shard map this is plain loading.
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { loadManifests, type LoadOptions } from '../reconcile/load-manifests.js';
import type { ManifestError, ManifestSet, ProjectDocument } from '../manifests/types.js';
import { documentsOfShard, organizationOwners, partition } from './partition.js';
import { credentialInsideTree } from '../util/manifests-tree.js';
import { checkRollouts } from '../reconcile/rollout/checks.js';
import { DEFAULT_SHARD_MAP_FILE, ShardMapError, readShardMap, type Shard, type ShardMap } from './shard-map.js';

interface ShardOptions {
  /** `--shards FILE` as given (resolved against `cwd`); default `shards.yaml` in the manifests directory, when present. */
  shardsFile?: string;
  /** `--shard NAME`. */
  shard?: string;
  cwd: string;
  /** How the manifests themselves are read (reference policy, limits). */
  load?: LoadOptions;
}

interface ShardedSet {
  /** The documents this process reconciles (the shard's, or all without a shard). */
  set: ManifestSet;
  map?: ShardMap;
  shard?: Shard;
  /** Projects matched by no shard or by several (0 without a map). */
  unowned: number;
}

/** The shard map's path, or undefined when there is none (no `--shards`, no `shards.yaml`). */
function shardMapPath(manifestsDir: string, options: Pick<ShardOptions, 'shardsFile' | 'cwd'>): string | undefined {
  if (options.shardsFile !== undefined) return resolve(options.cwd, options.shardsFile);
  const fallback = join(manifestsDir, DEFAULT_SHARD_MAP_FILE);
  return existsSync(fallback) ? fallback : undefined;
}

/** Reads the shard map alone (credentials are chosen before any manifest is read). */
export async function readShardMapFor(manifestsDir: string, options: ShardOptions): Promise<ShardMap | undefined> {
  const path = shardMapPath(manifestsDir, options);
  if (path === undefined) return undefined;
  return readShardMap(path, displayName(manifestsDir, path));
}

function displayName(root: string, path: string): string {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : path;
}

/** The shard named by `--shard`, or a located error listing the shards there are. */
export function findShard(map: ShardMap, name: string): Shard | ManifestError {
  const shard = map.shards.find((s) => s.name === name);
  if (shard) return shard;
  return { file: map.file, line: 1, column: 1, path: '/shards', message: `no shard named \`${name}\` in ${map.file} (shards: ${map.shards.map((s) => s.name).join(', ')})` };
}

export async function loadShardedManifests(dir: string, options: ShardOptions): Promise<ShardedSet> {
  const loaded = await loadManifests(dir, options.load);
  // Against the resolved tree (a git-sync link), so the map's name matches what discovery found.
  const given = shardMapPath(loaded.root, options);
  const path = given === undefined ? undefined : await realpath(given).catch(() => given);
  if (path === undefined) {
    if (options.shard === undefined) return { set: withRolloutChecks(loaded), unowned: 0 };
    const error: ManifestError = { file: DEFAULT_SHARD_MAP_FILE, line: 1, column: 1, path: '', message: `--shard ${options.shard} needs a shard map: ${DEFAULT_SHARD_MAP_FILE} in the manifests directory or --shards FILE` };
    return { set: { ...loaded, errors: [...loaded.errors, error] }, unowned: 0 };
  }
  // The map is not a manifest: manifest discovery reads every *.yaml, so whatever it made of
  // the map file (an error: it has no kind) is dropped here.
  const file = displayName(loaded.root, path);
  const set: ManifestSet = {
    ...loaded,
    documents: loaded.documents.filter((d) => d.source.file !== file),
    errors: loaded.errors.filter((e) => e.file !== file),
    ...(loaded.files ? { files: loaded.files.filter((f) => f !== file) } : {}),
  };
  let map: ShardMap;
  try {
    map = await readShardMap(path, file);
  } catch (error) {
    if (!(error instanceof ShardMapError)) throw error;
    return { set: { ...set, errors: [...set.errors, ...error.errors] }, unowned: 0 };
  }
  const owned = partition(map, set.documents);
  const errors = [
    ...set.errors, ...owned.errors, ...credentialPathErrors(map, loaded.root),
    // Over the whole checkout: a rollout's waves may not span shards.
    ...checkRollouts(set.documents, { file: map.file, shards: map.shards.map((s) => s.name), owners: owned.owners }),
  ];
  let shard: Shard | undefined;
  if (options.shard !== undefined) {
    const found = findShard(map, options.shard);
    if ('selector' in found) shard = found;
    else errors.push(found);
  }
  if (!shard || errors.length > 0) return { set: { ...set, errors }, map, ...(shard ? { shard } : {}), unowned: owned.unowned };
  const organizations = organizationOwners(map, set.documents);
  const documents = documentsOfShard(shard.name, owned.owners, set.documents, organizations);
  // The rest of the checkout: what this shard hands over rather than removes.
  const elsewhere = set.documents.flatMap((document) => {
    const owner = document.kind === 'Project' ? owned.owners.get(document.metadata.name) : undefined;
    return owner !== undefined && owner !== shard.name ? [{ document: document as ProjectDocument, shard: owner }] : [];
  });
  const scope = { name: shard.name, mapFile: map.file, elsewhere, organizationOwners: Object.fromEntries(organizations) };
  return { set: { ...set, documents, errors, shard: scope }, map, shard, unowned: owned.unowned };
}

/** A set without a shard map: its Rollout is checked against its projects. */
function withRolloutChecks(set: ManifestSet): ManifestSet {
  const errors = checkRollouts(set.documents);
  return errors.length === 0 ? set : { ...set, errors: [...set.errors, ...errors] };
}

/**
 * A credential file of the map that resolves (symbolic links included) inside the manifests
 * tree is refused: the tree is read and deployed (a function's files), and the rotated refresh
 * token is written to its file. Located at the shard's entry in the map, naming the field.
 */
function credentialPathErrors(map: ShardMap, root: string): ManifestError[] {
  const errors: ManifestError[] = [];
  map.shards.forEach((shard, index) => {
    const credentials = shard.credentials;
    const files: Array<[string, string]> = [];
    if ('tokenFile' in credentials) files.push(['tokenFile', credentials.tokenFile]);
    if ('oauth' in credentials && credentials.oauth.refreshTokenFile !== undefined) files.push(['oauth/refreshTokenFile', credentials.oauth.refreshTokenFile]);
    for (const [field, file] of files) {
      const reason = credentialInsideTree(root, file);
      if (reason === undefined) continue;
      errors.push({
        file: map.file,
        line: shard.line,
        column: 1,
        path: `/shards/${index}/credentials/${field}`,
        message: `shard \`${shard.name}\`: credentials.${field.replace('/', '.')} ${reason}`,
      });
    }
  });
  return errors;
}
