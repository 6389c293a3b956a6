// RxJS interop: `from(live)` works through Symbol.observable / '@@observable' without resqlite
// depending on RxJS.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { firstValueFrom, from, take, toArray } from 'rxjs'

import { openDb } from './helpers.mjs'

test('from(db.stream(…)) emits the rows and each change, and unsubscribing stops the query', async (t) => {
  const db = await openDb(t)
  await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a')")
  const observable = from(db.stream('SELECT v FROM t ORDER BY id'))
  const two = firstValueFrom(observable.pipe(take(2), toArray()))
  // the first emission arrives, then the write produces the second
  await new Promise((resolve) => setTimeout(resolve, 20))
  await db.execute("INSERT INTO t (v) VALUES ('b')")
  assert.deepEqual(await two, [[{ v: 'a' }], [{ v: 'a' }, { v: 'b' }]])
  // take(2) unsubscribed: no live query remains
  const { streams } = await db.diagnostics()
  assert.equal(streams.active, 0)
  assert.equal(streams.queries, 0)
})

test('an error of the first run reaches the RxJS error channel', async (t) => {
  const db = await openDb(t)
  await assert.rejects(
    firstValueFrom(from(db.stream('SELECT * FROM missing'))),
    (e) => e.code === 'SQLITE_ERROR' && /no such table/.test(e.message),
  )
})
