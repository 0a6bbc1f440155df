// Error text that leaves the process (status record, status page, notifications) keeps the
// names an operator needs (files, tables, projects, secrets' and fields' names, revisions'
// short forms) and loses values: an API answer or a database error may echo a value that was
// sent, and any value may be a secret. What is a name is judged by its shape: a run of words
// (letters of either case, short lowercase words with digits, or numbers such as a migration's
// timestamp) joined by `_ . / - :`. Whatever else is quoted, and every long opaque run (a token,
// a key, a digest), is replaced by `…`; so are e-mail addresses and URLs' query strings.

const MAX_MESSAGE = 300;

/** Words before a quoted text that say it names something (a quoted text elsewhere is a value). */
const NAMING_WORD =
  /\b(?:tables?|relations?|columns?|schemas?|files?|paths?|projects?|functions?|index|indexes|constraints?|databases?|roles?|users?|organi[sz]ations?|extensions?|views?|sequences?|types?|triggers?|buckets?|slugs?|waves?|windows?|rollouts?|migrations?|kinds?|documents?|fields?|sections?|secrets?|variables?|names?|refs?|branch(?:es)?|shards?|receivers?|rules?|policy|policies|labels?|selectors?|regions?|hosts?|hostnames?|at or near|near|in|did you mean|mean)\s*:?\s*$/i;

/** One word of a name: letters (any case, up to 40), a number (up to 16 digits), or a short lowercase word with digits. */
function nameWord(word: string): boolean {
  return word === '' || /^[A-Za-z]{1,40}$/.test(word) || /^\d{1,16}$/.test(word) || /^[a-z0-9]{1,12}$/.test(word);
}

/** True when `text` has the shape of a name (a file, a table, a project, an identifier), not of a value. */
export function looksLikeName(text: string): boolean {
  if (text.length === 0 || text.length > 200 || !/^[\w.\/:@$-]+$/.test(text)) return false;
  return text.split(/[._\/:@$-]/).every(nameWord);
}

/** A path or a qualified name (`migrations/1_init.sql`, `public.users`): a name wherever it is quoted. */
function looksLikePath(text: string): boolean {
  return /[./]/.test(text) && looksLikeName(text);
}

/**
 * Makes a message safe to show or send outside: names kept, values removed (see above), at
 * most 300 characters.
 */
export function scrubMessage(message: string): string {
  return message
    .replace(/(["'`])((?:(?!\1).){0,500})\1/g, (quoted: string, mark: string, inner: string, offset: number, whole: string) => {
      const before = whole.slice(Math.max(0, offset - 40), offset);
      const keep = looksLikePath(inner) || (NAMING_WORD.test(before) && looksLikeName(inner));
      return keep ? quoted : `${mark}…${mark}`;
    })
    .replace(/\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g, '…@…')
    .replace(/(https?:\/\/[^\s?#]+)[?#]\S*/g, '$1?…')
    .replace(/[A-Za-z0-9+\/=_.-]{24,}/g, (run) => (looksLikeName(run) ? run : '…'))
    .slice(0, MAX_MESSAGE);
}
