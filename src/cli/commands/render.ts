// `reconcile render [DIR]`: the documents the ProjectSets of a checkout make, printed as YAML
// (as `helm template` and `kustomize build` print theirs), so a reviewer sees what a template
// makes before a plan. Offline: no token, no API. `--output json` prints them as a JSON array.
// Exit 0, or 1 when the checkout has errors (printed, located, on standard error).
import { resolve } from 'node:path';
import { stringify } from 'yaml';
import { UsageError, type ContextOf } from '../context.js';
import { loadManifests } from '../../reconcile/load-manifests.js';
import type { AnyDocument } from '../../manifests/types.js';
import { referenceOptions } from '../reference-options.js';

/** A generated document as written to a file: no loader bookkeeping. */
function plain(document: AnyDocument): Record<string, unknown> {
  return { apiVersion: document.apiVersion, kind: document.kind, metadata: document.metadata, spec: document.spec };
}

export async function run(context: ContextOf<'render'>): Promise<number> {
  if (context.positionals.length > 1) throw new UsageError(`render takes at most one directory, got ${context.positionals.length}`);
  const output = context.settings.output;
  if (output !== 'text' && output !== 'json') throw new UsageError(`render: --output must be text (YAML) or json, got \`${output}\``);
  const dir = resolve(context.cwd, context.positionals[0] ?? context.settings.manifests ?? '.');
  const set = await loadManifests(dir, { references: referenceOptions(context) });
  const errors = set.errors.filter((error) => (error.severity ?? 'error') === 'error');
  if (errors.length > 0) {
    for (const error of errors) context.stderr.write(`${error.file}:${error.line}:${error.column}${error.path ? ` ${error.path}` : ''}: ${error.message}${error.hint ? ` (${error.hint})` : ''}\n`);
    context.stderr.write(`reconcile: render: the manifests are invalid (${errors.length} error${errors.length === 1 ? '' : 's'}): nothing is rendered\n`);
    return 1;
  }
  const generated = set.documents.filter((document) => document.source.set !== undefined);
  if (output === 'json') {
    context.stdout.write(`${JSON.stringify(generated.map((document) => ({ ...plain(document), generatedBy: { ...document.source.set, template: `${document.source.file}:${document.source.line}` } })), null, 2)}\n`);
    return 0;
  }
  const parts = generated.map((document) => {
    const from = document.source.set!;
    const header = `# ${document.kind} ${document.metadata.name}: ProjectSet ${from.set} (${document.source.file}:${document.source.line}), element ${from.key} (${from.element})`;
    return `---\n${header}\n${stringify(plain(document), { lineWidth: 0 })}`;
  });
  context.stdout.write(parts.join(''));
  if (generated.length === 0) context.stderr.write('reconcile: render: no ProjectSet in this checkout: nothing to render\n');
  return 0;
}
