// Loading a checkout runs every kind's checks and reads every kind's files: the loader of the
// manifests layer (src/manifests/load.ts) takes them as its facets, and only
// src/reconcile/load-manifests.ts, which hands it the registry's, calls it. No other module of
// src imports the manifests layer's loader, so no caller can load a checkout without a kind's
// checks. The check is shown to fail on a deliberate violation.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importGraph, type ImportGraph } from './import-graph.js';
import { LOAD_FACETS } from '../../src/reconcile/load-manifests.js';
import { KIND_MODULES } from '../../src/reconcile/registry.js';
import { checkRolloutDocuments } from '../../src/reconcile/rollout/document-checks.js';
import { rolloutDocument } from '../../src/reconcile/rollout/schema.js';
import type { KindModule } from '../../src/reconcile/types.js';

const SRC = new URL('../../src', import.meta.url).pathname;
const LOADER = 'manifests/load.ts';
const THE_CALLER = 'reconcile/load-manifests.ts';

/** The modules besides `src/reconcile/load-manifests.ts` that import the loader of the manifests layer. */
function otherLoaders(graph: ImportGraph): string[] {
  return [...graph].filter(([file, targets]) => file !== THE_CALLER && targets.includes(LOADER)).map(([file]) => file).sort();
}

let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

function tree(files: Record<string, string>): string {
  scratch = mkdtempSync(join(tmpdir(), 'manifest-loading-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), text);
  }
  return scratch;
}

describe('loading a checkout', () => {
  it('goes through src/reconcile/load-manifests.ts: no other module of src imports the loader of the manifests layer', () => {
    const graph = importGraph(SRC);
    expect(graph.get(THE_CALLER)).toContain(LOADER);
    expect(otherLoaders(graph)).toEqual([]);
  });

  it('has the checks and the load-time reader of every kind module of the registry, and the Rollout document\'s checks', () => {
    const modules = (KIND_MODULES as readonly KindModule<string>[]).filter((module) => module.checks || module.files?.readAt === 'load');
    expect(modules.length).toBeGreaterThan(4);
    for (const module of modules) {
      const facets = LOAD_FACETS.get(module.document!.kind);
      expect(facets?.check).toBe(module.checks);
      expect(facets?.read).toBe(module.files?.readAt === 'load' ? module.files.read : undefined);
    }
    expect(LOAD_FACETS.get(rolloutDocument.kind)).toEqual({ check: checkRolloutDocuments });
  });

  it('reports a module of src that imports the loader itself', () => {
    const root = tree({
      'manifests/load.ts': 'export const loadCheckout = () => 1;\n',
      'reconcile/load-manifests.ts': "import { loadCheckout } from '../manifests/load.js';\nexport const loadManifests = () => loadCheckout();\n",
      'cli/commands/render.ts': "import { loadCheckout } from '../../manifests/load.js';\nexport const render = () => loadCheckout();\n",
    });
    expect(otherLoaders(importGraph(root))).toEqual(['cli/commands/render.ts']);
  });
});
