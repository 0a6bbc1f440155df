// A fast reader for the plain YAML manifests are written in: block mappings and sequences,
// flow collections written on one line (`{ name: a, ring: "b" }`, `[x, y]`), plain and
// single-line quoted scalars, comments and `---` between documents. It builds values only, no
// syntax tree, and gives up (returns undefined) on anything else: flow collections over
// several lines or with empty, implicit or trailing entries, plain scalars in a flow
// collection that hold a `:` or `#`, anchors, aliases, tags, block and multi-line scalars, escapes,
// tabs and Unicode spaces, duplicate or non-string keys, directives, a top level that is not a mapping. The
// caller then parses the file with the full YAML parser, which also reports every syntax error
// with its position. For what it accepts, the values are those of the full parser (YAML 1.2
// core schema); read again with positions (`fastLocator`), it gives the full parser's position
// of every field whose value is written (not left empty), so that locating a field of a file
// read here does not need the full parser either.
import { MAX_DOCUMENTS_PER_FILE, MAX_NESTING_DEPTH } from './limits.js';

export interface FastDocument {
  /** The document's index as the full parser numbers the documents of the file. */
  index: number;
  value: Record<string, unknown>;
  /** Where the document's content starts (1-based). */
  start: { line: number; column: number };
}

export interface Position {
  line: number;
  column: number;
}

/** Where a field was written: its key (none for a sequence item) and its value (none when left empty). */
interface Spot {
  key?: Position;
  value?: Position;
}

/** Positions of the fields of each mapping and sequence read, by key (a sequence's by index). */
type Positions = WeakMap<object, Map<string, Spot>>;

function record(positions: Positions, container: object, key: string, spot: Spot): void {
  let spots = positions.get(container);
  if (!spots) positions.set(container, (spots = new Map()));
  spots.set(key, spot);
}

class GiveUp extends Error {}
const GIVE_UP = new GiveUp();

interface Line {
  /** 0-based line number in the file. */
  number: number;
  indent: number;
  /** The line without its indentation (comments still in it). */
  text: string;
}

// Characters the full parser treats specially or that this reader does not handle: tabs,
// carriage returns, other control characters, the Unicode line breaks and BOM, and the Unicode
// spaces JavaScript trims but YAML keeps as content (a no-break space is not indentation, nor
// whitespace around a scalar, to YAML).
// eslint-disable-next-line no-control-regex
const UNHANDLED = /[\u0000-\u0009\u000b-\u001f\u007f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
// Other core-schema forms (octal, hex, infinities, not-a-number) are left to the full parser.
const OTHER_NUMBER = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
/** Characters a plain scalar may not start with (or this reader does not handle there). */
const PLAIN_START = new Set(['-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`']);

/** Documents of `text`, or undefined when the full parser must read it. */
export function parseFastYaml(text: string): FastDocument[] | undefined {
  return read(text);
}

function read(text: string, positions?: Positions): FastDocument[] | undefined {
  if (UNHANDLED.test(text)) return undefined;
  try {
    return parseStream(text, positions);
  } catch (error) {
    if (error === GIVE_UP) return undefined;
    throw error;
  }
}

/** Finds the position of a field (by its path segments) in document `index`; undefined when the full parser must. */
export type FastLocate = (index: number, segments: readonly string[], key: boolean) => Position | undefined;

/**
 * Reads `text` again, keeping where each field was written, for a text `parseFastYaml` reads.
 * The position of a path is the full parser's: the value of its deepest field that exists
 * (the key of the last segment when `key` is asked), the document's start for none. A path
 * through an empty value (`key:` with nothing after it, a null) is left to the full parser
 * (undefined), which places an empty value by rules this reader does not follow.
 */
export function fastLocator(text: string): FastLocate | undefined {
  const positions: Positions = new WeakMap();
  const documents = read(text, positions);
  if (!documents) return undefined;
  return (index, segments, key) => {
    const document = documents.find((doc) => doc.index === index);
    if (!document) return undefined;
    let node: unknown = document.value;
    let at: Position = document.start;
    for (let i = 0; i < segments.length; i++) {
      if (typeof node !== 'object' || node === null) break;
      const name = Array.isArray(node) ? String(Number(segments[i])) : segments[i]!;
      const spot = positions.get(node)?.get(name);
      if (!spot) break;
      if (key && i === segments.length - 1 && spot.key) return spot.key;
      if (!spot.value) return undefined;
      at = spot.value;
      node = (node as Record<string, unknown>)[name];
    }
    return at;
  };
}

function isContent(line: string): boolean {
  const trimmed = line.trimStart();
  return trimmed !== '' && !trimmed.startsWith('#');
}

function parseStream(text: string, positions: Positions | undefined): FastDocument[] {
  const raw = text.split('\n');
  // Segments between `---` lines; the first counts as a document only if it has content
  // (comments before the first `---` belong to the document after it).
  const segments: Line[][] = [[]];
  let markers = 0;
  for (let number = 0; number < raw.length; number++) {
    const line = raw[number]!;
    if (line.startsWith('---') && (line.length === 3 || line[3] === ' ')) {
      const after = line.slice(3).trim();
      if (after !== '' && !after.startsWith('#')) throw GIVE_UP; // content on the marker's line
      segments.push([]);
      markers += 1;
      continue;
    }
    if (line.startsWith('...') || line.startsWith('%')) throw GIVE_UP;
    if (!isContent(line)) continue;
    const indent = line.length - line.trimStart().length;
    segments[segments.length - 1]!.push({ number, indent, text: line.slice(indent) });
  }
  const first = segments[0]!.length > 0 ? 0 : 1;
  if (markers === 0 && first === 1) return [];
  if (segments.length - first > MAX_DOCUMENTS_PER_FILE) throw GIVE_UP;
  const documents: FastDocument[] = [];
  for (let s = first; s < segments.length; s++) {
    const lines = segments[s]!;
    if (lines.length === 0) continue; // an empty document: no value
    const reader = new BlockReader(lines, positions);
    const head = lines[0]!;
    if (isSequenceItem(head.text)) throw GIVE_UP; // a top level that is not a mapping
    const value = reader.mapping(head.indent, 1);
    if (!reader.done()) throw GIVE_UP;
    documents.push({ index: s - first, value, start: { line: head.number + 1, column: head.indent + 1 } });
  }
  return documents;
}

function isSequenceItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

class BlockReader {
  #at = 0;
  readonly #lines: Line[];
  readonly #positions: Positions | undefined;

  constructor(lines: Line[], positions: Positions | undefined) {
    this.#lines = lines;
    this.#positions = positions;
  }

  done(): boolean {
    return this.#at >= this.#lines.length;
  }

  #peek(): Line | undefined {
    return this.#lines[this.#at];
  }

  /** The block node whose first line is the next line, at `indent`. */
  #node(indent: number, depth: number): unknown {
    const line = this.#peek()!;
    return isSequenceItem(line.text) ? this.sequence(indent, depth) : this.mapping(indent, depth);
  }

  /** The value after `key:` with nothing on its line: a nested block, a sequence at the key's indent, or null. */
  #nested(indent: number, depth: number): unknown {
    const next = this.#peek();
    if (next && next.indent > indent) return this.#node(next.indent, depth + 1);
    if (next && next.indent === indent && isSequenceItem(next.text)) return this.sequence(indent, depth + 1);
    return null;
  }

  /** After an inline scalar, nothing may continue it on deeper lines (a multi-line scalar). */
  #noContinuation(indent: number): void {
    const next = this.#peek();
    if (next && next.indent > indent) throw GIVE_UP;
  }

  mapping(indent: number, depth: number): Record<string, unknown> {
    if (depth > MAX_NESTING_DEPTH) throw GIVE_UP;
    const map: Record<string, unknown> = {};
    for (;;) {
      const line = this.#peek();
      if (!line || line.indent < indent) return map;
      if (line.indent > indent) throw GIVE_UP;
      if (isSequenceItem(line.text)) return map; // the parent's sequence, or an error the full parser reports
      const [key, rest] = splitKey(line.text);
      if (Object.prototype.hasOwnProperty.call(map, key)) throw GIVE_UP; // a duplicate key: the full parser reports it
      this.#at += 1;
      let value: Position | undefined;
      if (rest === '' || rest.startsWith('#')) {
        const next = this.#peek();
        map[key] = this.#nested(indent, depth);
        if (map[key] !== null) value = { line: next!.number + 1, column: next!.indent + 1 };
      } else {
        const column = indent + line.text.length - rest.length;
        map[key] = inline(rest, line.number, column, depth + 1, this.#positions);
        value = { line: line.number + 1, column: column + 1 };
        this.#noContinuation(indent);
      }
      if (this.#positions) record(this.#positions, map, key, { key: { line: line.number + 1, column: indent + 1 }, value });
    }
  }

  sequence(indent: number, depth: number): unknown[] {
    if (depth > MAX_NESTING_DEPTH) throw GIVE_UP;
    const items: unknown[] = [];
    for (;;) {
      const line = this.#peek();
      if (!line || line.indent < indent) return items;
      if (line.indent > indent) throw GIVE_UP;
      if (!isSequenceItem(line.text)) return items;
      const after = line.text.slice(1);
      const rest = after.trimStart();
      if (rest === '' || rest.startsWith('#')) {
        this.#at += 1;
        const next = this.#peek();
        const nested = next && next.indent > indent;
        items.push(nested ? this.#node(next.indent, depth + 1) : null);
        if (this.#positions) record(this.#positions, items, String(items.length - 1), { value: nested ? { line: next.number + 1, column: next.indent + 1 } : undefined });
        continue;
      }
      if (isSequenceItem(rest)) throw GIVE_UP; // a sequence in a sequence on one line
      const itemIndent = indent + 1 + (after.length - rest.length);
      if (keyEnd(rest) >= 0) {
        // A compact mapping: its first key on the dash's line, the others at the key's indent.
        this.#lines[this.#at] = { number: line.number, indent: itemIndent, text: rest };
        items.push(this.mapping(itemIndent, depth + 1));
      } else {
        this.#at += 1;
        items.push(inline(rest, line.number, itemIndent, depth + 1, this.#positions));
        this.#noContinuation(indent);
      }
      if (this.#positions) record(this.#positions, items, String(items.length - 1), { value: { line: line.number + 1, column: itemIndent + 1 } });
    }
  }
}

/** Where a plain key ends (the `:` followed by a space or the end of the line), or -1. */
function keyEnd(text: string): number {
  if (PLAIN_START.has(text[0]!)) return -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === ':' && (i + 1 === text.length || text[i + 1] === ' ')) return i;
    if (c === '#' && text[i - 1] === ' ') return -1;
  }
  return -1;
}

/** `key: rest` of a mapping line; the key must be a plain string the core schema keeps a string. */
function splitKey(text: string): [string, string] {
  const end = keyEnd(text);
  if (end <= 0) throw GIVE_UP;
  const key = text.slice(0, end).trimEnd();
  if (key === '__proto__' || key === '<<' || key.endsWith(' ') || !isPlainString(key)) throw GIVE_UP;
  return [key, text.slice(end + 1).trimStart()];
}

function isPlainString(text: string): boolean {
  return !(NULL.test(text) || BOOL.test(text) || INT.test(text) || FLOAT.test(text) || OTHER_NUMBER.test(text) || text === '');
}

/**
 * An inline value at 0-based `line` and `column`: a flow collection on one line, quoted on one
 * line, or plain (up to a comment); only a comment may follow it.
 */
function inline(text: string, line: number, column: number, depth: number, positions: Positions | undefined): unknown {
  const c = text[0]!;
  if (c === '{' || c === '[') {
    const flow = new FlowReader(text, line, column, positions);
    const value = flow.collection(depth);
    if (!endsClean(text, flow.at)) throw GIVE_UP;
    return value;
  }
  if (c === '"' || c === "'") {
    const [value, end] = quoted(text, 0);
    if (!endsClean(text, end)) throw GIVE_UP;
    return value;
  }
  return plainScalar(text);
}

/** A plain scalar in block context, up to a comment. */
function plainScalar(text: string): unknown {
  const c = text[0]!;
  if (PLAIN_START.has(c) && !(c === '-' && text.length > 1 && text[1] !== ' ')) throw GIVE_UP;
  let end = text.length;
  for (let i = 1; i < text.length; i++) {
    if (text[i] === '#' && text[i - 1] === ' ') {
      end = i;
      break;
    }
    if (text[i] === ':' && (i + 1 === text.length || text[i + 1] === ' ')) throw GIVE_UP; // a mapping where a scalar belongs
  }
  return resolvePlain(text.slice(0, end).trimEnd());
}

/** A plain scalar's value in the core schema (the forms this reader leaves to the full parser give up). */
function resolvePlain(plain: string): unknown {
  if (NULL.test(plain)) return null;
  if (BOOL.test(plain)) return plain[0] === 't' || plain[0] === 'T';
  if (INT.test(plain)) return parseInt(plain, 10);
  if (FLOAT.test(plain)) return parseFloat(plain);
  if (OTHER_NUMBER.test(plain)) throw GIVE_UP;
  return plain;
}

/** Whether only spaces and a comment follow `from`. */
function endsClean(text: string, from: number): boolean {
  const rest = text.slice(from);
  const trimmed = rest.trimStart();
  return trimmed === '' || (trimmed.startsWith('#') && trimmed.length < rest.length);
}

/** The quoted scalar that starts at `from`, and where it ends. */
function quoted(text: string, from: number): [string, number] {
  const quote = text[from]!;
  let value = '';
  let i = from + 1;
  for (;;) {
    const close = text.indexOf(quote, i);
    if (close < 0) throw GIVE_UP; // continues on the next line
    if (quote === "'" && text[close + 1] === "'") {
      value += text.slice(i, close + 1);
      i = close + 2;
      continue;
    }
    value += text.slice(i, close);
    if (quote === '"' && value.includes('\\')) throw GIVE_UP; // escapes
    return [value, close + 1];
  }
}

/** Characters that end a plain scalar in a flow collection (`:` ends a key, or gives up). */
const FLOW_STOP = new Set([',', '[', ']', '{', '}', ':', '#']);

/**
 * A flow collection written on one line: `{ key: value, ... }` and `[item, ...]`, their
 * entries plain or quoted scalars and flow collections. Gives up on entries YAML reads in more
 * than one way or that this reader does not: empty entries (`[a, , b]`, a trailing comma),
 * keys without a value or a `: ` (`{a}`, `{a:b}`), implicit mappings in sequences (`[a: b]`),
 * `?` keys, plain scalars holding `:` or `#`, and a collection that continues on the next line.
 */
class FlowReader {
  at = 0;
  readonly #text: string;
  readonly #line: number;
  readonly #column: number;
  readonly #positions: Positions | undefined;

  constructor(text: string, line: number, column: number, positions: Positions | undefined) {
    this.#text = text;
    this.#line = line;
    this.#column = column;
    this.#positions = positions;
  }

  #position(at: number): Position {
    return { line: this.#line + 1, column: this.#column + at + 1 };
  }

  #spaces(): void {
    while (this.#text[this.at] === ' ') this.at += 1;
  }

  /** The collection that starts at `at`. */
  collection(depth: number): Record<string, unknown> | unknown[] {
    if (depth > MAX_NESTING_DEPTH) throw GIVE_UP;
    const isMap = this.#text[this.at] === '{';
    const close = isMap ? '}' : ']';
    const map: Record<string, unknown> = {};
    const items: unknown[] = [];
    this.at += 1;
    this.#spaces();
    if (this.#text[this.at] === close) {
      this.at += 1;
      return isMap ? map : items;
    }
    for (;;) {
      if (isMap) this.#pair(map, depth);
      else {
        const at = this.at;
        items.push(this.#node(depth));
        if (this.#positions) record(this.#positions, items, String(items.length - 1), { value: this.#position(at) });
      }
      this.#spaces();
      const c = this.#text[this.at];
      this.at += 1;
      if (c === close) return isMap ? map : items;
      if (c !== ',') throw GIVE_UP; // a `:` after an item, another line, anything else
      this.#spaces();
    }
  }

  /** `key: value` of a flow mapping. */
  #pair(map: Record<string, unknown>, depth: number): void {
    const keyAt = this.at;
    const c = this.#text[keyAt];
    let key: string;
    if (c === '"' || c === "'") [key, this.at] = quoted(this.#text, keyAt);
    else {
      key = this.#plain();
      if (!isPlainString(key) || this.#text[this.at - 1] === ' ') throw GIVE_UP; // `{a : b}`: left to the full parser
    }
    if (this.#text[this.at] !== ':' || this.#text[this.at + 1] !== ' ') throw GIVE_UP;
    if (key === '__proto__' || key === '<<' || Object.prototype.hasOwnProperty.call(map, key)) throw GIVE_UP;
    this.at += 2;
    this.#spaces();
    const valueAt = this.at;
    map[key] = this.#node(depth);
    if (this.#positions) record(this.#positions, map, key, { key: this.#position(keyAt), value: this.#position(valueAt) });
  }

  /** An entry's value: a nested collection, a quoted or a plain scalar (never empty). */
  #node(depth: number): unknown {
    const c = this.#text[this.at];
    if (c === '{' || c === '[') return this.collection(depth + 1);
    if (c === '"' || c === "'") {
      const [value, end] = quoted(this.#text, this.at);
      this.at = end;
      return value;
    }
    return resolvePlain(this.#plain());
  }

  /** A plain scalar up to a flow indicator or a `: `; gives up on a `:` or `#` inside it. */
  #plain(): string {
    const text = this.#text;
    const start = this.at;
    const c = text[start];
    if (c === undefined || (PLAIN_START.has(c) && !(c === '-' && text[start + 1] !== undefined && !FLOW_STOP.has(text[start + 1]!) && text[start + 1] !== ' '))) throw GIVE_UP;
    let end = start + 1;
    while (end < text.length && !FLOW_STOP.has(text[end]!)) end += 1;
    const stop = text[end];
    if (stop === '#' || (stop === ':' && text[end + 1] !== ' ')) throw GIVE_UP;
    this.at = end;
    const plain = text.slice(start, end).trimEnd();
    if (plain === '') throw GIVE_UP;
    return plain;
  }
}
