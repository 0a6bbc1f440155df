// Rendering the chart with helm and checking rendered objects against the Kubernetes and
// prometheus-operator models.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, REPO_ROOT } from './tools.js';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runHelm(helm: string, args: string[]): HelmResult {
  const out = spawnSync(helm, args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    // helm keeps caches and config under HOME; keep them out of the user's.
    env: { PATH: process.env.PATH ?? '', HOME: join(REPO_ROOT, 'node_modules', '.cache', 'reconciler-tools', 'helm-home') },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** The values the chart requires (image, API URL, repository), given to every render unless `bare`. */
export const REQUIRED_VALUES = join(import.meta.dirname, 'required-values.yaml');

export function template(helm: string, options: { release?: string; namespace?: string; valuesFiles?: string[]; set?: string[]; bare?: boolean } = {}): HelmResult {
  const args = ['template', options.release ?? 'reconciler', CHART_DIR, '--namespace', options.namespace ?? 'fleet'];
  if (!options.bare) args.push('--values', REQUIRED_VALUES);
  for (const file of options.valuesFiles ?? []) args.push('--values', file);
  for (const value of options.set ?? []) args.push('--set', value);
  return runHelm(helm, args);
}

export function parseManifests(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const document of parseAllDocuments(text)) {
    if ('errors' in document && document.errors.length > 0) throw new Error(`rendered YAML does not parse: ${document.errors[0]!.message}`);
    const value = document.toJSON() as K8sObject | null;
    if (value !== null) objects.push(value);
  }
  return objects;
}

export function renderObjects(helm: string, options: Parameters<typeof template>[1] = {}): K8sObject[] {
  const result = template(helm, options);
  if (result.status !== 0) throw new Error(`helm template failed (${result.status}): ${result.stderr}`);
  return parseManifests(result.stdout);
}

/** Module path of the model class of an object, by group/version and kind. */
export function modelModule(object: Pick<K8sObject, 'apiVersion' | 'kind'>): string {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  if (group === 'monitoring.coreos.com') return `@kubernetes-models/prometheus-operator/${group}/${version}/${object.kind}`;
  return group ? `kubernetes-models/${group}/${version}/${object.kind}` : `kubernetes-models/${version}/${object.kind}`;
}

/** The name of the type the model's .d.ts exports for an object (`IDeployment`). */
export function modelInterface(object: Pick<K8sObject, 'kind'>): string {
  return `I${object.kind}`;
}

/** Validates with the model's JSON Schema (types, formats, required fields); throws on error. */
export async function validateWithModel(object: K8sObject): Promise<void> {
  const module = (await import(modelModule(object))) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = module[object.kind];
  if (!Model) throw new Error(`${modelModule(object)} exports no ${object.kind}`);
  new Model(object).validate();
}

/**
 * The models' schemas allow unknown fields (as the API server's do, with a warning), so a
 * misspelt `readOnlyRootFileSystem` would pass them. The models' TypeScript interfaces do not:
 * each object becomes an object literal typed with its interface, and tsc's excess property
 * check rejects every field the API does not define.
 */
export function typecheckWithModels(objects: K8sObject[]): { status: number | null; output: string } {
  const cacheDir = join(REPO_ROOT, 'node_modules', '.cache', 'reconciler-tools');
  mkdirSync(cacheDir, { recursive: true });
  const dir = mkdtempSync(join(cacheDir, 'typecheck-'));
  try {
    const imports = new Map<string, string>();
    const lines: string[] = [];
    objects.forEach((object, index) => {
      const alias = `T${imports.size}`;
      const key = modelModule(object);
      if (!imports.has(key)) imports.set(key, alias);
      lines.push(`// ${object.kind}/${object.metadata.name}`, `export const object${index}: ${imports.get(key)} = ${JSON.stringify(object, null, 2)};`);
    });
    const header = [...imports].map(([module, alias]) => `import type { ${modelInterface({ kind: module.split('/').pop()! })} as ${alias} } from '${module}';`);
    writeFileSync(join(dir, 'objects.ts'), `${header.join('\n')}\n\n${lines.join('\n')}\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2023', skipLibCheck: true, types: [] },
        files: ['objects.ts'],
      }),
    );
    const out = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' });
    return { status: out.status, output: `${out.stdout}${out.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function findObject<T = K8sObject>(objects: K8sObject[], kind: string, name?: string): T {
  const found = objects.find((object) => object.kind === kind && (name === undefined || object.metadata.name === name));
  if (!found) throw new Error(`no ${kind}${name ? `/${name}` : ''} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found as T;
}

export function writeTemp(dir: string, name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
