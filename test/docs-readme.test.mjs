// README.md is a contract: the promises of its examples and text that no other test file
// checked, each test naming the promise and the section it comes from.

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import * as sqliteVec from 'sqlite-vec'
import { Database } from '../dist/esm/index.mjs'
import { openDb, tempDir } from './helpers.mjs'
import { collect } from './live-helpers.mjs'

const T = { timeout: 20_000 }
const ROOT = fileURLToPath(new URL('..', import.meta.url))

async function until(predicate, ms = 5000) {
  const deadline = Date.now() + ms
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

describe('README Example', () => {
  test(
    "the Example's commented results: select, selectBytes, iterate, the live count and the CommonJS require",
    T,
    async (t) => {
      const db = await openDb(t)
      await db.execute('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT, stars REAL)')
      const counts = []
      const stop = db.stream('SELECT count(*) AS n FROM notes').subscribe(([row]) => counts.push(row.n))
      await until(() => counts.length === 1)
      await db.execute('INSERT INTO notes (title, stars) VALUES (?, ?)', ['Hello, SQLite', 4.5])
      assert.deepStrictEqual(await db.select('SELECT * FROM notes WHERE stars >= ?', [4]), [
        { id: 1, title: 'Hello, SQLite', stars: 4.5 },
      ])
      await until(() => counts.at(-1) === 1)
      const json = await db.selectBytes('SELECT id, title FROM notes')
      assert.ok(Buffer.isBuffer(json))
      assert.equal(json.toString(), '[{"id":1,"title":"Hello, SQLite"}]')
      const iterated = []
      for await (const note of db.iterate('SELECT * FROM notes')) iterated.push(note)
      assert.deepStrictEqual(iterated, [{ id: 1, title: 'Hello, SQLite', stars: 4.5 }])
      await db.transaction(async (tx) => {
        await tx.execute('UPDATE notes SET stars = stars + 1 WHERE id = ?', [1])
        await tx.execute('INSERT INTO notes (title, stars) VALUES (?, ?)', ['Second', 3])
      })
      await until(() => counts.at(-1) === 2)
      // "called now, then after every committed write that changes its result": 0, 1, 2 — the
      // transaction commits once.
      assert.deepStrictEqual(counts, [0, 1, 2])
      stop()
      const { Database: Required } = createRequire(import.meta.url)('../dist/cjs/index.js')
      assert.equal(typeof Required.open, 'function')
    },
  )

  test('"A longer example that runs as it is: examples/quickstart.mjs"', T, (t) => {
    const dir = tempDir(t)
    const copy = path.join(dir, 'quickstart.mjs')
    const source = fs.readFileSync(path.join(ROOT, 'examples/quickstart.mjs'), 'utf8')
    assert.ok(source.includes("from '../dist/esm/index.mjs'"))
    // Run as it is, but writing its database in a temporary directory rather than the clone.
    fs.writeFileSync(
      copy,
      source.replace("'../dist/esm/index.mjs'", JSON.stringify(path.join(ROOT, 'dist/esm/index.mjs'))),
    )
    const r = spawnSync(process.execPath, [copy], { encoding: 'utf8', timeout: 15_000 })
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /inserted row 1, then 2 more in one transaction/)
    assert.match(r.stdout, /stream → \{ n: 3/)
    assert.match(r.stdout, /stream → \{ n: 4/)
    assert.match(r.stdout, /diagnostics → 1 re-run/)
  })
})

describe('README RETURNING, array rows, column metadata', () => {
  test('the commented results of the three calls', T, async (t) => {
    const db = await openDb(t)
    await db.execute('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)')
    const { rows } = await db.execute('INSERT INTO users (name) VALUES (?) RETURNING id', ['ada'])
    assert.deepStrictEqual(rows, [{ id: 1 }])
    assert.deepStrictEqual(await db.select('SELECT 1 AS a, 2 AS a', [], { rowMode: 'array' }), {
      columns: ['a', 'a'],
      rows: [[1, 2]],
    })
    assert.deepStrictEqual(await db.columns('SELECT id, name FROM users'), [
      { name: 'id', declaredType: 'INTEGER' },
      { name: 'name', declaredType: 'TEXT' },
    ])
  })
})

describe('README Extensions and in-memory databases', () => {
  test(
    'the sqlite-vec example on \':memory:\': the live KNN query "re-runs after every insert into items"',
    T,
    async () => {
      const db = await Database.open(':memory:', { extensions: [sqliteVec.getLoadablePath()] })
      try {
        await db.execute('CREATE VIRTUAL TABLE items USING vec0(embedding float[3])')
        const query = Buffer.from(new Float32Array([1, 0, 0]).buffer)
        const c = collect(
          db.stream('SELECT rowid, distance FROM items WHERE embedding MATCH ? ORDER BY distance LIMIT 5', [query]),
        )
        assert.deepStrictEqual(await c.next(), [])
        await db.execute('INSERT INTO items (rowid, embedding) VALUES (?, ?)', [
          7,
          Buffer.from(new Float32Array([1, 0, 0]).buffer),
        ])
        const nearest = await c.next()
        assert.equal(nearest.length, 1)
        assert.equal(nearest[0].rowid, 7)
        assert.equal(nearest[0].distance, 0)
        // "SQL's load_extension() stays off"
        await assert.rejects(db.select("SELECT load_extension('x')"), /not authorized/)
      } finally {
        await db.close()
      }
    },
  )
})
