// A fast reader for the plain block YAML manifests are written in: block mappings and
// sequences, plain and single-line quoted scalars, comments and `---` between documents. It
// builds values only, no syntax tree, and gives up (returns undefined) on anything else:
// flow collections other than `{}` and `[]`, anchors, aliases, tags, block and multi-line
// scalars, escapes, tabs, duplicate or non-string keys, directives, a top level that is not a
// mapping. The caller then parses the file with the full YAML parser, which also reports
// every syntax error with its position; positions of fields in a file read here are found by
// parsing it fully only when an error needs one. For what it accepts, the values are those of
// the full parser (YAML 1.2 core schema).
import { MAX_DOCUMENTS_PER_FILE, MAX_NESTING_DEPTH } from './limits.js';

export interface FastDocument {
  /** The document's index as the full parser numbers the documents of the file. */
  index: number;
  value: Record<string, unknown>;
  /** Where the document's content starts (1-based). */
  start: { line: number; column: number };
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
// carriage returns, other control characters and the Unicode line breaks and BOM.
// eslint-disable-next-line no-control-regex
const UNHANDLED = /[\u0000-\u0009\u000b-\u001f\u007f\u0085\u2028\u2029\ufeff]/;
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
  if (UNHANDLED.test(text)) return undefined;
  try {
    return parseStream(text);
  } catch (error) {
    if (error === GIVE_UP) return undefined;
    throw error;
  }
}

function isContent(line: string): boolean {
  const trimmed = line.trimStart();
  return trimmed !== '' && !trimmed.startsWith('#');
}

function parseStream(text: string): FastDocument[] {
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
    const reader = new BlockReader(lines);
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

  constructor(lines: Line[]) {
    this.#lines = lines;
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
      if (rest === '' || rest.startsWith('#')) map[key] = this.#nested(indent, depth);
      else {
        map[key] = scalar(rest);
        this.#noContinuation(indent);
      }
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
        items.push(next && next.indent > indent ? this.#node(next.indent, depth + 1) : null);
        continue;
      }
      if (isSequenceItem(rest)) throw GIVE_UP; // a sequence in a sequence on one line
      const itemIndent = indent + 1 + (after.length - rest.length);
      if (keyEnd(rest) >= 0) {
        // A compact mapping: its first key on the dash's line, the others at the key's indent.
        this.#lines[this.#at] = { number: line.number, indent: itemIndent, text: rest };
        items.push(this.mapping(itemIndent, depth + 1));
        continue;
      }
      this.#at += 1;
      items.push(scalar(rest));
      this.#noContinuation(indent);
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

/** An inline value: quoted on one line, `{}`/`[]`, or plain (up to a comment). */
function scalar(text: string): unknown {
  const c = text[0]!;
  if (c === '"' || c === "'") return quoted(text, c);
  if (c === '{' || c === '[') {
    const close = c === '{' ? '}' : ']';
    if (text[1] === close && endsClean(text, 2)) return c === '{' ? {} : [];
    throw GIVE_UP;
  }
  if (PLAIN_START.has(c) && !(c === '-' && text.length > 1 && text[1] !== ' ')) throw GIVE_UP;
  let end = text.length;
  for (let i = 1; i < text.length; i++) {
    if (text[i] === '#' && text[i - 1] === ' ') {
      end = i;
      break;
    }
    if (text[i] === ':' && (i + 1 === text.length || text[i + 1] === ' ')) throw GIVE_UP; // a mapping where a scalar belongs
  }
  const plain = text.slice(0, end).trimEnd();
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

function quoted(text: string, quote: string): string {
  let value = '';
  let i = 1;
  for (;;) {
    const close = text.indexOf(quote, i);
    if (close < 0) throw GIVE_UP; // continues on the next line
    if (quote === "'" && text[close + 1] === "'") {
      value += text.slice(i, close + 1);
      i = close + 2;
      continue;
    }
    value += text.slice(i, close);
    if (!endsClean(text, close + 1)) throw GIVE_UP;
    if (quote === '"' && value.includes('\\')) throw GIVE_UP; // escapes
    return value;
  }
}
