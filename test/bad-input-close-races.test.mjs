// Bad input (issue 43, items 3 and 5): calls left pending by close(), database calls made from
// inside a SQL function, savepoint statements inside a transaction body, and a journal_mode
// change. Harness and case format: bad-input-harness.mjs.

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { runCases, within } from './bad-input-harness.mjs'

/** A write that goes to the writer thread and waits there (a scan is not a bounded write: it
 * never runs on the JS thread), so calls issued right after it are queued behind it. */
const QUEUED_WRITE = 'INSERT INTO t SELECT a FROM t'

/** A fresh database with a table t of 3 rows. */
async function three(ctx) {
  const db = await ctx.fresh()
  await db.execute('CREATE TABLE t (a)')
  await db.execute('INSERT INTO t VALUES (1), (2), (3)')
  return db
}

/** Every promise settles (each within 5 s): its status, and what it resolved with or its code. */
function settled(promises) {
  return Promise.all(
    promises.map((p, i) =>
      within(p, 5_000, `call ${i}`).then(
        (value) => ['ok', value],
        (error) => ['rejected', error.code ?? error.message],
      ),
    ),
  )
}

// Issue 43 item 3: an iteration's first page waited for the writes its flow issued before it,
// then went to an engine that had closed meanwhile, which dropped it unrun: it never settled.
const CLOSE_RACES = [
  {
    name: '`iterate` issued beside a queued write, then `close()`: it settles',
    run: async (ctx) => {
      const db = await three(ctx)
      const write = db.execute(QUEUED_WRITE)
      const first = db.iterate('SELECT a FROM t ORDER BY rowid')[Symbol.asyncIterator]().next()
      const closing = db.close()
      return settled([write, first, closing])
    },
    check: ([write, first, closing]) => {
      assert.deepStrictEqual(write, ['ok', { changes: 3, lastInsertRowid: 6 }])
      // Asked for before close(): it runs, and sees the write its flow issued before it.
      assert.deepStrictEqual(first, ['ok', { value: { a: 1 }, done: false }])
      assert.deepStrictEqual(closing, ['ok', undefined])
    },
  },
  {
    name: 'iterate().pages() beside a queued write, then close(): its first page arrives',
    run: async (ctx) => {
      const db = await three(ctx)
      const write = db.execute(QUEUED_WRITE)
      const first = db.iterate('SELECT a FROM t', [], { pageRows: 100 }).pages().next()
      const closing = db.close()
      const [, page] = await settled([write, first, closing])
      return page
    },
    check: (page) => assert.deepStrictEqual([page[0], page[1].value.length], ['ok', 6]),
  },
  {
    name: 'iterate beside a queued executeBatch, then close(): it settles',
    run: async (ctx) => {
      const db = await three(ctx)
      const batch = db.executeBatch('INSERT INTO t SELECT ? FROM t', [[7], [8]])
      const first = db.iterate('SELECT count(*) AS n FROM t').pages().next()
      const closing = db.close()
      return settled([batch, first, closing])
    },
    check: ([batch, first, closing]) => {
      assert.deepStrictEqual(batch, ['ok', { changes: 9 }])
      assert.deepStrictEqual(first, ['ok', { value: [{ n: 12 }], done: false }])
      assert.deepStrictEqual(closing, ['ok', undefined])
    },
  },
  {
    name: "a Statement's iterate beside a queued write, then close(): it settles",
    run: async (ctx) => {
      const db = await three(ctx)
      const statement = await db.prepare('SELECT count(*) AS n FROM t')
      const write = db.execute(QUEUED_WRITE)
      const first = statement.iterate().pages().next()
      const closing = db.close()
      return settled([write, first, closing])
    },
    check: ([, first, closing]) => {
      assert.deepStrictEqual(first, ['ok', { value: [{ n: 6 }], done: false }])
      assert.deepStrictEqual(closing, ['ok', undefined])
    },
  },
  {
    name: 'an execute queued behind a transaction, an iterate after it, then close(): all settle',
    run: async (ctx) => {
      const db = await three(ctx)
      const tx = db.transaction(async (t) => {
        await new Promise((resolve) => setTimeout(resolve, 20))
        await t.execute('INSERT INTO t VALUES (4)')
      })
      const write = db.execute(QUEUED_WRITE)
      const first = db.iterate('SELECT count(*) AS n FROM t').pages().next()
      const closing = db.close()
      return settled([tx, write, first, closing])
    },
    check: ([tx, write, first, closing]) => {
      assert.deepStrictEqual(tx, ['ok', undefined])
      assert.equal(write[1].changes, 4)
      assert.deepStrictEqual(first, ['ok', { value: [{ n: 8 }], done: false }])
      assert.deepStrictEqual(closing, ['ok', undefined])
    },
  },
  {
    name: 'an iteration started before close() and read after it rejects its step with ERR_DATABASE_CLOSED',
    run: async (ctx) => {
      const db = await three(ctx)
      const write = db.execute(QUEUED_WRITE)
      const pages = db.iterate('SELECT a FROM t').pages()
      const closing = db.close()
      return settled([write, pages.next(), closing])
    },
    check: ([write, first, closing]) => {
      assert.equal(write[0], 'ok')
      assert.deepStrictEqual(first, ['rejected', 'ERR_DATABASE_CLOSED'])
      assert.deepStrictEqual(closing, ['ok', undefined])
    },
  },
]

// Issue 43 item 5: these calls were not refused inside a SQL function (a `db.rekey()` there
// rekeyed the database).
const CALL_KEY = 'old key'

/** Runs `call(db)` inside a function of a select on an encrypted database: the select's error
 * code and cause's code, the inner call's outcome, and whether the old key still opens it. */
async function inFunction(ctx, call, name) {
  const file = ctx.file(`${name}.db`)
  const db = await Database.open(file, { encryptionKey: CALL_KEY })
  let inner
  db.function('callsDb', () => {
    inner = call(db)
    return 1
  })
  const outer = await db.select('SELECT callsDb() AS v').then(
    () => 'resolved',
    (error) => [error.code, error.cause?.code],
  )
  const [innerOutcome] = await settled([inner])
  await db.close()
  const again = await Database.open(file, { encryptionKey: CALL_KEY })
  const rows = await again.select('SELECT 1 AS ok')
  await again.close()
  return { outer, inner: innerOutcome, oldKeyOpens: rows[0].ok === 1 }
}

const REFUSED = { outer: ['ERR_FUNCTION_THREW', 'ERR_CALL_IN_FUNCTION'], oldKeyOpens: true }
const IN_FUNCTION = [
  ['rekey', (db) => db.rekey('new key')],
  ['rekey to null', (db) => db.rekey(null)],
  ['serialize', (db) => db.serialize()],
  ['backup', (db) => db.backup(`${db.path}.copy`)],
  ['diagnostics', (db) => db.diagnostics()],
].map(([what, call]) => ({
  name: `${what} inside a SQL function is refused with ERR_CALL_IN_FUNCTION`,
  run: (ctx) => inFunction(ctx, call, what.replaceAll(' ', '-')),
  resolves: { ...REFUSED, inner: ['rejected', 'ERR_CALL_IN_FUNCTION'] },
}))

IN_FUNCTION.push(
  {
    name: "a live query's subscribe inside a SQL function: its subscriber gets ERR_CALL_IN_FUNCTION",
    run: (ctx) =>
      inFunction(
        ctx,
        (db) =>
          new Promise((resolve, reject) => {
            db.stream('SELECT 1 AS v').subscribe({ next: resolve, error: reject })
          }),
        'subscribe',
      ),
    resolves: { ...REFUSED, inner: ['rejected', 'ERR_CALL_IN_FUNCTION'] },
  },
  {
    name: 'tx.transaction inside a SQL function called in a transaction body is refused',
    run: async (ctx) => {
      const db = await ctx.fresh()
      let inner
      const outcome = await db
        .transaction(async (tx) => {
          db.function('nests', () => {
            inner = tx.transaction(async () => {})
            return 1
          })
          return tx.select('SELECT nests() AS v')
        })
        .catch((error) => [error.code, error.cause?.code])
      return [outcome, (await settled([inner]))[0]]
    },
    resolves: [
      ['ERR_FUNCTION_THREW', 'ERR_CALL_IN_FUNCTION'],
      ['rejected', 'ERR_CALL_IN_FUNCTION'],
    ],
  },
)

// Issue 43 item 5: a SAVEPOINT of the body's own, then a nested level that RELEASEs it (or rolls
// back to it) and throws: the level rejected, and its row committed. Savepoint statements are
// refused inside a body, as COMMIT is, and the transaction rolls back.
/** Runs `body` as a transaction on a fresh table; its outcome (the transaction's code and its
 * cause's) and the rows committed. */
async function savepointCase(ctx, body) {
  const db = await ctx.fresh()
  await db.execute('CREATE TABLE sp (v)')
  const outcome = await db.transaction(body).then(
    () => 'committed',
    (error) => [error.code, error.cause?.code],
  )
  return { outcome, rows: await db.select('SELECT v FROM sp ORDER BY v') }
}

const ROLLED_BACK = { outcome: ['ERR_TRANSACTION_ROLLED_BACK', 'ERR_TRANSACTION_CONTROL'], rows: [] }

const SAVEPOINTS = [
  ...['RELEASE x', 'ROLLBACK TO x'].map((end) => ({
    name: `SAVEPOINT x, then a nested level that runs ${end} and throws: nothing is committed`,
    run: (ctx) =>
      savepointCase(ctx, async (tx) => {
        await tx.execute('INSERT INTO sp VALUES (1)')
        await tx.execute('SAVEPOINT x').catch(() => {})
        await tx
          .transaction(async (inner) => {
            await inner.execute('INSERT INTO sp VALUES (2)')
            await inner.execute(end).catch(() => {})
            throw new Error('the nested level fails')
          })
          .catch(() => {})
      }),
    resolves: ROLLED_BACK,
  })),
  {
    name: "tx.execute('SAVEPOINT x') is refused with ERR_TRANSACTION_CONTROL",
    run: async (ctx) => {
      let refusal
      const result = await savepointCase(ctx, async (tx) => {
        await tx.execute('INSERT INTO sp VALUES (1)')
        refusal = await tx.execute('SAVEPOINT x').catch((error) => error)
      })
      return { ...result, refusal: [refusal.code, /nest one with tx\.transaction\(\)/.test(refusal.message)] }
    },
    resolves: { ...ROLLED_BACK, refusal: ['ERR_TRANSACTION_CONTROL', true] },
  },
  {
    name: 'a savepoint in a script inside a body is refused; nothing of the script commits',
    run: (ctx) =>
      savepointCase(ctx, (tx) => tx.execute('INSERT INTO sp VALUES (1); SAVEPOINT y; INSERT INTO sp VALUES (2)')),
    resolves: ROLLED_BACK,
  },
  {
    name: "tx.executeBatch('RELEASE x') is refused without naming the library's savepoint",
    run: async (ctx) => {
      let refusal
      const result = await savepointCase(ctx, async (tx) => {
        refusal = await tx.executeBatch('RELEASE x', [[]]).catch((error) => error)
      })
      return { ...result, code: refusal.code, namesLibrary: /resqlite_/i.test(refusal.message) }
    },
    resolves: { ...ROLLED_BACK, code: 'ERR_TRANSACTION_CONTROL', namesLibrary: false },
  },
  {
    name: 'a prepared SAVEPOINT run in a body is refused',
    run: async (ctx) => {
      const db = await ctx.fresh()
      await db.execute('CREATE TABLE sp (v)')
      const statement = await db.prepare('SAVEPOINT z')
      const outcome = await db
        .transaction(async (tx) => {
          await tx.execute('INSERT INTO sp VALUES (1)')
          await statement.execute()
        })
        .catch((error) => [error.code, error.cause?.code])
      return { outcome, rows: await db.select('SELECT v FROM sp') }
    },
    resolves: ROLLED_BACK,
  },
  {
    name: 'a nested level runs its own RELEASE: refused, nothing committed',
    run: (ctx) =>
      savepointCase(ctx, async (tx) => {
        await tx.execute('INSERT INTO sp VALUES (1)')
        await tx.transaction(async (inner) => inner.execute('RELEASE resqlite_sp1')).catch(() => {})
      }),
    resolves: ROLLED_BACK,
  },
  {
    name: 'a standalone executeBatch of a savepoint statement is refused (it runs in a transaction of its own)',
    run: (ctx) => ctx.db.executeBatch('SAVEPOINT b', [[]]),
    rejects: [ResqliteError, 'ERR_TRANSACTION_CONTROL', /executeBatch runs in a transaction of its own/],
  },
  {
    name: 'outside a body, a script that releases the savepoint it opens still runs',
    run: async (ctx) => {
      const db = await ctx.fresh()
      await db.execute('CREATE TABLE sp (v)')
      await db.execute('SAVEPOINT a; INSERT INTO sp VALUES (1); RELEASE a')
      return db.select('SELECT v FROM sp')
    },
    resolves: [{ v: 1 }],
  },
]

// Issue 43 item 5: a journal_mode change was accepted, and a write beside an open iteration then
// failed with SQLITE_BUSY.
const JOURNAL_MODE = [
  ...[
    ['execute', (db) => db.execute('PRAGMA journal_mode = DELETE')],
    ['a quoted mode, another case', (db) => db.execute("pragma JOURNAL_MODE = 'truncate'")],
    ['a schema-qualified one', (db) => db.execute('PRAGMA main.journal_mode = MEMORY')],
    ['a script', (db) => db.execute('CREATE TABLE jm (v); PRAGMA journal_mode = DELETE')],
    ['executeBatch', (db) => db.executeBatch('PRAGMA journal_mode = persist', [[]])],
    ['a transaction body', (db) => db.transaction((tx) => tx.execute('PRAGMA journal_mode = off'))],
  ].map(([where, run]) => ({
    name: `journal_mode changed away from WAL through ${where}: refused, the database stays in WAL`,
    run: async (ctx) => {
      const db = await ctx.fresh()
      const refusal = await run(db).then(
        () => 'accepted',
        (error) => error,
      )
      const { rows } = await db.execute('PRAGMA journal_mode')
      // A write beside an open iteration (it failed with SQLITE_BUSY out of WAL mode).
      await db.execute('CREATE TABLE IF NOT EXISTS w (v)')
      await db.execute('INSERT INTO w VALUES (1), (2)')
      const pages = db.iterate('SELECT v FROM w', [], { pageRows: 1 }).pages()
      await pages.next()
      const write = await db.execute('INSERT INTO w VALUES (3)')
      await pages.return()
      return [refusal.code, /PRAGMA journal_mode can only be WAL/.test(refusal.message), rows, write.changes]
    },
    resolves: ['ERR_JOURNAL_MODE', true, [{ journal_mode: 'wal' }], 1],
  })),
  {
    name: 'journal_mode = WAL, and reading the mode, are fine',
    run: async (ctx) => {
      const db = await ctx.fresh()
      await db.execute('PRAGMA journal_mode = wal')
      return (await db.execute('PRAGMA journal_mode')).rows
    },
    resolves: [{ journal_mode: 'wal' }],
  },
]

runCases([...CLOSE_RACES, ...IN_FUNCTION, ...SAVEPOINTS, ...JOURNAL_MODE], { label: 'close races and refusals' })

// Issue 43 item 5, the freeze: on an encrypted database, a function subscribing to a live query,
// called while rekey() runs, blocked the JS thread forever (here: called by a live query's first
// run on the JS thread, it did). A blocked thread cannot time itself out, so the scenario runs
// in a child process, killed if it does not finish.
const CHILD = fileURLToPath(new URL('./close-races-freeze-child.mjs', import.meta.url))

for (const mode of ['inline', 'threads']) {
  test(`a function subscribing to a live query around rekey() (${mode}): refused, nothing hangs`, () => {
    const child = spawnSync(process.execPath, [CHILD, mode], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(child.signal, null, `the child was killed (frozen): ${child.stderr}`)
    assert.equal(child.status, 0, child.stderr)
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1))
    // Every statement calling it fails with the refusal as cause; the writes added no row.
    assert.deepStrictEqual(result, {
      live: 'ERR_CALL_IN_FUNCTION',
      calls: 'ERR_CALL_IN_FUNCTION',
      rekeyed: true,
      rows: 200,
    })
  })
}
