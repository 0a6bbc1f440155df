// The machine-readable result: a stable document (its `version` changes only when a field's
// meaning does; fields are only ever added). Documented in docs/concepts.md.
//
// The document is made in pieces (`jsonChunks`): each entry, outcome, resource and project is
// turned into its JSON text on its own, so a large fleet's result is written without first
// building the whole document, or one string of it, in memory. The pieces joined are exactly
// `JSON.stringify(document, null, 2)`.
import type { ApplyOutcome, PassResult, PlanEntry } from '../types.js';

const JSON_FORMAT_VERSION = 1;

function entryDocument(e: PlanEntry): Record<string, unknown> {
  return {
    id: e.id,
    kind: e.kind,
    project: e.project ?? null,
    name: e.name,
    action: e.action,
    observeOnly: e.observeOnly ?? false,
    pending: e.pending ?? false,
    reason: e.reason ?? null,
    dependsOn: e.dependsOn ?? [],
    source: e.source ?? null,
    ...(e.wave !== undefined ? { wave: e.wave } : {}),
    ...(e.held ? { held: e.held } : {}),
    changes: e.changes.map((c) =>
      c.sensitive ? { path: c.path, sensitive: true } : { path: c.path, sensitive: false, ...('before' in c ? { before: c.before } : {}), ...('after' in c ? { after: c.after } : {}) },
    ),
  };
}

function outcomeDocument(o: ApplyOutcome): Record<string, unknown> {
  return {
    entryId: o.entryId,
    kind: o.kind,
    action: o.action,
    result: o.result,
    error: o.error ?? null,
    durationMs: o.durationMs ?? null,
  };
}

/** A field of the document: its value, or a list whose items are made (and written) one at a time. */
type Field = { value: unknown } | { items: readonly unknown[]; item?: (value: never) => unknown };

function documentFields(result: PassResult): Array<[string, Field]> {
  return [
    ['version', { value: JSON_FORMAT_VERSION }],
    ['result', { value: result.result }],
    ['dryRun', { value: result.dryRun }],
    ['revision', { value: result.revision ?? null }],
    ['startedAt', { value: new Date(result.startedAt).toISOString() }],
    ['finishedAt', { value: new Date(result.finishedAt).toISOString() }],
    [
      'summary',
      {
        value: {
          create: result.plan.summary.create,
          update: result.plan.summary.update,
          delete: result.plan.summary.delete,
          blocked: result.plan.summary.blocked,
          noop: result.plan.summary.noop,
          drift: result.plan.drift ?? 0,
          hasChanges: result.plan.hasChanges,
        },
      },
    ],
    ['entries', { items: result.plan.entries, item: entryDocument }],
    ['outcomes', { items: result.outcomes, item: outcomeDocument }],
    ['resources', { items: result.resources }],
    ['projects', { items: result.projects }],
    ['manifestErrors', { items: result.manifestErrors }],
    ['requests', { value: result.requests }],
    ...(result.rollout ? [['rollout', { value: { ...result.rollout, events: undefined } }] as [string, Field]] : []),
  ];
}

/** `JSON.stringify(value, null, 2)` as it reads nested at `indent`: every line after the first indented. */
function nested(value: unknown, indent: string): string | undefined {
  const text = JSON.stringify(value, null, 2) as string | undefined;
  // A JSON text holds no raw line break inside a string: every one is between values.
  return text === undefined ? undefined : text.replaceAll('\n', `\n${indent}`);
}

/** The JSON document of a pass, in pieces that joined are `JSON.stringify(document, null, 2)` (no final newline). */
export function* jsonChunks(result: PassResult): Generator<string> {
  let first = true;
  yield '{';
  for (const [name, field] of documentFields(result)) {
    if ('value' in field) {
      const text = nested(field.value, '  ');
      if (text === undefined) continue;
      yield `${first ? '' : ','}\n  ${JSON.stringify(name)}: ${text}`;
    } else if (field.items.length === 0) {
      yield `${first ? '' : ','}\n  ${JSON.stringify(name)}: []`;
    } else {
      yield `${first ? '' : ','}\n  ${JSON.stringify(name)}: [`;
      for (let index = 0; index < field.items.length; index++) {
        const item = field.item ? field.item(field.items[index] as never) : field.items[index];
        yield `${index === 0 ? '' : ','}\n    ${nested(item, '    ') ?? 'null'}`;
      }
      yield '\n  ]';
    }
    first = false;
  }
  yield first ? '}' : '\n}';
}

export function renderJson(result: PassResult, _options: { color?: boolean } = {}): string {
  return `${[...jsonChunks(result)].join('')}\n`;
}

/** Where `writeJson` writes: a stream, or anything with its `write` (then without waiting for a drain). */
type JsonSink = Pick<NodeJS.WritableStream, 'write'> & Partial<Pick<NodeJS.WritableStream, 'once' | 'off'>>;

/**
 * Writes the JSON document of a pass to `stream` piece by piece (about 64 KB at a time), then a
 * final newline: what `renderJson` returns, without holding all of it at once. It waits for the
 * stream to drain when the stream asks to, and stops when the stream fails or closes (a reader
 * that went away).
 */
export async function writeJson(result: PassResult, stream: JsonSink): Promise<void> {
  const once = stream.once?.bind(stream);
  const off = stream.off?.bind(stream);
  const events = once !== undefined && off !== undefined;
  let buffered: string[] = [];
  let size = 0;
  let ended = false;
  const end = () => {
    ended = true;
  };
  if (events) once('error', end).once('close', end);
  const flush = async (): Promise<void> => {
    const text = buffered.join('');
    buffered = [];
    size = 0;
    if (stream.write(text) || ended || !events) return;
    await new Promise<void>((resolve) => {
      const go = () => {
        off('drain', go).off('error', go).off('close', go);
        resolve();
      };
      once('drain', go).once('error', go).once('close', go);
    });
  };
  try {
    for (const chunk of jsonChunks(result)) {
      buffered.push(chunk);
      size += chunk.length;
      if (size >= 65_536) await flush();
      if (ended) return;
    }
    buffered.push('\n');
    await flush();
  } finally {
    if (events) off('error', end).off('close', end);
  }
}
