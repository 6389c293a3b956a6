// resqlite/sqlite3 against the real sqlite3 (bench/node_modules/sqlite3): one seeded random
// program of writes, reads, transactions and savepoints sent as SQL, constraint errors and
// prepared statements, run through both in serialize mode; every callback's results (rows,
// lastID, changes, error code) must be the same.

import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { prng } from './helpers.mjs'

const require = createRequire(import.meta.url)
const resqlite3 = require('../dist/cjs/sqlite3.js')
const realPath = new URL('../bench/node_modules/sqlite3', import.meta.url).pathname
const real = existsSync(realPath) ? require(realPath) : undefined

const dir = mkdtempSync(join(tmpdir(), 'resqlite-sqlite3-diff-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** The program: a list of [method, sql, params]. Transaction statements stay balanced. */
function program(seed, length) {
  const rand = prng(seed) // the same program for both modules
  const pick = (n) => Math.floor(rand() * n)
  const steps = [['run', 'CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER UNIQUE, v TEXT)', []]]
  let depth = 0
  for (let i = 0; i < length; i++) {
    const r = pick(14)
    const k = pick(40)
    if (r < 4) steps.push(['run', 'INSERT INTO t (k, v) VALUES (?, ?)', [k, `v${i}`]])
    else if (r === 4) steps.push(['run', 'UPDATE t SET v = ? WHERE k < ?', [`u${i}`, k]])
    else if (r === 5) steps.push(['run', 'DELETE FROM t WHERE k = $k', [{ $k: k }]])
    else if (r === 6) steps.push(['get', 'SELECT count(*) AS n, sum(k) AS s FROM t', []])
    else if (r === 7) steps.push(['all', 'SELECT k, v FROM t WHERE k >= ? ORDER BY k', [k]])
    else if (r === 8) steps.push(['stmt', 'SELECT v FROM t WHERE k = ?', [k]])
    else if (r === 9 && depth === 0) {
      steps.push(['run', pick(2) ? 'BEGIN' : 'BEGIN IMMEDIATE', []])
      depth = 1
    } else if (r === 10 && depth > 0) {
      steps.push(['run', `SAVEPOINT s${depth}`, []])
      depth++
    } else if (r === 11 && depth > 1) {
      depth--
      steps.push(['run', pick(2) ? `RELEASE s${depth}` : `ROLLBACK TO s${depth}`, []])
      if (steps.at(-1)[1].startsWith('ROLLBACK')) steps.push(['run', `RELEASE s${depth}`, []])
    } else if (r === 12 && depth > 0) {
      steps.push(['run', pick(2) ? 'COMMIT' : 'ROLLBACK', []])
      depth = 0
    } else steps.push(['run', 'INSERT INTO t (k, v) VALUES (?, ?)', [k, null]])
  }
  if (depth > 0) steps.push(['run', 'COMMIT', []])
  steps.push(['all', 'SELECT * FROM t ORDER BY id', []])
  return steps
}

async function runProgram(sqlite3, steps, path) {
  const db = await new Promise((resolve, reject) => {
    const d = new sqlite3.Database(path, (e) => (e ? reject(e) : resolve(d)))
  })
  const results = []
  await new Promise((resolve) => {
    db.serialize(() => {
      for (const [method, sql, params] of steps) {
        const record = function (err, value) {
          results.push(
            err
              ? { sql, error: err.code }
              : { sql, value, ...(method === 'run' ? { lastID: this.lastID, changes: this.changes } : {}) },
          )
        }
        if (method === 'stmt') {
          const stmt = db.prepare(sql)
          stmt.get(...params, record)
          stmt.finalize()
        } else db[method](sql, ...params, record)
      }
      db.close(resolve)
    })
  })
  return results
}

test('a seeded program gives the same callback results through resqlite/sqlite3 and sqlite3', {
  skip: real === undefined && 'bench/node_modules/sqlite3 is not installed',
  timeout: 60_000,
}, async () => {
  for (const seed of [1, 2, 3]) {
    const steps = program(seed, 300)
    const expected = await runProgram(real, steps, join(dir, `real-${seed}.db`))
    const actual = await runProgram(resqlite3, steps, join(dir, `resqlite-${seed}.db`))
    assert.ok(
      expected.some((r) => r.error === 'SQLITE_CONSTRAINT'),
      'the program hits constraint errors',
    )
    assert.deepEqual(actual, expected, `seed ${seed}`)
  }
})
