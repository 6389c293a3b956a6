// docs/live-queries.md is a contract: the promises of the page that no other test file
// checked, each test naming the promise and the section it comes from.

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database } from '../dist/esm/index.mjs'
import { openDb, tempDir } from './helpers.mjs'
import { assertQuiet, collect, sleep, waitCounters } from './live-helpers.mjs'

const T = { timeout: 20_000 }
const ESM = fileURLToPath(new URL('../dist/esm/index.mjs', import.meta.url))

describe('live-queries.md Sharing and delivery', () => {
  test('"[], {} and no parameters are the same": one shared native query', T, async (t) => {
    const db = await openDb(t)
    await db.execute('CREATE TABLE t (v)')
    const sql = 'SELECT count(*) AS n FROM t'
    const cs = [collect(db.stream(sql)), collect(db.stream(sql, [])), collect(db.stream(sql, {}))]
    for (const c of cs) await c.until([{ n: 0 }])
    const d = (await db.diagnostics()).streams
    assert.equal(d.active, 3)
    assert.equal(d.queries, 1)
    await db.execute('INSERT INTO t VALUES (1)')
    for (const c of cs) await c.until([{ n: 1 }])
  })

  test(
    '"The key is the SQL text and each parameter\'s type and value": a different value or SQL text is another query',
    T,
    async (t) => {
      const db = await openDb(t)
      const cs = [
        collect(db.stream('SELECT ? AS v', [1])),
        collect(db.stream('SELECT ? AS v', [2])),
        collect(db.stream('SELECT ?  AS v', [1])),
        collect(db.stream('SELECT ? AS v', [1])),
      ]
      await Promise.all(cs.map((c) => c.next()))
      assert.deepStrictEqual(
        cs.map((c) => c.last),
        [[{ v: 1 }], [{ v: 2 }], [{ v: 1 }], [{ v: 1 }]],
      )
      assert.equal((await db.diagnostics()).streams.queries, 3)
    },
  )

  test('"its rows are delivered after subscribe() returns", on the JS thread and on a reader alike', T, async (t) => {
    for (const inlineBudget of [0.1, 0]) {
      const db = await openDb(t, { inlineBudget })
      let returned = false
      let deliveredBeforeReturn = false
      let got
      const stop = db.stream('SELECT 1 AS x').subscribe((rows) => {
        deliveredBeforeReturn = !returned
        got = rows
      })
      returned = true
      await waitCounters(db, (s) => s.emissions >= 1, 'the first delivery')
      await sleep(10)
      assert.deepStrictEqual(got, [{ x: 1 }], `inlineBudget ${inlineBudget}`)
      assert.equal(deliveredBeforeReturn, false, `inlineBudget ${inlineBudget}: delivered inside subscribe()`)
      stop()
    }
  })
})

describe('live-queries.md Where they run', () => {
  test(
    '"Live queries read on the readers, outside any transaction, and see committed data only": one subscribed inside a body',
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE t (v)')
      let c
      await db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)')
        c = collect(db.stream('SELECT count(*) AS n FROM t'))
        const first = await c.next()
        assert.deepStrictEqual(first, [{ n: 0 }], "the open transaction's write is not seen")
      })
      await c.until([{ n: 1 }])
    },
  )

  test('"An active subscription keeps the process alive … Unsubscribe or close() to let it exit"', T, (t) => {
    const dir = tempDir(t)
    const script = path.join(dir, 'child.mjs')
    fs.writeFileSync(
      script,
      `import { Database } from ${JSON.stringify(ESM)}
const db = await Database.open(${JSON.stringify(path.join(dir, 'c.db'))})
const started = Date.now()
const stop = db.stream('SELECT 1 AS x').subscribe(() => {})
// Nothing else keeps the event loop alive: an unref'd timer ends the subscription.
setTimeout(() => { console.log('stopping after', Date.now() - started); stop() }, 400).unref()
process.on('exit', () => console.log('exit after', Date.now() - started))
`,
    )
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 10_000 })
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trim().split('\n')
    assert.match(lines[0] ?? '', /^stopping after \d+/, `the subscription kept the process alive: ${r.stdout}`)
    assert.match(lines[1] ?? '', /^exit after \d+/, `the process exited after unsubscribing: ${r.stdout}`)
  })
})

describe('live-queries.md Changes from other processes', () => {
  test(
    'watchExternalChanges: true (the default interval of 1,000 ms) re-runs a live query after another connection commits',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'w.db')
      const db = await Database.open(file, { watchExternalChanges: true })
      t.after(() => db.close())
      await db.execute('CREATE TABLE t (v)')
      const other = await Database.open(file, { readers: 1 })
      t.after(() => other.close())
      const c = collect(db.stream('SELECT count(*) AS n FROM t'))
      await c.until([{ n: 0 }])
      const t0 = performance.now()
      await other.execute('INSERT INTO t VALUES (1)')
      await c.until([{ n: 1 }], 6000)
      const ms = performance.now() - t0
      // The default interval is 1,000 ms: seen well before 5 s even on a loaded machine.
      assert.ok(ms < 4000, `seen after ${ms.toFixed(0)} ms`)
    },
  )

  test(
    '"Results are still compared by hash": an outside commit that does not change the result delivers nothing',
    T,
    async (t) => {
      const dir = tempDir(t)
      const file = path.join(dir, 'h.db')
      const db = await Database.open(file, { watchExternalChanges: { interval: 20 } })
      t.after(() => db.close())
      await db.execute('CREATE TABLE t (v); CREATE TABLE other_table (v)')
      const other = await Database.open(file, { readers: 1 })
      t.after(() => other.close())
      const c = collect(db.stream('SELECT count(*) AS n FROM t'))
      await c.until([{ n: 0 }])
      const before = (await db.diagnostics()).streams
      await other.execute('INSERT INTO other_table VALUES (1)')
      await waitCounters(db, (s) => s.requeries > before.requeries, 'the re-run after the outside commit')
      await assertQuiet(c)
      assert.equal(c.deliveries.length, 1)
      const after = (await db.diagnostics()).streams
      assert.ok(after.unchangedSuppressed > before.unchangedSuppressed)
    },
  )
})
