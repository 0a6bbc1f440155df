// The path of a pass: from the command's entries (the one-shot command, src/cli/commands/
// reconcile.ts, which `apply FILE` goes through, and the daemon, src/cli/commands/watch.ts), every
// pass goes through the conductor (src/run/): only src/run/ binds the engine's `runPass` (the
// command and the daemon layers never call it), the entries reach src/run/conductor.ts, and
// nothing under src/run/ imports the command layer. The check is shown to fail on a deliberate
// violation of each rule.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bindsRunPass, passPathViolations } from './import-graph.js';

const SRC = new URL('../../src', import.meta.url).pathname;

/** The trees a test made (one test may make several). */
const scratches: string[] = [];
afterEach(() => {
  for (const scratch of scratches.splice(0)) rmSync(scratch, { recursive: true, force: true });
});

/** A source tree of its own, file by file. */
function tree(files: Record<string, string>): string {
  const scratch = mkdtempSync(join(tmpdir(), 'pass-path-'));
  scratches.push(scratch);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), text);
  }
  return scratch;
}

/** A tree whose passes all go through the conductor; `changes` replace or add files. */
function passTree(changes: Record<string, string> = {}): string {
  return tree({
    'reconcile/engine.ts': 'export async function runPass() {}\nexport function invalidPassResult() {}\nexport interface PassOptions {}\n',
    'run/pass.ts': "export async function passOnSession() {\n  const { runPass } = await import('../reconcile/engine.js');\n  return runPass();\n}\n",
    'run/conductor.ts': "import { passOnSession } from './pass.js';\nexport const conductPass = () => passOnSession();\n",
    'cli/commands/reconcile.ts':
      "import type { PassOptions } from '../../reconcile/engine.js';\nexport async function executePass() {\n  const { invalidPassResult } = await import('../../reconcile/engine.js');\n  const { conductPass } = await import('../../run/conductor.js');\n  return [invalidPassResult, conductPass];\n}\n",
    'cli/commands/watch.ts': "import { conductPass } from '../../run/conductor.js';\nexport const runDaemon = () => conductPass;\n",
    'daemon/controller.ts': "import type { PassResult } from '../reconcile/types.js';\nexport type R = PassResult;\n",
    'reconcile/types.ts': 'export interface PassResult {}\n',
    ...changes,
  });
}

describe('the path of a pass', () => {
  it('goes through the conductor in src/', () => {
    expect(passPathViolations(SRC)).toEqual([]);
  });

  it('is checked on a tree that keeps it', () => {
    expect(passPathViolations(passTree())).toEqual([]);
  });
});

describe('the check fails on a deliberate violation', () => {
  it('the one-shot command calling runPass itself, statically or through a dynamic import', () => {
    const statically = passTree({
      'cli/commands/reconcile.ts': "import { runPass } from '../../reconcile/engine.js';\nimport { conductPass } from '../../run/conductor.js';\nexport const executePass = () => [runPass, conductPass];\n",
    });
    expect(passPathViolations(statically)).toEqual(['cli/commands/reconcile.ts binds runPass of reconcile/engine.ts: a pass goes through src/run/']);
    const dynamically = passTree({
      'cli/commands/reconcile.ts':
        "import { conductPass } from '../../run/conductor.js';\nexport async function executePass() {\n  const { runPass, invalidPassResult } = await import('../../reconcile/engine.js');\n  return [runPass, invalidPassResult, conductPass];\n}\n",
    });
    expect(passPathViolations(dynamically)).toEqual(['cli/commands/reconcile.ts binds runPass of reconcile/engine.ts: a pass goes through src/run/']);
  });

  it('the daemon calling runPass through a namespace import', () => {
    const root = passTree({ 'daemon/controller.ts': "import * as engine from '../reconcile/engine.js';\nexport const run = () => engine.runPass();\n" });
    expect(passPathViolations(root)).toEqual(['daemon/controller.ts binds runPass of reconcile/engine.ts: a pass goes through src/run/']);
  });

  it('a module the entries reach outside src/run/ that binds runPass (a re-export included)', () => {
    const root = passTree({
      'status/shortcut.ts': "export { runPass } from '../reconcile/engine.js';\n",
      'cli/commands/watch.ts': "import { conductPass } from '../../run/conductor.js';\nimport { runPass } from '../../status/shortcut.js';\nexport const runDaemon = () => [conductPass, runPass];\n",
    });
    expect(passPathViolations(root)).toEqual(['status/shortcut.ts binds runPass of reconcile/engine.ts: a pass goes through src/run/']);
  });

  it('an entry that does not reach the conductor', () => {
    const root = passTree({ 'cli/commands/watch.ts': 'export const runDaemon = () => undefined;\n' });
    expect(passPathViolations(root)).toEqual(['cli/commands/watch.ts does not reach run/conductor.ts']);
  });

  it('the conductor importing the command layer, a type included', () => {
    const root = passTree({
      'run/conductor.ts': "import { passOnSession } from './pass.js';\nimport type { Settings } from '../cli/settings.js';\nexport const conductPass = (s: Settings) => [s, passOnSession()];\n",
      'cli/settings.ts': 'export interface Settings {}\n',
    });
    expect(passPathViolations(root)).toEqual(['run/conductor.ts -> cli/settings.ts: src/run/ imports nothing of the command']);
  });

  it('tells a binding of runPass from imports that bind other names or types only', () => {
    const engine = (specifier: string) => specifier.endsWith('reconcile/engine.js');
    expect(bindsRunPass("import type { PassOptions } from '../reconcile/engine.js';", engine)).toBe(false);
    expect(bindsRunPass("const { invalidPassResult } = await import('../reconcile/engine.js');", engine)).toBe(false);
    expect(bindsRunPass("let options: import('../reconcile/engine.js').PassOptions;", engine)).toBe(false);
    expect(bindsRunPass("import { runPass } from '../reconcile/other.js';", engine)).toBe(false);
    expect(bindsRunPass("import {\n  invalidPassResult,\n  runPass as run,\n} from '../reconcile/engine.js';", engine)).toBe(true);
    expect(bindsRunPass("const engine = await import('../reconcile/engine.js');", engine)).toBe(true);
    expect(bindsRunPass("export * from '../reconcile/engine.js';", engine)).toBe(true);
  });
});
