// A fast reader for the plain shape most manifest files have (block mappings and sequences,
// simple scalars, one line each), about ten times cheaper than the full YAML parser and
// without a syntax tree. It gives the same values and positions the full parser gives, or
// gives up: anything it does not recognise with certainty (anchors, tags, flow collections,
// multi-line scalars, escapes, comments after values, tabs, non-ASCII text, odd keys or
// indentation, duplicate keys, YAML errors of any kind) goes to the full parser, which also
// locates fields (on demand) and reports every error.
import { MAX_DOCUMENTS_PER_FILE, MAX_NESTING_DEPTH } from './limits.js';

export interface FastDocument {
  /** 0-based index of the document in the stream, as the full parser counts them. */
  index: number;
  value: unknown;
  /** Where the document's content starts (1-based). */
  line: number;
  column: number;
}

interface Line {
  indent: number;
  content: string;
  line: number;
}

/** Thrown inside the reader to hand the file to the full parser. */
class GiveUp extends Error {}

// Only printable ASCII and line feeds: everything else (tabs, CR, Unicode) takes the full path.
const UNUSUAL_CHARACTER = /[^\x20-\x7e\n]/;
// A key the full parser reads as exactly this string: letters first (numbers, booleans, nulls
// and dots resolve to other types), at most 128 characters (implicit key limits are far above).
const MAPPING_ENTRY = /^([A-Za-z_][A-Za-z0-9_-]{0,127}):(?: +(.*))?$/;
const NOT_A_STRING_KEY = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE|[Nn]ull|NULL)$/;
const DOUBLE_QUOTED = /^"([\x20\x21\x23-\x5b\x5d-\x7e]*)"$/;
const SINGLE_QUOTED = /^'([\x20-\x26\x28-\x7e]*)'$/;
// Characters that start something other than a plain scalar.
const INDICATOR_START = /^[-?:,[\]{}#&*!|>'"%@`]/;

// The core schema's resolution of plain scalars (the full parser's default schema).
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const TRUE = /^(?:[Tt]rue|TRUE)$/;
const FALSE = /^(?:[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
// Other core-schema forms (hex, octal, infinity, not-a-number): left to the full parser.
const OTHER_TYPED = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;

function scalar(text: string): unknown {
  if (text === '[]') return [];
  if (text === '{}') return {};
  const first = text.charCodeAt(0);
  if (first === 0x22) {
    const match = DOUBLE_QUOTED.exec(text);
    if (!match) throw new GiveUp();
    return match[1];
  }
  if (first === 0x27) {
    const match = SINGLE_QUOTED.exec(text);
    if (!match) throw new GiveUp();
    return match[1];
  }
  // `-5` and `-.5` are plain scalars; `- x`, `--` and every other indicator are left alone.
  if (INDICATOR_START.test(text) && !(first === 0x2d && /^-[0-9.]/.test(text))) throw new GiveUp();
  if (text.includes('#') || text.includes(': ') || text.endsWith(':')) throw new GiveUp();
  if (NULL.test(text)) return null;
  if (TRUE.test(text)) return true;
  if (FALSE.test(text)) return false;
  if (INT.test(text)) return parseInt(text, 10);
  if (FLOAT.test(text) || FLOAT_EXP.test(text)) return parseFloat(text);
  if (OTHER_TYPED.test(text)) throw new GiveUp();
  return text;
}

/** Sets a key as the full parser's conversion does (an inherited name becomes an own property). */
function setKey(map: Record<string, unknown>, key: string, value: unknown): void {
  if (key in map) Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  else map[key] = value;
}

function isSequenceItem(content: string): boolean {
  return content === '-' || content.startsWith('- ');
}

class DocumentReader {
  #pos = 0;
  readonly #lines: Line[];

  constructor(lines: Line[]) {
    this.#lines = lines;
  }

  read(): unknown {
    const root = this.#lines[0]!;
    const value = this.#block(root.indent, 1);
    if (this.#pos !== this.#lines.length) throw new GiveUp();
    return value;
  }

  #next(): Line | undefined {
    return this.#lines[this.#pos];
  }

  #block(indent: number, depth: number): unknown {
    // Room for a `{}` or `[]` below: the full parser's depth limit counts those too.
    if (depth >= MAX_NESTING_DEPTH - 1) throw new GiveUp();
    return isSequenceItem(this.#next()!.content) ? this.#sequence(indent, depth) : this.#mapping(indent, depth);
  }

  #mapping(indent: number, depth: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    const seen = new Set<string>();
    for (let line = this.#next(); line && line.indent === indent; line = this.#next()) {
      const match = MAPPING_ENTRY.exec(line.content);
      if (!match) throw new GiveUp();
      const key = match[1]!;
      if (key === '__proto__' || NOT_A_STRING_KEY.test(key) || seen.has(key)) throw new GiveUp();
      seen.add(key);
      this.#pos++;
      const rest = match[2];
      let value: unknown;
      if (rest === undefined) {
        const next = this.#next();
        if (next && next.indent > indent) value = this.#block(next.indent, depth + 1);
        // A sequence may sit at its key's own indentation.
        else if (next && next.indent === indent && isSequenceItem(next.content)) value = this.#sequence(indent, depth + 1);
        else value = null;
      } else {
        value = scalar(rest);
        const next = this.#next();
        if (next && next.indent > indent) throw new GiveUp(); // a continued (multi-line) scalar
      }
      setKey(map, key, value);
    }
    const after = this.#next();
    if (after && after.indent > indent) throw new GiveUp();
    return map;
  }

  #sequence(indent: number, depth: number): unknown[] {
    const items: unknown[] = [];
    for (let line = this.#next(); line && line.indent === indent && isSequenceItem(line.content); line = this.#next()) {
      if (line.content === '-') {
        this.#pos++;
        const next = this.#next();
        items.push(next && next.indent > indent ? this.#block(next.indent, depth + 1) : null);
        continue;
      }
      let spaces = 1;
      while (line.content.charCodeAt(spaces + 1) === 0x20) spaces++;
      const rest = line.content.slice(1 + spaces);
      if (MAPPING_ENTRY.test(rest) || isSequenceItem(rest)) {
        // A compact collection (`- key: value`, `- - x`): it continues at the column of its content.
        const column = indent + 1 + spaces;
        this.#lines[this.#pos] = { indent: column, content: rest, line: line.line };
        items.push(this.#block(column, depth + 1));
      } else {
        this.#pos++;
        items.push(scalar(rest));
        const next = this.#next();
        if (next && next.indent > indent) throw new GiveUp();
      }
    }
    const after = this.#next();
    if (after && after.indent > indent) throw new GiveUp();
    return items;
  }
}

/**
 * The documents of a file in the plain shape, empty ones left out (as the loader leaves them
 * out), or undefined when the file needs the full parser.
 */
export function readPlainYaml(text: string): FastDocument[] | undefined {
  if (UNUSUAL_CHARACTER.test(text)) return undefined;
  const rawLines = text.split('\n');
  const documents: FastDocument[] = [];
  let index = 0;
  let current: Line[] = [];
  let started = false; // the stream has had content or a marker: the next marker opens a new document
  const finish = (): void => {
    if (current.length === 0) return;
    const reader = new DocumentReader(current);
    const first = current[0]!;
    documents.push({ index, value: reader.read(), line: first.line, column: first.indent + 1 });
  };
  try {
    for (let i = 0; i < rawLines.length; i++) {
      const raw = rawLines[i]!;
      let indent = 0;
      while (raw.charCodeAt(indent) === 0x20) indent++;
      if (indent === raw.length) continue; // blank
      const content = raw.slice(indent);
      if (content.charCodeAt(0) === 0x23) continue; // a comment line
      if (indent === 0 && (content.startsWith('---') || content.startsWith('...') || content.startsWith('%'))) {
        if (content !== '---') return undefined;
        if (started) {
          finish();
          index++;
          current = [];
        }
        started = true;
        continue;
      }
      if (content.endsWith(' ')) return undefined;
      started = true;
      current.push({ indent, content, line: i + 1 });
    }
    finish();
  } catch (error) {
    if (error instanceof GiveUp) return undefined;
    throw error;
  }
  if (index + 1 >= MAX_DOCUMENTS_PER_FILE) return undefined;
  return documents;
}
