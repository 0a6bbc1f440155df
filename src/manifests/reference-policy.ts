// What a secret reference may name. A manifest's author chooses where a value goes (a
// function secret, an SMTP password sent to a host of their choosing), so a reference must
// not be a way to read the reconciler's own credentials: its configuration variables, the
// token file, the state directory, or the process's view of the system (/proc, /sys, /dev).
// File references read only inside the allowed roots: the manifests directory and the
// directories given with --secret-dirs. validate and apply both ask `refusal` here.
import { realpathSync } from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';
import type { AnyDocument, SecretRef } from './types.js';

/** Variables of the tool's own configuration and credentials (OAuth ones included). */
const REFUSED_ENV_PREFIXES = ['MANAGEMENT_API_', 'RECONCILE_'] as const;
/** The kernel's and devices' files: never a secret, often the process's own environment. */
const SYSTEM_DIRS = ['/proc', '/sys', '/dev'] as const;

export interface ReferencePolicyOptions {
  /** Directories besides the manifests directory that file references may read (--secret-dirs). */
  secretDirs?: readonly string[];
  /** The state directory: never read through a reference. */
  stateDir?: string;
  /** The tool's credential files (the token file, the OAuth refresh token file). */
  credentialFiles?: readonly string[];
}

export interface ReferencePolicy {
  /** Real paths a file reference must lie inside; empty: any (documents not loaded from a directory). */
  roots: string[];
  stateDir?: string;
  credentialFiles: string[];
  /**
   * The secret files the loaded documents name (`valueFrom.file`), each with the file of the
   * document that names it: never read as a checkout file (a function's source file linked to
   * one is refused, as a manifest or migration file is when loading).
   */
  secretFiles?: Array<{ path: string; by: string }>;
}

/** Policy of documents built without loadManifests: the fixed refusals only. */
export const BASE_POLICY: ReferencePolicy = { roots: [], credentialFiles: [] };

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

export function referencePolicy(manifestsRoot: string, options: ReferencePolicyOptions = {}): ReferencePolicy {
  return {
    roots: [manifestsRoot, ...(options.secretDirs ?? [])].map(real),
    ...(options.stateDir !== undefined ? { stateDir: real(options.stateDir) } : {}),
    credentialFiles: (options.credentialFiles ?? []).map(real),
  };
}

const policies = new WeakMap<object, ReferencePolicy>();

export function registerReferencePolicy(document: AnyDocument, policy: ReferencePolicy): void {
  policies.set(document, policy);
}

/** The policy a document was loaded under (BASE_POLICY for a document built in code). */
export function referencePolicyOf(document: AnyDocument): ReferencePolicy {
  return policies.get(document) ?? BASE_POLICY;
}

function within(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

export interface Refusal {
  message: string;
  hint: string;
}

/** Why a reference may not be read at all, or undefined when it may. */
export function refusal(ref: SecretRef, baseDir: string, policy: ReferencePolicy): Refusal | undefined {
  if ('env' in ref.valueFrom) {
    const name = ref.valueFrom.env.toUpperCase();
    if (REFUSED_ENV_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      return {
        message: `is refused: ${REFUSED_ENV_PREFIXES.map((p) => `${p}*`).join(' and ')} are the reconciler's own configuration and credentials, never a manifest's value`,
        hint: 'give the value a variable of its own',
      };
    }
    return undefined;
  }
  const written = ref.valueFrom.file;
  const lexical = isAbsolute(written) ? resolve(written) : resolve(baseDir, written);
  const target = real(lexical);
  if (SYSTEM_DIRS.some((dir) => within(dir, lexical) || within(dir, target))) {
    return { message: `is refused: ${SYSTEM_DIRS.join(', ')} are never read`, hint: 'put the value in a file of its own' };
  }
  if (policy.credentialFiles.some((file) => file === target || file === lexical)) {
    return { message: "is refused: it is the reconciler's own credential file", hint: 'put the value in a file of its own' };
  }
  if (policy.stateDir !== undefined && (within(policy.stateDir, target) || within(policy.stateDir, lexical))) {
    return { message: "is refused: it lies in the reconciler's state directory", hint: 'put the value in a file of its own' };
  }
  if (policy.roots.length > 0 && !policy.roots.some((root) => within(root, target))) {
    return {
      message: 'is refused: it lies outside the directories file references may read',
      hint: 'file references read inside the manifests directory and the directories given with --secret-dirs (RECONCILE_SECRET_DIRS)',
    };
  }
  return undefined;
}
