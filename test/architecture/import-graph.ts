// The import graph of a source tree and the checks the layer test runs on it: which top-level
// folder may import which (the layers of docs/development.md), import cycles (type-only imports
// included: `import type`, `export type ... from` and `import('...')` types all count), the
// length of functions, and the path of a pass (only the conductor, src/run/, binds the engine's
// `runPass`). Plain text scanning of the project's own sources, no compiler needed.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The layers, top to bottom, as the folders of src/ each may import (besides itself). A file at
 * the root of src/ would be a layer of its own: there is none, and the check says so.
 */
export const LAYER_RULES: Readonly<Record<string, readonly string[]>> = {
  // on top: tools that drive everything below
  chaos: ['bench', 'emulator', 'cli', 'daemon', 'run', 'status', 'notify', 'shards', 'reconcile', 'api', 'manifests', 'util'],
  bench: ['emulator', 'daemon', 'run', 'status', 'notify', 'shards', 'reconcile', 'api', 'manifests', 'util'],
  tools: ['reconcile', 'api', 'manifests', 'util'],
  // the command
  cli: ['daemon', 'run', 'status', 'notify', 'shards', 'reconcile', 'api', 'emulator', 'manifests', 'util'],
  // the daemon: when passes run (it is handed the conductor's pass; its status board folds through the conductor's writer)
  daemon: ['run', 'status', 'notify', 'shards', 'reconcile', 'api', 'manifests', 'util'],
  // the conductor of a pass: lock, session, the pass, its gates, the status record, release
  run: ['status', 'notify', 'shards', 'reconcile', 'api', 'manifests', 'util'],
  // the fleet's status view, its notifications, the shard map
  status: ['notify', 'reconcile', 'api', 'manifests', 'util'],
  notify: ['reconcile', 'api', 'manifests', 'util'],
  shards: ['reconcile', 'api', 'manifests', 'util'],
  // one pass
  reconcile: ['api', 'manifests', 'util'],
  // the API client and the emulator of the service, side by side: neither knows the other
  api: ['manifests', 'util'],
  emulator: ['manifests', 'util'],
  // manifests and shared utilities
  manifests: ['util'],
  util: [],
};

export type ImportGraph = Map<string, string[]>;

export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The relative modules a file's text imports: `import ... from`, `export ... from` (type-only
 * forms included), side-effect imports, and `import('...')` (dynamic imports and import types).
 */
export function importSpecifiers(text: string): string[] {
  const patterns = [/^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gm, /^\s*import\s*['"]([^'"]+)['"]/gm, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];
  const found = patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]!));
  return [...new Set(found.filter((specifier) => specifier.startsWith('.')))];
}

/** Every .ts file under `root`, with the files under `root` it imports (paths relative to `root`, `.ts`). */
export function importGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(root)) {
    const targets = importSpecifiers(readFileSync(file, 'utf8')).map((specifier) =>
      relative(root, resolve(dirname(file), specifier)).replace(/\.js$/, '.ts'),
    );
    graph.set(relative(root, file), targets);
  }
  return graph;
}

function layerOf(file: string): string {
  return file.includes('/') ? file.slice(0, file.indexOf('/')) : `(root) ${file}`;
}

/** Imports that cross the layers the wrong way (`from -> to`), and files in no layer. */
export function layerViolations(graph: ImportGraph, rules: Readonly<Record<string, readonly string[]>> = LAYER_RULES): string[] {
  const problems: string[] = [];
  for (const [file, targets] of graph) {
    const layer = layerOf(file);
    const allowed = rules[layer];
    if (!allowed) {
      problems.push(`${file} is in no layer`);
      continue;
    }
    for (const target of targets) {
      const to = layerOf(target);
      if (to !== layer && !allowed.includes(to)) problems.push(`${file} -> ${target}`);
    }
  }
  return problems.sort();
}

/** The import cycles: each strongly connected set of files (more than one, or one importing itself), sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== node);
    if (members.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(members.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/**
 * The functions of a file's text (declarations, methods, arrow functions with a body) longer than
 * `limit` lines, as `name (N lines, line L)`. Braces are counted outside strings, template text
 * and comments.
 */
export function longFunctions(text: string, limit: number): string[] {
  const lines = text.split('\n');
  const closing = matchingBraces(text);
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length;
  const found: string[] = [];
  const head = /(?:\bfunction\s*\*?\s*([\w$]*)\s*(?:<[^(]*>)?\s*\(|^\s*(?:(?:export|public|private|protected|static|async|override|get|set)\s+)*(#?[\w$]+)\s*(?:<[^(]*>)?\s*\(|([\w$]+)\s*[:=][^=]*?=>\s*\{?\s*$|=>\s*\{)/;
  for (const [open, close] of closing) {
    const startLine = lineOf(open);
    let line = lines[startLine - 1]!;
    let headLine = startLine;
    // A parameter list over several lines: the head is on the line that opened it.
    for (let back = startLine - 2; /^\s*\)/.test(line) && back >= 0 && back > startLine - 40; back -= 1) {
      if (head.test(lines[back]!)) {
        line = lines[back]!;
        headLine = back + 1;
      }
    }
    const match = head.exec(line);
    if (!match) continue;
    if (/^\s*(?:if|for|while|switch|catch|return|else)\b/.test(line) && !/=>\s*\{\s*$/.test(line)) continue;
    const length = lineOf(close) - headLine + 1;
    if (length > limit) found.push(`${match[1] || match[2] || match[3] || 'arrow function'} (${length} lines, line ${headLine})`);
  }
  return found;
}

/** Offsets of each `{` and its matching `}` outside strings, template text and comments. */
function matchingBraces(text: string): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  const open: number[] = [];
  // Nesting of template literals: each entry is the brace depth at which a `${` resumed code.
  const templates: number[] = [];
  let i = 0;
  const skipString = (quote: string) => {
    i += 1;
    while (i < text.length && text[i] !== quote) {
      if (text[i] === '\\') i += 1;
      if (text[i] === '\n') return;
      i += 1;
    }
    i += 1;
  };
  const skipTemplate = () => {
    // At the character after a backtick or after the `}` closing a `${`.
    while (i < text.length) {
      if (text[i] === '\\') {
        i += 2;
        continue;
      }
      if (text[i] === '`') {
        i += 1;
        return;
      }
      if (text[i] === '$' && text[i + 1] === '{') {
        templates.push(open.length);
        open.push(-1);
        i += 2;
        return;
      }
      i += 1;
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'" || c === '"') {
      skipString(c);
    } else if (c === '`') {
      i += 1;
      skipTemplate();
    } else if (c === '{') {
      open.push(i);
      i += 1;
    } else if (c === '}') {
      const start = open.pop();
      i += 1;
      if (start === -1 && templates.length > 0 && templates[templates.length - 1] === open.length) {
        templates.pop();
        skipTemplate();
      } else if (start !== undefined && start >= 0) {
        pairs.push([start, i - 1]);
      }
    } else {
      i += 1;
    }
  }
  return pairs;
}

/** The engine's module, whose `runPass` only the conductor binds. */
const ENGINE = 'reconcile/engine.ts';
/** The command's entries of a pass: the one-shot command (and `apply FILE` through it) and the daemon. */
export const PASS_ENTRIES: readonly string[] = ['cli/commands/reconcile.ts', 'cli/commands/watch.ts'];
/** The conductor every pass of the entries goes through. */
export const CONDUCTOR = 'run/conductor.ts';

/**
 * Whether a file's text binds the engine's `runPass`: a static import (or re-export) naming it,
 * a namespace import or `export *` of the engine, or a dynamic import of the engine that is not a destructuring leaving
 * it out (`const { invalidPassResult } = await import(...)` binds only what it names).
 * `resolves(specifier)` says whether a specifier is the engine's module.
 */
export function bindsRunPass(text: string, resolves: (specifier: string) => boolean): boolean {
  for (const match of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s*['"]([^'"]+)['"]/gm)) {
    if (match[1] || !resolves(match[3]!)) continue;
    const clause = match[2]!;
    if (/^\*/.test(clause.trim())) return true;
    const names = /\{([^}]*)\}/.exec(clause)?.[1] ?? '';
    if (names.split(',').some((name) => /^\s*runPass\b/.test(name))) return true;
  }
  for (const match of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    if (!resolves(match[1]!)) continue;
    const before = text.slice(Math.max(0, match.index! - 400), match.index!);
    // A type position (`import('...').PassOptions`) binds no value.
    if (/^\)\.[A-Z]/.test(text.slice(match.index! + match[0].length - 1))) continue;
    const destructured = /(?:const|let|var)\s*\{([^}]*)\}\s*=\s*(?:await\s+)?$/.exec(before);
    if (!destructured || destructured[1]!.split(',').some((name) => /^\s*runPass\b/.test(name))) return true;
  }
  return false;
}

/** The files `entry` reaches through imports, itself included. */
function reachable(graph: ImportGraph, entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file) || !graph.has(file)) continue;
    seen.add(file);
    stack.push(...graph.get(file)!);
  }
  return seen;
}

/**
 * What breaks the path of a pass in the tree at `root`: a file of the command or the daemon
 * layer (or any file the entries reach outside src/run/) that binds the engine's `runPass`; an
 * entry that does not reach the conductor; a file of src/run/ importing the command layer.
 */
export function passPathViolations(root: string, entries: readonly string[] = PASS_ENTRIES): string[] {
  const graph = importGraph(root);
  const binders = new Set<string>();
  for (const file of graph.keys()) {
    const text = readFileSync(join(root, file), 'utf8');
    const resolves = (specifier: string) => relative(root, resolve(dirname(join(root, file)), specifier)).replace(/\.js$/, '.ts') === ENGINE;
    if (file !== ENGINE && bindsRunPass(text, resolves)) binders.add(file);
  }
  const problems = new Set<string>();
  for (const file of binders) {
    if (file.startsWith('cli/') || file.startsWith('daemon/')) problems.add(`${file} binds runPass of ${ENGINE}: a pass goes through src/run/`);
  }
  for (const entry of entries) {
    const reached = reachable(graph, entry);
    if (!reached.has(CONDUCTOR)) problems.add(`${entry} does not reach ${CONDUCTOR}`);
    for (const file of binders) {
      if (reached.has(file) && !file.startsWith('run/')) problems.add(`${file} binds runPass of ${ENGINE}: a pass goes through src/run/`);
    }
  }
  for (const [file, targets] of graph) {
    if (!file.startsWith('run/')) continue;
    for (const target of targets) if (target.startsWith('cli/')) problems.add(`${file} -> ${target}: src/run/ imports nothing of the command`);
  }
  return [...problems].sort();
}
