// The `replica: true` open option (docs/api.md, docs/replication.md) on a plain file, without a
// replication engine: another process stands in for the one that applies the primary's commits.

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'
import { collect, sleep } from './live-helpers.mjs'

const T = { timeout: 60_000 }
const INDEX = fileURLToPath(new URL('../dist/esm/index.mjs', import.meta.url))

/** Commits `sql` from another Node process. */
function commitElsewhere(file, sql) {
  const source = `import { Database } from ${JSON.stringify(INDEX)}
    const db = await Database.open(process.env.FILE)
    await db.execute(process.env.SQL)
    await db.close()`
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', source],
      { env: { ...process.env, FILE: file, SQL: sql }, timeout: 30_000 },
      (error, _out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve()),
    )
  })
}

async function makeFile(t) {
  const file = path.join(tempDir(t), 'replica.db')
  const db = await Database.open(file)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await db.execute("INSERT INTO t (v) VALUES ('first')")
  await db.close()
  return file
}

test(
  'replica: true opens read-only; every write and rekey rejects with ERR_DATABASE_REPLICA and changes nothing',
  T,
  async (t) => {
    const file = await makeFile(t)
    const db = await Database.open(file, { replica: true })
    t.after(() => db.close())
    assert.equal(db.readonly, true)
    const says = /read replica \(opened with replica: true\)/
    await expectReject(
      () => db.execute("INSERT INTO t (v) VALUES ('x')"),
      ResqliteError,
      'ERR_DATABASE_REPLICA',
      says,
      /write on the primary/,
    )
    await expectReject(
      () => db.executeBatch('DELETE FROM t WHERE id = ?', [[1]]),
      ResqliteError,
      'ERR_DATABASE_REPLICA',
      says,
    )
    await expectReject(
      () => db.transaction(async (tx) => tx.execute('DELETE FROM t')),
      ResqliteError,
      'ERR_DATABASE_REPLICA',
      says,
    )
    await expectReject(() => db.rekey('a key'), ResqliteError, 'ERR_DATABASE_REPLICA', says, /rekey the primary/)
    // Reads are refused their writes too (as on any database), and nothing changed.
    await expectReject(() => db.select("INSERT INTO t (v) VALUES ('x')"), ResqliteError, 'ERR_NOT_READ_ONLY')
    assert.deepEqual(await db.select('SELECT * FROM t'), [{ id: 1, v: 'first' }])
  },
)

test("replica: true refuses readonly: false beside it, a non-boolean, and ':memory:'", T, async (t) => {
  const file = path.join(tempDir(t), 'never.db')
  await expectReject(
    () => Database.open(file, { replica: true, readonly: false }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    /contradicts/,
  )
  await expectReject(() => Database.open(file, { replica: 'yes' }), TypeError, 'ERR_INVALID_ARG_TYPE', /replica/)
  await expectReject(() => Database.open(':memory:', { replica: true }), ResqliteError, 'ERR_INVALID_PATH')
  const ro = await makeFile(t)
  const db = await Database.open(ro, { replica: true, readonly: true }) // agreeing: fine
  await db.close()
})

test(
  'replica: true watches for external commits by default; watchExternalChanges: false turns it off',
  T,
  async (t) => {
    const file = await makeFile(t)
    const db = await Database.open(file, { replica: true })
    t.after(() => db.close())
    const off = await Database.open(file, { replica: true, watchExternalChanges: false })
    t.after(() => off.close())
    const live = collect(db.stream('SELECT count(*) AS n FROM t'))
    const still = collect(off.stream('SELECT count(*) AS n FROM t'))
    assert.deepEqual(await live.next(), [{ n: 1 }])
    assert.deepEqual(await still.next(), [{ n: 1 }])
    await commitElsewhere(file, "INSERT INTO t (v) VALUES ('second')")
    await live.waitFor((c) => c.last?.[0]?.n === 2, 'the replica live query after the other process committed')
    await sleep(500)
    assert.equal(still.deliveries.length, 1, 'with watchExternalChanges: false nothing re-ran')
    assert.deepEqual(await off.select('SELECT count(*) AS n FROM t'), [{ n: 2 }], 'a fresh read sees the commit')
    live.stop()
    still.stop()
  },
)
