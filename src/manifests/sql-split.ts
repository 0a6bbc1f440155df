// How the platform CLI splits a migration file into the statements it runs and records in
// `supabase_migrations.schema_migrations.statements` (its `pkg/parser`, CLI v2.104.0; the rule
// is unchanged since v2.91.1). A state machine over the file's characters: the current statement
// ends at a `;` met outside a quote ('...', "..."), a dollar quote ($tag$...$tag$), a comment
// (`-- ...` to the end of the line, nested `/* ... */`), a parenthesis and a `BEGIN ATOMIC ... END`
// body; a backslash outside them escapes the next character. Each statement keeps its comments and
// white space; its trailing `;` is cut, then the white space around it, and an empty one is dropped.
// The machine has the CLI's quirks on purpose (a `\'` inside '...' ends the quote; the first `)`
// closes nested parentheses; an `end` inside an identifier closes a `BEGIN ATOMIC` body): the
// statements must be the CLI's, byte for byte, for a history the CLI wrote to be read back.

/** One statement as the CLI records it, with where its text starts and ends in the file. */
export interface CliStatement {
  /** The statement, trimmed, without its `;`: what the CLI stores. */
  text: string;
  /** Offsets (in characters) of the raw piece of the file, `;` included, that it came from. */
  start: number;
  end: number;
}

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;

function isLetterOrDigit(ch: string): boolean {
  return LETTER.test(ch) || DIGIT.test(ch);
}

function isIdentifierChar(ch: string): boolean {
  return isLetterOrDigit(ch) || ch === '_' || ch === '$';
}

/** The white space of Go's `unicode.IsSpace` (which the CLI trims with), not JavaScript's `trim`. */
const GO_SPACE = new Set(['\t', '\n', '\v', '\f', '\r', ' ', '\u0085', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000']);
export function isGoSpace(ch: string): boolean {
  return GO_SPACE.has(ch) || (ch >= '\u2000' && ch <= '\u200a');
}

function goTrimSpace(text: string): string {
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  while (start < end && isGoSpace(chars[start]!)) start++;
  while (end > start && isGoSpace(chars[end - 1]!)) end--;
  return chars.slice(start, end).join('');
}

function endsWithFold(text: string, end: number, suffix: string): boolean {
  return end >= suffix.length && text.slice(end - suffix.length, end).toLowerCase() === suffix.toLowerCase();
}

/** The code point that ends at `end` (a surrogate pair counts as one). */
function charBefore(text: string, end: number): string {
  const last = text.charCodeAt(end - 1);
  if (end >= 2 && last >= 0xdc00 && last <= 0xdfff) return text.slice(end - 2, end);
  return text.slice(end - 1, end);
}

/** `BEGIN ATOMIC` ends at `end`: both words whole, any white space between them. */
function beginAtomicEndsAt(text: string, start: number, end: number): boolean {
  if (!endsWithFold(text, end, 'ATOMIC') || end - 6 < start) return false;
  let at = end - 6;
  if (at > start && isIdentifierChar(charBefore(text, at))) return false;
  while (at > start && isGoSpace(charBefore(text, at))) at -= charBefore(text, at).length;
  if (at - 5 < start || !endsWithFold(text, at, 'BEGIN')) return false;
  at -= 5;
  return at === start || !isIdentifierChar(charBefore(text, at));
}

/** Where the machine is. `next` returns the state after the character that ends at `end`, or `undefined` to end the statement there. */
interface State {
  next(ch: string, text: string, start: number, end: number): State | undefined;
}

class Ready implements State {
  next(ch: string, text: string, start: number, end: number): State | undefined {
    switch (ch) {
      case '$':
        return new Tag(end - 1);
      case "'":
      case '"':
        return new Quoted(ch);
      case '-':
        return new Dash();
      case '/':
        return new Slash();
      case '\\':
        return new Escaped();
      case ';':
        return undefined;
      case '(':
        return new Enclosed(this, ')');
      case 'c':
      case 'C':
        if (beginAtomicEndsAt(text, start, end)) return new Enclosed(this, 'END');
    }
    return this;
  }
}

const ready = (ch: string, text: string, start: number, end: number) => new Ready().next(ch, text, start, end);

/** After one `-`: a second one opens a line comment. */
class Dash implements State {
  next(ch: string, text: string, start: number, end: number): State | undefined {
    return ch === '-' ? new Until('\n') : ready(ch, text, start, end);
  }
}

/** After `/`, then inside `/* ... *\/`, nested. */
class Slash implements State {
  private depth = 0;
  next(ch: string, text: string, start: number, end: number): State | undefined {
    const pair = text.slice(end - 2, end);
    if (pair === '/*') {
      this.depth++;
      return this;
    }
    if (this.depth === 0) return ready(ch, text, start, end);
    if (pair === '*/' && --this.depth === 0) return new Ready();
    return this;
  }
}

/** Inside '...' or "...": the closing quote doubled stays inside. */
class Quoted implements State {
  private closing = false;
  constructor(private readonly quote: string) {}
  next(ch: string, text: string, start: number, end: number): State | undefined {
    if (this.closing) {
      if (ch === this.quote) {
        this.closing = false;
        return this;
      }
      return ready(ch, text, start, end);
    }
    if (ch === this.quote) this.closing = true;
    return this;
  }
}

/** After `$`: letters, digits and `_` then `$` open a dollar quote. */
class Tag implements State {
  constructor(private readonly at: number) {}
  next(ch: string, text: string, start: number, end: number): State | undefined {
    if (ch === '$') return new Until(text.slice(this.at, end));
    if (isLetterOrDigit(ch) || ch === '_') return this;
    return ready(ch, text, start, end);
  }
}

/** Inside a dollar quote or a line comment: nothing is escaped until the text ends with the delimiter. */
class Until implements State {
  constructor(private readonly delimiter: string) {}
  next(_ch: string, text: string, _start: number, end: number): State | undefined {
    return text.slice(end - this.delimiter.length, end) === this.delimiter ? new Ready() : this;
  }
}

/** After `\`: the next character is taken as it is. */
class Escaped implements State {
  next(): State | undefined {
    return new Ready();
  }
}

/** Inside `( ... )` or `BEGIN ATOMIC ... END`: a `;` does not end the statement. */
class Enclosed implements State {
  constructor(private inner: State, private readonly close: string) {}
  next(ch: string, text: string, start: number, end: number): State | undefined {
    const inner = this.inner.next(ch, text, start, end);
    if (inner !== undefined) this.inner = inner;
    if (this.inner instanceof Ready && endsWithFold(text, end, this.close)) return new Ready();
    return this;
  }
}

function utf8Length(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/** Splits a file's text the way the platform CLI does (`SplitAndTrim`). */
export function cliSplit(text: string): CliStatement[] {
  const statements: CliStatement[] = [];
  const emit = (start: number, end: number) => {
    const trimmed = goTrimSpace(text.slice(start, end).replace(/;+$/, ''));
    if (trimmed !== '') statements.push({ text: trimmed, start, end });
  };
  let state: State = new Ready();
  let start = 0;
  for (let at = 0; at < text.length; ) {
    const code = text.codePointAt(at)!;
    const end = at + (code > 0xffff ? 2 : 1);
    let next = state.next(String.fromCodePoint(code), text, start, end);
    // The CLI steps through the bytes one at a time: after a character of n bytes it sees n - 1
    // invalid ones (U+FFFD) ending at the same place. Only a dollar tag notices (it ends there).
    for (let extra = utf8Length(code) - 1; extra > 0 && next !== undefined; extra--) next = next.next('\ufffd', text, start, end);
    if (next === undefined) {
      emit(start, end);
      state = new Ready();
      start = end;
    } else {
      state = next;
    }
    at = end;
  }
  if (start < text.length) emit(start, text.length);
  return statements;
}
