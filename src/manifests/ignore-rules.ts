// What discovery leaves out, with git's own rules (the `ignore` package): `node_modules/`,
// whatever the repository's `.gitignore` files ignore (those of the manifests directory's
// parents up to the repository root, and those inside the tree), and, last and strongest,
// the root's `.reconcileignore`. A later rule wins over an earlier one, so `!pattern`
// re-includes as it does in git.
import { lstatSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { readBoundedFile } from './bounded-read.js';

export const IGNORE_FILE = '.reconcileignore';
const GITIGNORE_FILE = '.gitignore';
/** Ignored unless a rule re-includes it: dependencies are never manifests. */
const DEFAULT_IGNORED = ['node_modules/'];
/** Largest ignore file read. */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/** An ignore file that exists but cannot be used: the set it governs would be guessed at. */
interface IgnoreFileProblem {
  /** The file, relative to the manifests root (`../.gitignore` for a parent's). */
  file: string;
  message: string;
}

interface Matcher {
  /** Directory (relative to the root, `''` for the root) whose paths the rules apply to. */
  dir: string;
  /** For a parent directory's file: what to put in front of a root-relative path. */
  prefix?: string;
  rules: Ignore;
}

function readRules(absolute: string, display: string): { rules?: Ignore; problem?: IgnoreFileProblem } {
  const read = readBoundedFile(absolute, MAX_IGNORE_FILE_BYTES);
  if ('problem' in read) {
    if (read.problem === 'missing') return {};
    return { problem: { file: display, message: `the ignore file ${display} ${read.detail}: what it would leave out is unknown, so nothing is read` } };
  }
  return { rules: ignore().add(read.bytes.toString('utf8')) };
}

/** The nearest directory at or above `dir` that holds `.git`, if any. */
function gitRoot(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    try {
      lstatSync(join(current, '.git'));
      return current;
    } catch {
      // not here: look one level up
    }
    if (dirname(current) === current) return undefined;
  }
}

export class IgnoreRules {
  readonly problems: IgnoreFileProblem[] = [];
  readonly #root: string;
  readonly #matchers: Matcher[] = [];
  #reconcileIgnore: Ignore | undefined;

  /** Reads the built-in rules, the parents' `.gitignore` files and the root's `.reconcileignore`. */
  constructor(root: string) {
    this.#root = root;
    this.#matchers.push({ dir: '', rules: ignore().add(DEFAULT_IGNORED) });
    const top = gitRoot(root);
    if (top !== undefined && top !== root) {
      const parents: string[] = [];
      for (let current = dirname(root); ; current = dirname(current)) {
        parents.unshift(current);
        if (current === top || dirname(current) === current) break;
      }
      for (const parent of parents) {
        const display = relative(root, join(parent, GITIGNORE_FILE)).split(sep).join('/');
        const { rules, problem } = readRules(join(parent, GITIGNORE_FILE), display);
        if (problem) this.problems.push(problem);
        if (rules) this.#matchers.push({ dir: '', prefix: `${relative(parent, root).split(sep).join('/')}/`, rules });
      }
    }
    const own = readRules(join(root, IGNORE_FILE), IGNORE_FILE);
    if (own.problem) this.problems.push(own.problem);
    this.#reconcileIgnore = own.rules;
  }

  /** Reads the `.gitignore` of a directory of the tree as the walk enters it. */
  enterDirectory(dir: string): void {
    const display = dir ? `${dir}/${GITIGNORE_FILE}` : GITIGNORE_FILE;
    const { rules, problem } = readRules(join(this.#root, ...display.split('/')), display);
    if (problem) this.problems.push(problem);
    if (rules) this.#matchers.push({ dir, rules });
  }

  /** Whether a root-relative path is left out; `isDirectory` undefined: as a file or as a directory. */
  ignores(path: string, isDirectory: boolean | undefined): boolean {
    if (isDirectory === undefined) return this.ignores(path, false) || this.ignores(path, true);
    let ignored = false;
    const apply = (rules: Ignore, subject: string) => {
      const result = rules.test(isDirectory ? `${subject}/` : subject);
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    };
    for (const matcher of this.#matchers) {
      if (matcher.prefix !== undefined) apply(matcher.rules, matcher.prefix + path);
      else if (matcher.dir === '') apply(matcher.rules, path);
      else if (path.startsWith(`${matcher.dir}/`)) apply(matcher.rules, path.slice(matcher.dir.length + 1));
    }
    if (this.#reconcileIgnore) apply(this.#reconcileIgnore, path);
    return ignored;
  }
}
