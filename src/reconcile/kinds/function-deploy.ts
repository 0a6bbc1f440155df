// The two wire forms of a function's sources: the multipart upload of a deploy, and the
// multipart body the service gives back (`GET .../body` with `Accept: multipart/form-data`).
import type { BinaryBody } from '../../api/request.js';
import { sha256Hex } from './common.js';
import type { FunctionSources } from './function-sources.js';

/** The `metadata` part of a deploy. */
export interface DeployMetadata {
  entrypoint_path: string;
  import_map_path?: string;
  static_patterns?: string[];
  verify_jwt?: boolean;
  name?: string;
}

/**
 * The deploy request body: `metadata` JSON plus one `file` part per source file, named by
 * its path relative to the function root. Parts are file-backed blobs, so the upload streams
 * from disk instead of holding the sources in memory.
 */
export async function buildDeployForm(sources: FunctionSources, metadata: DeployMetadata): Promise<FormData> {
  const form = new FormData();
  form.append('metadata', JSON.stringify(metadata));
  for (const file of sources.files) {
    const blob = await sources.checkout.blob(file.absolute);
    form.append('file', blob, file.path);
  }
  return form;
}

export interface DeployedFile {
  /** Path relative to the function root (see normalizeBodyPath). */
  path: string;
  sha256: string;
  /** The filename exactly as the service sent it (export checks it before writing a file). */
  name: string;
  /** The bytes, only when asked for: comparing needs the digest alone. */
  content?: Uint8Array;
}

interface DeployedBody {
  metadata: Record<string, unknown> | undefined;
  files: DeployedFile[];
}

/** File names as the service reports them, reduced to a path relative to the function root. */
export function normalizeBodyPath(name: string): string {
  return name.replace(/\\/g, '/').replace(/^file:\/\//, '').replace(/^\.?\/+/, '');
}

/** The files of a deployed function, or undefined when the service answered an opaque bundle (no comparison possible). */
export async function parseFunctionBody(
  body: BinaryBody | Record<string, unknown> | undefined,
  options: { content?: boolean } = {},
): Promise<DeployedBody | undefined> {
  if (!body || !isBinary(body) || !/^multipart\/form-data/i.test(body.contentType)) return undefined;
  const form = await new Response(body.bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': body.contentType } }).formData();
  let metadata: Record<string, unknown> | undefined;
  const files: DeployedBody['files'] = [];
  for (const [field, value] of form.entries()) {
    if (field === 'metadata') {
      const text = typeof value === 'string' ? value : await value.text();
      try {
        metadata = JSON.parse(text) as Record<string, unknown>;
      } catch {
        metadata = undefined;
      }
      continue;
    }
    if (typeof value === 'string') continue;
    const bytes = new Uint8Array(await value.arrayBuffer());
    files.push({ path: normalizeBodyPath(value.name), sha256: sha256Hex(bytes), name: value.name, ...(options.content ? { content: bytes } : {}) });
  }
  return { metadata, files };
}

function isBinary(body: BinaryBody | Record<string, unknown>): body is BinaryBody {
  return typeof (body as BinaryBody).contentType === 'string' && (body as BinaryBody).bytes instanceof Uint8Array;
}
