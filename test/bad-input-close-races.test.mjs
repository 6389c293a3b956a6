// Bad input (issue 43, items 3 and 5): calls left pending by close(). Harness and case format:
// bad-input-harness.mjs.

import assert from 'node:assert/strict'
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

runCases(CLOSE_RACES, { label: 'close races and refusals' })
