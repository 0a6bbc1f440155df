// POST /v1/projects/{ref}/database/query on a real Postgres (PGlite), one database per project:
// DDL, DML, parameters, errors in the service's shape (SQLSTATE, message, position), read_only,
// the project's read-only mode, the Read-only role, eviction that keeps the data, removal with
// the project, and the type generation from the real catalog.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { call } from './helpers.js';

const A = 'databaseprojectaaaaa';
const B = 'databaseprojectbbbbb';
const C = 'databaseprojectccccc';
const READONLY = 'databasereadonlyaaaa';
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({
    port: 0,
    rateLimit: { limit: 100_000, windowMs: 60_000 },
    // Two open databases at most: the third project's first query evicts the least recently used.
    openDatabases: 2,
    seed: {
      users: [
        { id: 'owner', name: 'Owner', tokens: ['pat_owner_database'] },
        { id: 'reader', name: 'Reader', tokens: ['pat_reader_database'] },
      ],
      organizations: [{ name: 'Database org', members: [{ user: 'owner', role: 'Owner' }, { user: 'reader', role: 'Read-only' }] }],
      projects: [
        { ref: A, name: 'a', organization: 'Database org' },
        { ref: B, name: 'b', organization: 'Database org' },
        { ref: C, name: 'c', organization: 'Database org' },
        { ref: READONLY, name: 'ro', organization: 'Database org', config: { readonly: true } },
      ],
    },
  });
}, 120_000);

afterAll(async () => {
  await emulator.close();
});

const query = (ref: string, body: Record<string, unknown>, token = 'pat_owner_database') =>
  call(emulator, 'POST', `/v1/projects/${ref}/database/query`, { token, body });

describe('the query endpoint runs SQL on the project\'s own Postgres', () => {
  it('DDL, DML and parameters; rows come back as JSON objects', async () => {
    expect((await query(A, { query: 'create table accounts (id int primary key, name text, balance bigint, created date)' })).status).toBe(201);
    const inserted = await query(A, { query: 'insert into accounts values ($1, $2, $3, $4) returning id, name, balance, created', parameters: [1, 'ada', '9007199254740993', '2026-01-02'] });
    expect(inserted.status).toBe(201);
    // bigint keeps its precision as text; dates are the text Postgres prints.
    expect(inserted.body).toEqual([{ id: 1, name: 'ada', balance: '9007199254740993', created: '2026-01-02' }]);
    const rows = await query(A, { query: "insert into accounts (id, name) values (2, 'bob'); select id, name, balance is null as empty from accounts order by id" });
    expect(rows.body).toEqual([{ id: 1, name: 'ada', empty: false }, { id: 2, name: 'bob', empty: true }]);
    expect((await query(A, { query: 'update accounts set name = upper(name)' })).body).toEqual([]);
    expect((await query(A, { query: 'select 1 as one' })).body).toEqual([{ one: 1 }]);
  });

  it('each project has a database of its own', async () => {
    const other = await query(B, { query: 'select * from accounts' });
    expect(other.status).toBe(400);
    expect(other.body.message).toMatch(/^ERROR: 42P01: relation "accounts" does not exist/);
  });

  it('errors carry the SQLSTATE, the message and the position (line and caret)', async () => {
    const answer = await query(A, { query: 'select id,\n  nope\nfrom accounts' });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('ERROR: 42703: column "nope" does not exist\nLINE 2:   nope\n          ^\nHINT: Perhaps you meant to reference the column "accounts.name".');
    const syntax = await query(A, { query: 'selec 1' });
    expect(syntax.body.message).toMatch(/^ERROR: 42601: syntax error at or near "selec"\nLINE 1: selec 1\n        \^/);
    const duplicate = await query(A, { query: "insert into accounts (id, name) values (1, 'again')" });
    expect(duplicate.body.message).toMatch(/^ERROR: 23505: duplicate key value violates unique constraint "accounts_pkey"\nDETAIL: Key \(id\)=\(1\) already exists\./);
  });

  it('a failing statement rolls back the whole query', async () => {
    const answer = await query(A, { query: "insert into accounts (id, name) values (3, 'carol'); insert into accounts (id, name) values (1, 'dup')" });
    expect(answer.status).toBe(400);
    expect((await query(A, { query: 'select count(*)::int as n from accounts where id = 3' })).body).toEqual([{ n: 0 }]);
  });

  it('read_only runs in a read-only transaction: Postgres refuses writes (25006), reads run', async () => {
    const refused = await query(A, { query: "insert into accounts (id, name) values (4, 'dan')", read_only: true });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^ERROR: 25006: cannot execute INSERT in a read-only transaction/);
    expect((await query(A, { query: 'select count(*)::int as n from accounts', read_only: true })).body).toEqual([{ n: 2 }]);
    // Nothing a request sets reaches the next one.
    await query(A, { query: 'set search_path = nowhere' });
    expect((await query(A, { query: 'select count(*)::int as n from accounts' })).body).toEqual([{ n: 2 }]);
  });

  it('the project\'s read-only mode makes every query read-only until it is disabled', async () => {
    const refused = await query(READONLY, { query: 'create table t (id int)' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^ERROR: 25006: cannot execute CREATE TABLE in a read-only transaction[\s\S]*read-only mode/);
    expect((await query(READONLY, { query: 'select 2 as two' })).body).toEqual([{ two: 2 }]);
    expect((await call(emulator, 'POST', `/v1/projects/${READONLY}/readonly/temporary-disable`, { token: 'pat_owner_database' })).status).toBe(201);
    expect((await query(READONLY, { query: 'create table t (id int)' })).status).toBe(201);
  });

  it('a Read-only member runs reads only: 403 for a writing query, and Postgres refuses what slips through', async () => {
    expect((await query(A, { query: 'select name from accounts order by id' }, 'pat_reader_database')).body).toEqual([{ name: 'ADA' }, { name: 'BOB' }]);
    const refused = await query(A, { query: 'delete from accounts' }, 'pat_reader_database');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/^Forbidden: your role in the organization \(Read-only\)/);
    expect((await query(A, { query: 'select count(*)::int as n from accounts' })).body).toEqual([{ n: 2 }]);
  });

  it('an evicted database keeps its data; type generation reads the real catalog', async () => {
    // A was written; B and C open two more databases, so A is saved and closed.
    await query(B, { query: 'create table notes (id serial primary key, body text not null, tags text[])' });
    await query(C, { query: 'select 1' });
    await query(B, { query: 'select 1' });
    expect((await query(A, { query: 'select name from accounts order by id' })).body).toEqual([{ name: 'ADA' }, { name: 'BOB' }]);
    expect(emulator.databaseStats().evicted).toBeGreaterThan(0);
    expect(emulator.databaseStats().saved).toBeGreaterThan(0);
    const types = await call(emulator, 'GET', `/v1/projects/${B}/types/typescript`, { token: 'pat_owner_database' });
    expect(types.status).toBe(200);
    expect(types.body.types).toContain('"notes": {\n        Row: {\n          "id": number\n          "body": string\n          "tags": string[] | null');
  }, 240_000);

  it('never holds more databases open than its bound: concurrent queries to more projects wait their turn', async () => {
    const answers = await Promise.all([A, B, C, READONLY, A, B, C].map((ref) => query(ref, { query: 'select pg_sleep(0.05), 1 as one' })));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201, 201]);
    expect(emulator.databaseStats().peakOpen).toBeLessThanOrEqual(2);
    // Seven queries over four databases with two open: several saves and reopens in a row.
  }, 240_000);

  it('deleting a project removes its database', async () => {
    expect((await call(emulator, 'DELETE', `/v1/projects/${C}`, { token: 'pat_owner_database' })).status).toBe(200);
    expect((await query(C, { query: 'select 1' })).status).toBe(404);
  });
});
