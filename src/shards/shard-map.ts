// The shard map: named shards, each owning the projects its selector matches, with its own
// credentials and budget. Every process reads the whole map, so each can check that the
// shards partition the fleet before it writes anything.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type { Node } from 'yaml';
import { parseRate, type RateSpec } from '../util/rate.js';
import type { ManifestError } from '../manifests/types.js';
import { fastLocator, parseFastYaml } from '../manifests/yaml-fast.js';

// The YAML library is loaded only when a shards file is not one the fast manifest reader reads, or has a problem to locate.
type YamlLibrary = typeof import('yaml');
let yamlLibrary: YamlLibrary | undefined;
const yaml = (): YamlLibrary => (yamlLibrary ??= createRequire(import.meta.url)('yaml') as YamlLibrary);

/** The file name read from the manifests directory when `--shards` is not given. */
export const DEFAULT_SHARD_MAP_FILE = 'shards.yaml';

const SHARD_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

interface ShardSelector {
  /** Every label must be present with this value in the project's `metadata.labels`. */
  labels?: Record<string, string>;
  /** The project's `spec.organization` (the Organization document's metadata.name). */
  organization?: string;
}

/** Where a shard's token comes from: exactly one of these. */
type ShardCredentials =
  | { tokenEnv: string }
  | { tokenFile: string }
  /** The name of an environment variable holding the token file's path (the chart's MANAGEMENT_API_TOKEN_FILE). */
  | { tokenFileEnv: string }
  | { oauth: { clientIdEnv: string; clientSecretEnv: string; refreshTokenEnv?: string; refreshTokenFile?: string } };

export interface Shard {
  name: string;
  selector: ShardSelector;
  credentials: ShardCredentials;
  /** The shard's request budget; default `--rate-limit`. */
  rate?: RateSpec;
  /** Line of the shard's entry in the map. */
  line: number;
}

export interface ShardMap {
  /** Absolute path of the map file. */
  path: string;
  /** The path as errors show it (relative to the manifests directory when inside it). */
  file: string;
  shards: Shard[];
  /**
   * `organizations:`: the one shard that creates each named organization (Organization
   * manifest name -> shard name). An organization not named here is created by the first
   * shard of the map (partition.ts: organizationOwners).
   */
  organizations: Record<string, string>;
}

export class ShardMapError extends Error {
  constructor(readonly errors: ManifestError[]) {
    super(errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.path || '/'}: ${e.message}`).join('\n'));
    this.name = 'ShardMapError';
  }
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Parses the text of a shard map; every problem is located (file, line, field). A map the fast
 * manifest reader takes whole, with no problem, is read without the YAML library; any other is
 * read (again) by the full parser, which locates each problem.
 */
function parseShardMap(text: string, path: string, file: string): ShardMap {
  return readPlainMap(text, path, file) ?? readMapDocument(text, path, file);
}

/** The map read by the fast reader, or undefined when it is not one it reads or has a problem. */
function readPlainMap(text: string, path: string, file: string): ShardMap | undefined {
  const documents = parseFastYaml(text);
  if (documents?.length !== 1 || documents[0]!.index !== 0) return undefined;
  const locate = fastLocator(text);
  let clean = locate !== undefined;
  const lineOf = (segments: ReadonlyArray<string | number>) => {
    const position = locate?.(0, segments.map(String), false);
    if (position === undefined) clean = false;
    return position?.line ?? 1;
  };
  const checked = checkShardMap(documents[0]!.value, dirname(path), () => (clean = false), lineOf);
  return clean && checked ? { path, file, ...checked } : undefined;
}

/** The map read by the YAML library, each problem located in its syntax tree. */
function readMapDocument(text: string, path: string, file: string): ShardMap {
  const counter = new (yaml().LineCounter)();
  const document = yaml().parseDocument(text, { lineCounter: counter, uniqueKeys: true });
  const errors: ManifestError[] = [];
  for (const error of document.errors) {
    const position = error.linePos?.[0] ?? { line: 1, col: 1 };
    errors.push({ file, line: position.line, column: position.col, path: '', message: `not valid YAML: ${error.message.split('\n')[0]}` });
  }
  if (errors.length > 0) throw new ShardMapError(errors);
  const positionOf = (node: Node | null | undefined) => (node?.range ? counter.linePos(node.range[0]) : { line: 1, col: 1 });
  const at: At = (where, fieldPath, message) => {
    const { line, col } = positionOf(nodeAt(document.contents, where));
    errors.push({ file, line, column: col, path: fieldPath, message });
  };
  const checked = checkShardMap(document.toJS() as unknown, dirname(path), at, (segments) => positionOf(nodeAt(document.contents, { segments })).line);
  if (errors.length > 0 || !checked) throw new ShardMapError(errors);
  return { path, file, ...checked };
}

/** The node of the syntax tree that `where` names (see Where), or null when there is none. */
function nodeAt(root: Node | null, where: Where): Node | null {
  let node: Node | null = root;
  for (let i = 0; i < where.segments.length; i++) {
    const segment = where.segments[i]!;
    let next: Node | null | undefined;
    let key: Node | null | undefined;
    if (yaml().isMap(node)) {
      const pair = node.items.find((item) => String((item.key as { value?: unknown } | null)?.value ?? item.key) === String(segment));
      key = pair?.key as Node | null | undefined;
      next = pair?.value as Node | null | undefined;
    } else if (yaml().isSeq(node)) {
      next = node.items[Number(segment)] as Node | null | undefined;
    }
    const last = i === where.segments.length - 1;
    if (last && where.key && key) return key;
    if (!next) return last && where.fallback === 'key' && key ? key : node;
    node = next;
  }
  return node;
}

/**
 * Where a problem is shown: the value at `segments` in the map (the key of its last segment
 * with `key`). When that value is missing or empty, the node `fallback` names: its parent (the
 * nearest node that exists) or the key it was written under.
 */
interface Where {
  segments: ReadonlyArray<string | number>;
  key?: boolean;
  fallback?: 'parent' | 'key';
}

interface Problem {
  where: Where;
  path: string;
  message: string;
}

type At = (where: Where, path: string, message: string) => void;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The checks of a map's content, on its plain value: the shards and the organizations'
 * owners; each problem goes to `at` with where it is to be shown. `lineOf` gives the line a
 * node of the map starts on.
 */
function checkShardMap(root: unknown, mapDir: string, at: At, lineOf: (segments: ReadonlyArray<string | number>) => number): Omit<ShardMap, 'path' | 'file'> | undefined {
  if (!isRecord(root)) {
    at({ segments: [] }, '', 'a shard map is a mapping with a `shards` list');
    return undefined;
  }
  for (const key of Object.keys(root)) {
    if (key !== 'shards' && key !== 'organizations') at({ segments: [key], key: true }, `/${key}`, 'unknown field: a shard map has `shards` and `organizations`');
  }
  const list = root.shards;
  if (!Array.isArray(list) || list.length === 0) {
    at({ segments: ['shards'] }, '/shards', 'expected a non-empty list of shards');
    return undefined;
  }
  const shards: Shard[] = [];
  const seen = new Map<string, number>();
  list.forEach((plain: unknown, index) => {
    const base = `/shards/${index}`;
    const item = ['shards', index];
    if (!isRecord(plain)) return at({ segments: item }, base, 'expected a mapping with name, selector and credentials');
    const field = (name: string): Where => ({ segments: [...item, name] });
    for (const key of Object.keys(plain)) {
      if (!['name', 'selector', 'credentials', 'rateLimit'].includes(key)) at(field(key), `${base}/${key}`, 'unknown field: expected name, selector, credentials or rateLimit');
    }
    const name = plain.name;
    if (typeof name !== 'string' || !SHARD_NAME.test(name)) {
      at(field('name'), `${base}/name`, 'expected a shard name: lower-case letters, digits and dashes, at most 63');
      return;
    }
    const line = lineOf(item);
    if (seen.has(name)) at(field('name'), `${base}/name`, `shard \`${name}\` is defined twice (first at line ${seen.get(name)})`);
    seen.set(name, line);
    const selector = parseSelector(plain.selector, field('selector'), `${base}/selector`, at);
    const credentials = parseCredentials(plain.credentials, field('credentials'), `${base}/credentials`, at, mapDir);
    let rate: RateSpec | undefined;
    if (plain.rateLimit !== undefined) {
      try {
        rate = parseRate(String(plain.rateLimit));
      } catch (error) {
        at(field('rateLimit'), `${base}/rateLimit`, (error as Error).message);
      }
    }
    if (selector && credentials) shards.push({ name, selector, credentials, line, ...(rate ? { rate } : {}) });
  });
  const organizations = parseOrganizationOwners(root.organizations, new Set(shards.map((s) => s.name)), at);
  return { shards, organizations };
}

/** `organizations: { <Organization manifest name>: <shard name> }`: each named shard must exist. */
function parseOrganizationOwners(value: unknown, shards: ReadonlySet<string>, at: At): Record<string, string> {
  const owners: Record<string, string> = {};
  if (value === undefined) return owners;
  if (!isRecord(value)) {
    at({ segments: ['organizations'] }, '/organizations', 'expected a mapping of Organization names to the shard that creates each');
    return owners;
  }
  for (const [name, shard] of Object.entries(value)) {
    if (typeof shard !== 'string' || !shards.has(shard)) {
      at({ segments: ['organizations', name], fallback: 'key' }, `/organizations/${name}`, `expected the name of a shard of this map (${[...shards].join(', ')}): the one shard that creates organization \`${name}\``);
      continue;
    }
    owners[name] = shard;
  }
  return owners;
}

function stringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

function parseSelector(value: unknown, where: Where, path: string, at: At): ShardSelector | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    at(where, path, 'expected a selector: labels (a map of label values) and/or organization');
    return undefined;
  }
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => key !== 'labels' && key !== 'organization');
  if (unknown.length > 0) at(where, `${path}/${unknown[0]}`, 'unknown field: a selector has labels and organization');
  if (record.labels !== undefined && !stringRecord(record.labels)) at(where, `${path}/labels`, 'expected a map of label names to string values');
  if (record.organization !== undefined && (typeof record.organization !== 'string' || record.organization === '')) {
    at(where, `${path}/organization`, 'expected the metadata.name of an Organization');
  }
  if (record.labels === undefined && record.organization === undefined) {
    at(where, path, 'an empty selector would match every project: give labels and/or organization');
    return undefined;
  }
  return {
    ...(stringRecord(record.labels) ? { labels: record.labels } : {}),
    ...(typeof record.organization === 'string' ? { organization: record.organization } : {}),
  };
}

function parseCredentials(value: unknown, where: Where, path: string, at: At, mapDir: string): ShardCredentials | undefined {
  const expected = 'expected exactly one of tokenEnv (an environment variable name), tokenFile (a path), tokenFileEnv (an environment variable name) or oauth';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    at(where, path, expected);
    return undefined;
  }
  const record = value as Record<string, unknown>;
  const given = Object.keys(record);
  if (given.length !== 1 || !['tokenEnv', 'tokenFile', 'tokenFileEnv', 'oauth'].includes(given[0]!)) {
    at(where, path, `${expected}; got ${given.join(', ') || 'nothing'}`);
    return undefined;
  }
  if (record.tokenEnv !== undefined) {
    if (typeof record.tokenEnv === 'string' && ENV_NAME.test(record.tokenEnv)) return { tokenEnv: record.tokenEnv };
    at(where, `${path}/tokenEnv`, 'expected the name of an environment variable (the token itself never belongs in the map)');
    return undefined;
  }
  if (record.tokenFileEnv !== undefined) {
    if (typeof record.tokenFileEnv === 'string' && ENV_NAME.test(record.tokenFileEnv)) return { tokenFileEnv: record.tokenFileEnv };
    at(where, `${path}/tokenFileEnv`, 'expected the name of an environment variable that holds the path of the token file');
    return undefined;
  }
  if (record.tokenFile !== undefined) {
    if (typeof record.tokenFile === 'string' && record.tokenFile !== '') return { tokenFile: resolve(mapDir, record.tokenFile) };
    at(where, `${path}/tokenFile`, 'expected a path (relative to the shard map)');
    return undefined;
  }
  const oauth = record.oauth as Record<string, unknown> | null;
  const names = ['clientIdEnv', 'clientSecretEnv', 'refreshTokenEnv', 'refreshTokenFile'];
  if (typeof oauth !== 'object' || oauth === null || Object.keys(oauth).some((k) => !names.includes(k))) {
    at(where, `${path}/oauth`, `expected ${names.join(', ')}`);
    return undefined;
  }
  for (const key of ['clientIdEnv', 'clientSecretEnv', 'refreshTokenEnv']) {
    if (oauth[key] !== undefined && (typeof oauth[key] !== 'string' || !ENV_NAME.test(oauth[key]))) {
      at(where, `${path}/oauth/${key}`, 'expected the name of an environment variable');
      return undefined;
    }
  }
  if (typeof oauth.clientIdEnv !== 'string' || typeof oauth.clientSecretEnv !== 'string') {
    at(where, `${path}/oauth`, 'clientIdEnv and clientSecretEnv are required');
    return undefined;
  }
  if (oauth.refreshTokenFile !== undefined && (typeof oauth.refreshTokenFile !== 'string' || oauth.refreshTokenFile === '')) {
    at(where, `${path}/oauth/refreshTokenFile`, 'expected a path (relative to the shard map)');
    return undefined;
  }
  return {
    oauth: {
      clientIdEnv: oauth.clientIdEnv,
      clientSecretEnv: oauth.clientSecretEnv,
      ...(typeof oauth.refreshTokenEnv === 'string' ? { refreshTokenEnv: oauth.refreshTokenEnv } : {}),
      ...(typeof oauth.refreshTokenFile === 'string' ? { refreshTokenFile: resolve(mapDir, oauth.refreshTokenFile) } : {}),
    },
  };
}

/** Reads and parses the map; a missing or unreadable file is a located error too. */
export async function readShardMap(path: string, file: string): Promise<ShardMap> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ShardMapError([{ file, line: 1, column: 1, path: '', message: `the shard map cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` }]);
  }
  return parseShardMap(text, path, file);
}
