// Postgres's lexical structure, as far as a migration's digest needs it: which characters are
// white space, comments (`-- ...` to the end of the line, nested `/* ... */`) and quoted text
// ('...', E'...' with backslash escapes, "...", $tag$...$tag$), and which are the rest. Used to
// compare statements with their comments and white space left out, and to cut the comments
// around a statement before it is sent. Not a parser: a statement's syntax is Postgres's own
// parser's (libpg-query) business.

export interface SqlPiece {
  kind: 'space' | 'comment' | 'quoted' | 'code';
  start: number;
  end: number;
}

const SPACE = /[ \t\n\r\f\v]/;
/** Characters that continue an identifier or a keyword (Postgres: letters, digits, `_`, `$`, any non-ASCII). */
const IDENTIFIER = /[A-Za-z0-9_$\u0080-\uffff]/;
const LINE_END = /[\n\r]/g;
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

function quotedEnd(text: string, at: number, quote: string, backslash: boolean): number {
  for (let i = at + 1; i < text.length; i++) {
    const ch = text[i];
    if (backslash && ch === '\\') {
      i++;
      continue;
    }
    if (ch === quote) {
      if (text[i + 1] === quote) {
        i++;
        continue;
      }
      return i + 1;
    }
  }
  return text.length;
}

function blockCommentEnd(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length - 1; i++) {
    if (text[i] === '/' && text[i + 1] === '*') {
      depth++;
      i++;
    } else if (text[i] === '*' && text[i + 1] === '/') {
      depth--;
      i++;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

/** The pieces of `text`, in order, covering all of it. An unterminated quote or comment runs to the end. */
export function lexSql(text: string): SqlPiece[] {
  const pieces: SqlPiece[] = [];
  const push = (kind: SqlPiece['kind'], start: number, end: number) => {
    const last = pieces[pieces.length - 1];
    if (last && last.kind === kind && (kind === 'space' || kind === 'code')) last.end = end;
    else pieces.push({ kind, start, end });
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const after = text[i + 1];
    const before = i > 0 ? text[i - 1]! : '';
    if (SPACE.test(ch)) {
      push('space', i, i + 1);
      i++;
    } else if (ch === '-' && after === '-') {
      LINE_END.lastIndex = i;
      const end = LINE_END.exec(text)?.index ?? text.length;
      push('comment', i, end);
      i = end;
    } else if (ch === '/' && after === '*') {
      const end = blockCommentEnd(text, i);
      push('comment', i, end);
      i = end;
    } else if (ch === "'") {
      // E'...' (the E not part of a longer word) takes backslash escapes.
      const escape = (before === 'E' || before === 'e') && (i < 2 || !IDENTIFIER.test(text[i - 2]!));
      const end = quotedEnd(text, i, "'", escape);
      push('quoted', i, end);
      i = end;
    } else if (ch === '"') {
      const end = quotedEnd(text, i, '"', false);
      push('quoted', i, end);
      i = end;
    } else if (ch === '$' && !(before !== '' && IDENTIFIER.test(before))) {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(text);
      if (tag) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        const end = close < 0 ? text.length : close + tag[0].length;
        push('quoted', i, end);
        i = end;
      } else {
        push('code', i, i + 1);
        i++;
      }
    } else {
      push('code', i, i + 1);
      i++;
    }
  }
  return pieces;
}

/** Characters of words (keywords, names, numbers, `$1`) and of operators: two of one kind side by side make one token. */
const WORD = /[A-Za-z0-9_$.\u0080-\uffff]/;
const OPERATOR = /[-+*/<>=~!@#%^&|`?:]/;

/** White space between these two characters separates tokens that would otherwise be one (or a prefix and its string). */
function spaceMatters(before: string, after: string): boolean {
  if (WORD.test(before)) return WORD.test(after) || after === "'" || after === '"';
  return OPERATOR.test(before) && OPERATOR.test(after);
}

/**
 * A statement with its comments left out and its white space made canonical: a run of white
 * space and comments between two pieces is one space where it separates two tokens that would
 * otherwise run together (two words, two operators, a word and a quote), and nothing elsewhere
 * (next to a parenthesis, a comma, a `;`) or at either end; quoted text is kept as it is.
 * Repeated `;` count as one, and a `;` at either end as none.
 */
export function normalizeSql(text: string): string {
  let out = '';
  let gap = false;
  for (const piece of lexSql(text)) {
    if (piece.kind === 'space' || piece.kind === 'comment') {
      gap = true;
      continue;
    }
    let part = text.slice(piece.start, piece.end);
    // Inside code there is no white space (it is a piece of its own): only the `;` need care.
    if (piece.kind === 'code') part = part.replace(/;+/g, ';');
    if (out.endsWith(';') && part.startsWith(';')) part = part.replace(/^;+/, '');
    if (part === '') continue;
    if (out !== '' && gap && spaceMatters(out[out.length - 1]!, part[0]!)) out += ' ';
    out += part;
    gap = false;
  }
  return out.replace(/^;+/, '').replace(/;+$/, '');
}

/** The part of a statement from its first to its last piece that is not white space or a comment ('' for none). */
export function withoutSurroundingComments(text: string): string {
  const pieces = lexSql(text).filter((piece) => piece.kind === 'quoted' || piece.kind === 'code');
  if (pieces.length === 0) return '';
  return text.slice(pieces[0]!.start, pieces[pieces.length - 1]!.end);
}

/** The statement ends in a line comment (`-- ...`): a `;` after it needs a line break first. */
export function endsInLineComment(text: string): boolean {
  const pieces = lexSql(text).filter((piece) => piece.kind !== 'space');
  const last = pieces[pieces.length - 1];
  return last !== undefined && last.kind === 'comment' && text.startsWith('--', last.start);
}
