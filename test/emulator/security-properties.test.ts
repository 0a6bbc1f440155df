// Properties of the emulator's redirect URI and SQL rules (fast-check, seeded by test/setup).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRedirectPattern, parseRedirectUri, redirectMatches } from '../../src/emulator/redirect-uri.js';
import { classifySql } from '../../src/emulator/sql.js';

const segment = fc.stringMatching(/^[a-z0-9_-]{1,8}$/);
const path = fc.array(segment, { maxLength: 4 }).map((parts) => `/${parts.join('/')}`);
const loopback = parseRedirectPattern('http://127.0.0.1:*');

describe('redirect URI rules (property)', () => {
  it('a loopback pattern accepts every valid port and path on its host', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 65535 }), path, (port, where) => {
      expect(redirectMatches(loopback, parseRedirectUri(`http://127.0.0.1:${port}${where}`))).toBe(true);
    }));
  });

  it('user information before any host is refused, whatever it looks like', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9.:[\]]{0,20}$/), fc.constantFrom('evil.example', '127.0.0.1', '[::1]'), (userinfo, host) => {
      expect(() => parseRedirectUri(`http://${userinfo}@${host}/cb`)).toThrow(/user information/);
    }));
  });

  it('a port outside 1..65535 is refused with a message naming it', () => {
    fc.assert(fc.property(fc.oneof(fc.constant(0), fc.integer({ min: 65536, max: 10_000_000 })), (port) => {
      expect(() => parseRedirectUri(`http://127.0.0.1:${port}/cb`)).toThrow(`port \`${port}\``);
    }));
  });

  it('a path pattern matches its path and below, never a longer name', () => {
    const pattern = parseRedirectPattern('http://localhost:*/cb');
    expect(redirectMatches(pattern, parseRedirectUri('http://localhost:8080/cb'))).toBe(true);
    expect(redirectMatches(pattern, parseRedirectUri('http://localhost:8080/cb/done?x=1'))).toBe(true);
    expect(redirectMatches(pattern, parseRedirectUri('http://localhost:8080/cbx'))).toBe(false);
    expect(redirectMatches(pattern, parseRedirectUri('http://localhost:8080/'))).toBe(false);
  });
});

const readOnlyQuery = fc.constantFrom('select 1', 'select count(*) from accounts', 'show search_path', 'with x as (select 1) select * from x', "select 'a;b'");
const writingStatement = fc.constantFrom('delete from accounts', 'insert into t values (1)', "select nextval('s')", 'drop table t', 'update t set a = 1');

describe('SQL classification (property)', () => {
  it('a second statement after a read-only one always counts as writing', async () => {
    await fc.assert(fc.asyncProperty(readOnlyQuery, fc.oneof(writingStatement, readOnlyQuery), fc.constantFrom(';', ';\n', ' ; -- x\n'), async (first, second, separator) => {
      expect((await classifySql(`${first}${separator}${second}`)).readOnly).toBe(false);
    }));
  });

  it('writing words inside strings, quoted identifiers and comments do not make a query writing', async () => {
    await fc.assert(fc.asyncProperty(readOnlyQuery, writingStatement, async (query, hidden) => {
      expect((await classifySql(`${query} -- ${hidden}`)).readOnly).toBe(true);
      expect((await classifySql(`${query} /* ${hidden} */`)).readOnly).toBe(true);
      expect((await classifySql(`select '${hidden.replaceAll("'", "''")}'`)).readOnly).toBe(true);
      expect((await classifySql(`select $q$${hidden}$q$`)).readOnly).toBe(true);
    }));
  });

  it('a writing statement counts as writing in any letter case', async () => {
    await fc.assert(fc.asyncProperty(writingStatement, fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), async (statement, upper) => {
      const mixed = [...statement].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
      expect((await classifySql(mixed)).readOnly).toBe(false);
    }));
  });
});

describe('SQL classification reads the parse tree', () => {
  it('keywords used as names and column lists do not make a query writing; writes anywhere in the tree do', async () => {
    for (const query of ['with t(a) as (select 1) select a from t', 'select n from generate_series(1, 3) as g(n)', 'select 1 as share, 2 as "into"', 'values (1), (2)', 'table accounts', 'explain select * from accounts']) {
      expect(await classifySql(query), query).toMatchObject({ readOnly: true, statements: 1 });
    }
    expect(await classifySql('select * from (select * from accounts for update) locked')).toMatchObject({ readOnly: false, reason: 'it locks rows (`FOR UPDATE`)' });
    expect(await classifySql('select * from accounts where id in (select nextval(\'ids\'))')).toMatchObject({ readOnly: false, reason: 'it calls `nextval`, which is not known to be read-only' });
    expect(await classifySql('explain (analyze) select 1')).toMatchObject({ readOnly: false, reason: 'it contains `ANALYZE`' });
    expect(await classifySql('selec 1')).toMatchObject({ readOnly: false, syntaxError: 'syntax error at or near "selec"' });
    expect(await classifySql("select 'x")).toMatchObject({ readOnly: false, unterminated: 'quoted string' });
  });
});
