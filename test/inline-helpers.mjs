// Helpers for the tests of writes on the JS thread (not a test file itself: npm test runs
// test/*.test.mjs): two files written alike, one inline and one not, random statements, and a
// write lock another connection holds.
import assert from 'node:assert/strict'
import path from 'node:path'
import { Database } from '../dist/esm/index.mjs'
import { randomValue, tempDir } from './helpers.mjs'
import { deferred, INSERT, outsideContext, sleep, track, turns } from './tx-helpers.mjs'

/** For tests that count where statements ran. With the default budget (0.1 ms) a JS thread
 * the OS preempts mid-statement (a loaded 2-core machine) overruns, and that statement then
 * skips the JS thread for its next runs (crates/engine/src/js_thread/runs.rs, `back_off`): where a run
 * lands would depend on the machine's load, not on the rule a test checks. */
export const PLACEMENT = { inlineBudget: 10 }

/** `diagnostics().inline`. */
export const inlineCounts = async (db) => (await db.diagnostics()).inline

/** Opens the JS thread's own connection and returns once a read runs on it. That connection
 * serves reads while the writer's is busy, and opens on an engine thread when such a read first
 * finds it closed (docs/api.md "Where a call runs"; that read goes to a reader). Here the
 * writer's is held by a transaction while reads from outside it are made until one runs
 * inline. Call it outside any transaction. Returns the row of `sql` as read there. */
export async function openOwnConnection(db, sql = 'SELECT 1 AS one') {
  const runOutside = outsideContext()
  const begun = deferred()
  const release = deferred()
  const tx = db.transaction(async (tx) => {
    await tx.selectOne('SELECT 1 AS one')
    begun.resolve()
    await release.promise
  })
  try {
    await begun.promise
    for (let i = 0; i < 500; i++) {
      const before = (await inlineCounts(db)).runs
      const row = await runOutside(() => db.selectOne(sql))
      if ((await inlineCounts(db)).runs > before) return row
      await sleep(2)
    }
    assert.fail("the JS thread's own connection did not open")
  } finally {
    release.resolve()
    await tx
  }
}

/** Two databases, each on its own file (the same writes must find the same rows): writes
 * inline where bounded (PLACEMENT's budget: the tests count where writes ran), and never inline. */
export async function twoFiles(t, options = {}) {
  const dir = tempDir(t)
  const on = await Database.open(path.join(dir, 'on.db'), { ...PLACEMENT, ...options })
  const off = await Database.open(path.join(dir, 'off.db'), { ...options, inlineBudget: 0 })
  t.after(() => Promise.all([on.close(), off.close()]))
  return { on, off }
}

export const SCHEMA = `
  CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
  INSERT INTO p (id, name) VALUES (1, 'one'), (2, 'two'), (3, 'three');
  CREATE TABLE w (
    id INTEGER PRIMARY KEY,
    u TEXT UNIQUE,
    v,
    n INTEGER NOT NULL CHECK (n >= 0),
    p INTEGER REFERENCES p (id),
    b BLOB
  );
  CREATE INDEX w_p ON w (p);
`

/** Random writes (each a function of the prng): most are bounded and run
 * inline; some scan or check FK children and run on the writer thread; many violate a
 * constraint (UNIQUE, PRIMARY KEY, NOT NULL, CHECK, FK) or are wrong in another way. */
export function randomStatements(safeIntegers) {
  const pick = (rand, list) => list[Math.floor(rand() * list.length)]
  const u = (rand) => pick(rand, ['a', 'b', 'c', 'd', 'e\0f', 'é', null])
  const n = (rand) => (rand() < 0.1 ? null : rand() < 0.1 ? -1 : Math.floor(rand() * 5))
  const fk = (rand) => (rand() < 0.15 ? 99 : rand() < 0.2 ? null : 1 + Math.floor(rand() * 3))
  const id = (rand) => 1 + Math.floor(rand() * 15)
  const blob = (rand) => (rand() < 0.3 ? null : Buffer.from([0, Math.floor(rand() * 256), 0]))
  const bigId = (rand) => pick(rand, [2n ** 53n + 1n, 2n ** 62n + BigInt(Math.floor(rand() * 9)), -(2n ** 53n) - 7n])
  const v = (rand) => randomValue(rand, safeIntegers)
  return [
    ['INSERT INTO w (u, v, n, p, b) VALUES (?, ?, ?, ?, ?)', (r) => [u(r), v(r), n(r), fk(r), blob(r)]],
    ['INSERT INTO w (u, v, n, p, b) VALUES (?, ?, ?, ?, ?)', (r) => [u(r), v(r), n(r), fk(r), blob(r)]],
    ['INSERT INTO w (id, u, v, n) VALUES (?, ?, ?, ?)', (r) => [id(r), u(r), v(r), n(r)]],
    ['INSERT INTO w (id, v, n) VALUES (?, ?, 0)', (r) => [bigId(r), v(r)]],
    [
      'INSERT INTO w (id, u, v, n) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET v = excluded.v, n = excluded.n',
      (r) => [id(r), u(r), v(r), n(r)],
    ],
    ['INSERT OR REPLACE INTO w (id, u, v, n) VALUES (?, ?, ?, 1)', (r) => [id(r), u(r), v(r)]],
    ['UPDATE w SET v = ?, n = ? WHERE id = ?', (r) => [v(r), n(r), id(r)]],
    ['UPDATE w SET u = ? WHERE u = ?', (r) => [u(r), u(r)]],
    ['UPDATE w SET p = ?, b = ? WHERE id = ?', (r) => [fk(r), blob(r), id(r)]],
    ['DELETE FROM w WHERE id = ?', (r) => [id(r)]],
    ['INSERT INTO p (id, name) VALUES (?, ?)', (r) => [1 + Math.floor(r() * 5), u(r)]],
    ['DELETE FROM p WHERE id = ?', (r) => [1 + Math.floor(r() * 5)]], // FK children: writer thread
    ['UPDATE w SET v = ? WHERE n = ?', (r) => [v(r), n(r)]], // a scan: writer thread
    ['INSERT INTO w (u) VALUES (?)', (r) => [u(r), u(r)]], // wrong parameter count
    ['INSERT INTO missing (x) VALUES (?)', (r) => [v(r)]],
    ['INSERT OR ROLLBACK INTO w (id, n) VALUES (?, 0)', (r) => [id(r)]], // a conflict ends a transaction
  ]
}

/** The rows of w; ids as text, since some are beyond ±(2^53−1) (safeIntegers or not). */
export const ROWS = 'SELECT CAST(id AS TEXT) AS id, u, v, n, p, b FROM w ORDER BY w.id'

/** JSON with bigints shown as `<n>n`. */
export const stringify = (x) => JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))

/** The constraints the random writes violate. */
export const CONSTRAINT_CODES = [
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_NOTNULL',
  'SQLITE_CONSTRAINT_CHECK',
  'SQLITE_CONSTRAINT_FOREIGNKEY',
]

/** After the same random writes on both files: the same rows in each, and the writes met every
 * error of `expected` (the errors they are meant to compare) among the `codes` they met. */
export async function assertSameEnd(on, off, codes, expected) {
  for (const sql of [ROWS, 'SELECT * FROM p ORDER BY id']) {
    assert.deepStrictEqual(await on.select(sql), await off.select(sql), sql)
  }
  for (const code of expected) assert.ok(codes.has(code), `${code} among ${[...codes].join(', ')}`)
}

/** Runs `write()` while another Database on `file` holds the write lock (an immediate
 * transaction that inserted 'holder' into t): checks the write waits for it, then lets the
 * holder commit. What the write settled with and how many writes ran inline meanwhile. */
export async function writeWhileLocked(t, db, file, write) {
  const holder = await Database.open(file)
  t.after(() => holder.close())
  const held = deferred()
  const release = deferred()
  const holding = holder.transaction(
    async (tx) => {
      await tx.execute(INSERT, ['holder'])
      held.resolve()
      await release.promise
    },
    { mode: 'immediate' },
  )
  await held.promise
  const before = await inlineCounts(db)
  const waiting = track(write())
  try {
    await turns(20)
    assert.equal(waiting.settled, false, `it waits for the lock (${waiting.error?.code ?? 'resolved'})`)
  } finally {
    release.resolve()
    await holding
  }
  const result = await waiting.promise
  return { result, writes: (await inlineCounts(db)).writes - before.writes }
}
