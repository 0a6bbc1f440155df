// The platform CLI's statement splitter (src/manifests/sql-split.ts), on inputs shaped like the
// CLI's own parser tests: each case is the pieces the CLI keeps, joined into one text, and the
// splitter must give them back (trimmed, without the `;`, empty ones dropped). Then the lexer's
// normalization and the digest built on both.
import { describe, expect, it } from 'vitest';
import { cliSplit } from '../../src/manifests/sql-split.js';
import { endsInLineComment, normalizeSql, withoutSurroundingComments } from '../../src/manifests/sql-lexer.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { legacyMigrationDigest, migrationDigest, parseMigration, readMigrations } from '../../src/manifests/migrations.js';
import { CheckoutFiles } from '../../src/manifests/checkout-files.js';

/** The statements the CLI records for pieces written one after another. */
function expectSplit(pieces: string[]): void {
  const text = pieces.join('');
  const expected = pieces.map((piece) => piece.replace(/;+$/, '').trim()).filter((piece) => piece !== '');
  expect(cliSplit(text).map((s) => s.text)).toEqual(expected);
}

describe('the CLI splitter', () => {
  it('line comments: after a separator, before one, a lone dash, a block opener inside', () => {
    expectSplit(['ALTER TABLE t OWNER TO me;', '-- trailing note']);
    expectSplit(['SELECT 2 --; not the end\n + 1']);
    expectSplit(['SELECT 5 - ;', 'VACUUM']);
    expectSplit(['-- /* opens nothing \n;', ' */ VACUUM']);
  });

  it('block comments: a separator inside, nested blocks, a slash and a star apart', () => {
    expectSplit(['SELECT /* ; */ 3;']);
    expectSplit(['SELECT /*; /*;*/ ;*/ 4']);
    expectSplit(['SELECT 8 / * ;', ' */ VACUUM']);
  });

  it('separators: bare, between spaces, after a backslash', () => {
    expect(cliSplit(';VACUUM;;').map((s) => s.text)).toEqual(['VACUUM']);
    expectSplit(['CHECKPOINT   ;', '  VACUUM']);
    const escaped = '\\;;\\;';
    expect(cliSplit(escaped).map((s) => escaped.slice(s.start, s.end))).toEqual(['\\;;', '\\;']);
  });

  it('dollar quotes: a named tag, an anonymous one holding quotes, a dollar that opens nothing', () => {
    expectSplit(['DO $body$ BEGIN PERFORM 1; END $body$;', 'SELECT 1']);
    expectSplit(['SELECT $$"O\'Brien;s"$$']);
    expectSplit(['SELECT "$";', ' $$']);
    expectSplit(['SELECT $1;', 'SELECT 2']);
  });

  it('single quotes: a separator inside, a doubled quote, a backslash taken literally', () => {
    expectSplit(["SELECT ';' AS semi"]);
    expectSplit(["SELECT ';'';' AS two"]);
    expectSplit(["SELECT 'back\\';", " rest'"]);
  });

  it('double quotes: a separator, a single quote and a doubled double quote inside a name', () => {
    expectSplit(['CREATE POLICY "read;write" ON docs;', ' VACUUM']);
    expectSplit(['CREATE POLICY "owner\'s rows" ON docs;', ' VACUUM']);
    expectSplit(['CREATE POLICY "a""b" ON docs;', ' VACUUM']);
  });

  it('parentheses keep a rule\'s statements together, and ignore those in literals and comments', () => {
    expectSplit(['CREATE RULE r AS ON INSERT TO t DO ALSO (NOTIFY t; SELECT "x");', 'SELECT 1']);
    expectSplit(["CREATE RULE r AS ON INSERT TO t DO ALSO (-- )\nSELECT ')';\n-- )\n)\n"]);
  });

  it('BEGIN ATOMIC bodies: inline, any case, comments inside, and the word atomic in names', () => {
    expectSplit([`CREATE FUNCTION twice(n int) RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n  SELECT 'twice';\n  SELECT n * 2;\nEND;`, '\nSELECT 1']);
    expectSplit(["begin   atomic; select 'end'; end"]);
    expectSplit(['CREATE FUNCTION f() BEGIN\nATOMIC-- END;\n-- END;\nEND\n;']);
    for (const name of ['fn_atomic', 'atomic_fn', 'xatomicx', 'public.atomic_example']) {
      expectSplit([`CREATE FUNCTION ${name}() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n  NULL;\nEND;\n$$;`, '\nSELECT 1;']);
    }
  });

  it('keeps comments and white space inside a statement, and a comment-only tail as a statement', () => {
    const text = '-- Items\ncreate table items (\n  id int -- key\n);\n\n-- done\n';
    expect(cliSplit(text).map((s) => s.text)).toEqual(['-- Items\ncreate table items (\n  id int -- key\n)', '-- done']);
  });

  it('trims the white space Go trims (U+0085 yes, a byte order mark no)', () => {
    expect(cliSplit('\u0085select 1\u0085;').map((s) => s.text)).toEqual(['select 1']);
    expect(cliSplit('\ufeffselect 1;').map((s) => s.text)).toEqual(['\ufeffselect 1']);
  });

  it('steps through multi-byte characters as the CLI does: a dollar tag with one is no tag', () => {
    // `$é$` is a dollar quote to Postgres; the CLI splits at the `;` inside it.
    expect(cliSplit('select $é$a;b$é$').map((s) => s.text)).toEqual(['select $é$a', 'b$é$']);
    expect(cliSplit("select 'é;è';").map((s) => s.text)).toEqual(["select 'é;è'"]);
  });
});

describe('normalizing and the digest', () => {
  it('leaves out comments and white space, keeps quoted text as it is', () => {
    expect(normalizeSql('-- lead\ncreate  table\n\tt ( a int ) /* x */ ; ')).toBe('create table t(a int)');
    expect(normalizeSql('select a = - 1, b=-1, x :: int, E \'e\'')).toBe("select a= -1,b=-1,x::int,E 'e'");
    expect(normalizeSql("select 'a  --b', \"x  y\", $$ -- c $$, E'\\' -- d'")).toBe("select 'a  --b',\"x  y\",$$ -- c $$,E'\\' -- d'");
    expect(normalizeSql('select a$b$c, $1')).toBe('select a$b$c,$1');
    expect(normalizeSql('-- only a comment')).toBe('');
  });

  it('cuts the comments around a statement and knows when one ends in a line comment', () => {
    expect(withoutSurroundingComments('-- a\nselect 1 -- b\n')).toBe('select 1');
    expect(endsInLineComment('select 1 -- b')).toBe(true);
    expect(endsInLineComment('select 1 /* b */')).toBe(false);
    expect(endsInLineComment("select '--'")).toBe(false);
  });

  it('a file and the CLI\'s record of it have one digest; comments and white space change nothing, a token does', () => {
    const file = '-- Profiles\ncreate table profiles (id uuid primary key);\n\nalter table profiles enable row level security;\n-- end\n';
    const recorded = cliSplit(file).map((s) => s.text);
    const reformatted = cliSplit('create table profiles (\n  id uuid primary key\n); /* rls */ alter table profiles\n  enable row level security;').map((s) => s.text);
    const changed = cliSplit('create table profiles (id bigint primary key);\nalter table profiles enable row level security;').map((s) => s.text);
    expect(migrationDigest(reformatted)).toBe(migrationDigest(recorded));
    expect(migrationDigest(changed)).not.toBe(migrationDigest(recorded));
    expect(migrationDigest(["select 'a  b'"])).not.toBe(migrationDigest(["select 'a b'"]));
    // Where the statements were split does not count: Postgres's statements give the same digest.
    expect(migrationDigest(['create table profiles (id uuid primary key)', 'alter table profiles enable row level security'])).toBe(migrationDigest(recorded));
  });

  it('reads a file the CLI\'s way and Postgres\'s way', async () => {
    const text = '-- lead\nbegin;\ncreate table t (a int);\n-- trailing\ninsert into t values (1) -- no semicolon\n;\ncommit;\n-- after\n';
    const parsed = await parseMigration(text, 'm.sql');
    expect(parsed.errors).toEqual([]);
    expect(parsed.wrapped).toBe(true);
    expect(parsed.statements).toEqual(['-- lead\nbegin', 'create table t (a int)', '-- trailing\ninsert into t values (1) -- no semicolon', 'commit', '-- after']);
    expect(parsed.run).toEqual(['create table t (a int)', 'insert into t values (1)']);
    expect(legacyMigrationDigest(parsed.legacy)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses any other transaction control, naming the rule and the way out', async () => {
    const cases: Array<[string, RegExp]> = [
      ['create table a (i int);\ncommit;', /^a migration controls no transaction but one way: .*; this COMMIT is not around the whole file: put BEGIN first and COMMIT last, or remove both/],
      ['begin;\ncreate table a (i int);', /this BEGIN is not around the whole file/],
      ['begin;\nsavepoint s;\ncreate table a (i int);\ncommit;', /this SAVEPOINT is not one of them/],
      ['begin isolation level serializable;\ncreate table a (i int);\ncommit;', /BEGIN with options .* remove the options/],
      ['-- reconcile: no-transaction\nbegin;\ncreate index concurrently i on a (i);\ncommit;', /no-transaction` runs without a transaction: remove its BEGIN/],
    ];
    for (const [text, message] of cases) {
      const parsed = await parseMigration(text, 'm.sql', { noTransaction: text.includes('no-transaction') });
      expect(parsed.errors.map((e) => e.message)).toContainEqual(expect.stringMatching(message));
    }
  });

  it('a comment-only file is a migration with no statement; a file the CLI would split wrongly is refused', async () => {
    expect(await parseMigration('-- nothing yet\n/* later */\n', 'm.sql')).toMatchObject({ errors: [], run: [], statements: ['-- nothing yet\n/* later */'] });
    const escaped = await parseMigration("select E'it\\'s; fine';\n", 'm.sql');
    expect(escaped.errors).toMatchObject([{ line: 1, message: expect.stringMatching(/^the platform CLI ends a statement here where Postgres does not .* write a quote inside a string as ''$/) }]);
  });
});

describe('file names', () => {
  it('follow the CLI\'s rule: digits, an underscore, then any name; others are refused with the way out', async () => {
    const root = await mkdtemp(join(tmpdir(), 'migration-names-'));
    try {
      for (const name of ['20240101000000_init.sql', '20240102_add users & more.sql', '3_.sql', 'seed.sql', '20240101000000_again.sql', '4_\u001b[2Jclear.sql']) await writeFile(join(root, name), 'select 1;');
      const set = await readMigrations(await CheckoutFiles.at(root), root, '.', { file: 'm.yaml', line: 1, column: 1, path: '/spec/path' });
      expect(set.files.map((f) => [f.version, f.name])).toEqual([['3', ''], ['20240102', 'add users & more'], ['20240101000000', 'again']]);
      expect(set.errors.map((e) => `${e.file}: ${e.message}`)).toEqual([
        '20240101000000_init.sql: version 20240101000000 is used twice (also by 20240101000000_again.sql): give one of them a version of its own',
        '4_?[2Jclear.sql: a migration file name holds a control character: rename it',
        expect.stringMatching(/^seed\.sql: a migration file is named `<version>_<name>\.sql` \(digits, an underscore, then any name: the platform CLI's rule\): rename it, or move it out of the migrations directory$/),
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
