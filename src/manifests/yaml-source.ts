// Parses one manifest file into documents and keeps, for each, a way back from a field path
// (`/spec/auth/site_url`) to the line and column of its YAML node, so every error is located.
import { createRequire } from 'node:module';
import type { Document, LineCounter, Node, YAMLError } from 'yaml';
import { fastLocator, parseFastYaml, type FastLocate } from './yaml-fast.js';
import { MAX_ALIAS_COUNT, MAX_DOCUMENTS_PER_FILE, MAX_FLOW_DEPTH_PRESCAN, MAX_NESTING_DEPTH } from './limits.js';

// The full YAML library is loaded the first time a file needs it: plain YAML (block style, and
// flow collections on one line) is read and located in by the fast reader, so a run over such
// files never loads it.
type YamlLibrary = typeof import('yaml');
let yamlLibrary: YamlLibrary | undefined;
const yaml = (): YamlLibrary => (yamlLibrary ??= createRequire(import.meta.url)('yaml') as YamlLibrary);

export interface Position {
  line: number;
  column: number;
  /** The file the field was written in, when it is not its document's (an override in a ProjectSet's values file). */
  file?: string;
}

interface LocatedProblem extends Position {
  message: string;
  path?: string;
}

/** A parsed document: its value and how to find the position of any of its fields. */
export interface SourceDocument {
  /** 0-based index of the document in its file. */
  index: number;
  value: unknown;
  /** Where the document's content starts. */
  start: Position;
  /** Position of the node at a JSON-pointer path; `key` asks for the key of the last segment. */
  locate(pointer: string, options?: { key?: boolean }): Position;
}

export interface ParsedFile {
  documents: SourceDocument[];
  problems: LocatedProblem[];
  /**
   * Drops the syntax tree once the file's documents are checked: locating a field later parses
   * the kept text again (only errors locate fields), so a loaded set holds values and text only.
   */
  release(): void;
}

const PARSE_OPTIONS = { uniqueKeys: true, prettyErrors: false, logLevel: 'error' } as const;

interface SyntaxTree {
  documents: Document.Parsed[];
  lineCounter: LineCounter;
}

/** Files whose trees were parsed again to locate fields: errors come in runs per file. */
const recentTrees = new Map<SourceText, SyntaxTree>();
const RECENT_TREES = 4;
/** Files the fast reader read again, with positions, to locate fields. */
const recentLocators = new Map<SourceText, FastLocate>();

/** A file's text, and its syntax tree while the file is being checked or located in. */
class SourceText {
  readonly #text: string;
  #tree: SyntaxTree | undefined;
  /** Whether the fast reader read the text (then it locates fields without the full parser). */
  readonly #fast: boolean;

  constructor(text: string, tree?: SyntaxTree) {
    this.#text = text;
    this.#tree = tree;
    this.#fast = tree === undefined;
  }

  #fastLocate(): FastLocate | undefined {
    let locate = recentLocators.get(this);
    if (locate) recentLocators.delete(this);
    else locate = fastLocator(this.#text);
    if (!locate) return undefined;
    recentLocators.set(this, locate);
    if (recentLocators.size > RECENT_TREES) recentLocators.delete(recentLocators.keys().next().value!);
    return locate;
  }

  release(): void {
    this.#tree = undefined;
  }

  tree(): SyntaxTree {
    if (this.#tree) return this.#tree;
    let tree = recentTrees.get(this);
    if (tree) {
      recentTrees.delete(this);
    } else {
      // The same text and options give the same tree: positions are those of the first parse.
      const lineCounter = new (yaml().LineCounter)();
      tree = { documents: [...yaml().parseAllDocuments(this.#text, { lineCounter, ...PARSE_OPTIONS })] as Document.Parsed[], lineCounter };
    }
    recentTrees.set(this, tree);
    if (recentTrees.size > RECENT_TREES) recentTrees.delete(recentTrees.keys().next().value!);
    return tree;
  }

  /** Position of the node at a path of document `index`, or `start` when the document has no such node. */
  locate(index: number, start: Position, pointer: string, key: boolean): Position {
    if (this.#fast) {
      const found = this.#fastLocate()?.(index, pointerSegments(pointer), key);
      if (found) return found;
    }
    let tree: SyntaxTree;
    try {
      tree = this.tree();
    } catch {
      // The text parsed once already; should a second parse fail (a deeper stack), the
      // document's start still locates the error.
      return start;
    }
    const { documents, lineCounter } = tree;
    const doc = documents[index];
    const offset = doc ? locateOffset(doc, pointerSegments(pointer), key) : undefined;
    if (offset === undefined) return start;
    const { line, col } = lineCounter.linePos(Math.max(0, offset));
    return { line, column: col };
  }
}

export function pointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}

export function toPointer(segments: Array<string | number>): string {
  return segments.length === 0 ? '' : `/${segments.map((s) => String(s).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

/** Deepest run of unclosed brackets, ignoring quoting: a cheap guard in front of the parser. */
function flowDepth(text: string): { depth: number; offset: number } {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > MAX_FLOW_DEPTH_PRESCAN) return { depth, offset: i };
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return { depth, offset: -1 };
}

function keyText(node: unknown): string | undefined {
  if (yaml().isScalar(node)) return String(node.value);
  return undefined;
}

/** First node nested deeper than the limit, without following aliases (iterative: no recursion). */
function tooDeep(root: Node | null | undefined): Node | undefined {
  const stack: Array<[Node, number]> = root ? [[root, 1]] : [];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_NESTING_DEPTH) return node;
    if (yaml().isMap(node)) {
      for (const pair of node.items) {
        if (yaml().isPair(pair) && pair.value && (yaml().isMap(pair.value) || yaml().isSeq(pair.value))) stack.push([pair.value as Node, depth + 1]);
        if (yaml().isPair(pair) && pair.key && (yaml().isMap(pair.key) || yaml().isSeq(pair.key))) stack.push([pair.key as Node, depth + 1]);
      }
    } else if (yaml().isSeq(node)) {
      for (const item of node.items) if (yaml().isMap(item) || yaml().isSeq(item)) stack.push([item as Node, depth + 1]);
    }
  }
  return undefined;
}

/**
 * The parser's errors, located on the line that is wrong. A line indented deeper than the key
 * above it makes the parser read both lines as one implicit key (MULTILINE_IMPLICIT_KEY, with
 * BLOCK_AS_IMPLICIT_KEY at the same place), reported where the line above starts its value:
 * that error is moved to the first character of the deeper line, said plainly, and its twin
 * dropped.
 */
function syntaxProblems(errors: readonly YAMLError[], text: string, position: (offset: number) => Position): LocatedProblem[] {
  const multiline = errors.filter((error) => error.code === 'MULTILINE_IMPLICIT_KEY');
  const problems: LocatedProblem[] = [];
  for (const error of errors) {
    if (error.code === 'BLOCK_AS_IMPLICIT_KEY' && multiline.some((other) => other.pos[0] === error.pos[0])) continue;
    if (error.code === 'MULTILINE_IMPLICIT_KEY') {
      const indentOf = (offset: number) => {
        const lineStart = text.lastIndexOf('\n', Math.max(0, offset - 1)) + 1;
        return { lineStart, indent: /^[ \t]*/.exec(text.slice(lineStart, lineStart + 200))![0].length };
      };
      const first = indentOf(error.pos[0]);
      const last = indentOf(error.pos[1]);
      if (last.lineStart > first.lineStart && last.indent > first.indent) {
        problems.push({ ...position(last.lineStart + last.indent), message: 'YAML syntax: this line is indented deeper than the key above it (keys of one mapping start at the same column)' });
        continue;
      }
    }
    problems.push({ ...position(error.pos[0]), message: `YAML syntax: ${firstLine(error.message)}` });
  }
  return problems;
}

/**
 * Every YAML feature, syntax errors and the limits on nesting, aliases and documents. Plain
 * YAML is read by the fast reader, without a syntax tree; the full parser composes the tree
 * of such a file only when an error asks where a field the fast reader cannot place is (one
 * under a value left empty).
 */
export function parseYamlFile(text: string): ParsedFile {
  const fast = parseFastYaml(text);
  if (fast) {
    const source = new SourceText(text);
    const documents = fast.map(({ index, value, start }): SourceDocument => ({ index, value, start, locate: (pointer, options) => source.locate(index, start, pointer, options?.key ?? false) }));
    return { documents, problems: [], release: () => source.release() };
  }
  return parseComposed(text);
}

/** The full parser: composes the syntax tree of every document, with positions. */
function parseComposed(text: string): ParsedFile {
  const lineCounter = new (yaml().LineCounter)();
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(Math.max(0, offset));
    return { line, column: col };
  };
  const problems: LocatedProblem[] = [];

  const prescan = flowDepth(text);
  if (prescan.offset >= 0) {
    // The line counter is only filled by parsing, so count lines of the prefix directly.
    const before = text.slice(0, prescan.offset);
    const line = before.split('\n').length;
    const column = prescan.offset - before.lastIndexOf('\n');
    problems.push({ line, column, message: `nesting deeper than ${MAX_FLOW_DEPTH_PRESCAN} levels of brackets: refused before parsing` });
    return { documents: [], problems, release: () => undefined };
  }

  let parsed: Document.Parsed[];
  try {
    const result = yaml().parseAllDocuments(text, { lineCounter, ...PARSE_OPTIONS });
    // An empty stream is an empty array too.
    parsed = [...result] as Document.Parsed[];
  } catch (error) {
    // A stack overflow or a parser bug must not take the loader down with it.
    problems.push({ line: 1, column: 1, message: `YAML could not be parsed: ${error instanceof RangeError ? 'nesting too deep' : (error as Error).message}` });
    return { documents: [], problems, release: () => undefined };
  }

  if (parsed.length > MAX_DOCUMENTS_PER_FILE) {
    problems.push({ line: 1, column: 1, message: `more than ${MAX_DOCUMENTS_PER_FILE} documents in one file` });
    return { documents: [], problems, release: () => undefined };
  }

  const source = new SourceText(text, { documents: parsed, lineCounter });
  const documents: SourceDocument[] = [];
  parsed.forEach((doc, index) => {
    const docErrors = syntaxProblems(doc.errors, text, position);
    if (docErrors.length) {
      problems.push(...docErrors);
      return;
    }
    const contents = doc.contents as Node | null;
    const start = position(contents?.range?.[0] ?? doc.range?.[0] ?? 0);
    const deep = tooDeep(contents);
    if (deep) {
      problems.push({ ...position(deep.range?.[0] ?? 0), message: `nesting deeper than ${MAX_NESTING_DEPTH} levels` });
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const aliasBomb = error instanceof ReferenceError && /alias/i.test(error.message);
      problems.push({
        ...start,
        message: aliasBomb
          ? `YAML aliases expand too much (more than ${MAX_ALIAS_COUNT} alias uses): refused as a resource exhaustion attack`
          : `YAML could not be read: ${firstLine((error as Error).message)}`,
      });
      return;
    }
    if (value === null || value === undefined) return; // an empty document (a stray `---`)
    if (hasCycle(value)) {
      problems.push({ ...start, message: 'YAML aliases form a cycle (a node that contains itself): not a manifest' });
      return;
    }
    documents.push({ index, value, start, locate: (pointer, options) => source.locate(index, start, pointer, options?.key ?? false) });
  });
  return { documents, problems, release: () => source.release() };
}

/** Whether an object contains itself (an alias to an enclosing anchor); iterative, no recursion. */
function hasCycle(root: unknown): boolean {
  const onPath = new Set<object>();
  const stack: Array<{ node: object; exit: boolean }> = [];
  if (typeof root === 'object' && root !== null) stack.push({ node: root, exit: false });
  while (stack.length) {
    const { node, exit } = stack.pop()!;
    if (exit) {
      onPath.delete(node);
      continue;
    }
    if (onPath.has(node)) return true;
    onPath.add(node);
    stack.push({ node, exit: true });
    for (const child of Object.values(node)) {
      if (typeof child === 'object' && child !== null) {
        if (onPath.has(child)) return true;
        stack.push({ node: child, exit: false });
      }
    }
  }
  return false;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}

/** Offset of the deepest node on the path that exists (its key for `key`). */
function locateOffset(doc: Document.Parsed, segments: string[], key: boolean): number | undefined {
  let node: unknown = doc.contents;
  let offset = (node as Node | null)?.range?.[0];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    if (yaml().isAlias(node)) break;
    if (yaml().isMap(node)) {
      const pair = node.items.find((item) => keyText(item.key) === segment);
      if (!pair) break;
      const keyNode = pair.key as Node | null;
      if (last && key) return keyNode?.range?.[0] ?? offset;
      const valueNode = pair.value as Node | null;
      node = valueNode;
      offset = valueNode?.range?.[0] ?? keyNode?.range?.[0] ?? offset;
    } else if (yaml().isSeq(node)) {
      const item = node.items[Number(segment)] as Node | undefined;
      if (!item) break;
      node = item;
      offset = item.range?.[0] ?? offset;
    } else break;
  }
  return offset;
}
