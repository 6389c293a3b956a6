// libsql (npm `libsql`: Turso's better-sqlite3-compatible native binding, synchronous, on the
// JS thread). Statements prepared once by the lanes; transactions through its own
// db.transaction(), created once like better-sqlite3's.
//
// Parameters go in as one array (`stmt.get([id])`): its Statement methods take
// `...bindParameters` and hand a single array (an object) straight to the native call, while
// separate arguments are copied by `bindParameters.flat()` first (libsql/index.js), so the
// array is its cheapest form (bench/experiments/bind-forms.mjs: the two within noise).

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { rerunEveryWatch } from './diy-live.mjs'

const require = createRequire(import.meta.url)
const Database = require('libsql')

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export async function open(path, { versions = true } = {}) {
  const db = new Database(path)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
  const tx = { run: (s, params) => s.run(params), get: (s, params) => s.get(params) }
  // libsql's db.transaction() does not nest (no savepoints): inner levels use SAVEPOINT
  // statements, prepared once.
  const control = new Map()
  const ctl = (sql) => {
    if (!control.has(sql)) control.set(sql, db.prepare(sql))
    control.get(sql).run()
  }
  let depth = 0
  return {
    sync: true,
    versions: versions
      ? {
          // its package.json is not in its exports map
          library: JSON.parse(readFileSync(new URL('../node_modules/libsql/package.json', import.meta.url), 'utf8'))
            .version,
          sqlite: db.prepare('SELECT sqlite_version() AS v').get().v,
        }
      : undefined,
    exec: (sql) => db.exec(sql),
    prepare(sql) {
      const stmt = db.prepare(sql)
      const batch = db.transaction((paramSets) => {
        for (const p of paramSets) stmt.run(p)
      })
      return {
        all: (params) => stmt.all(params),
        get: (params) => stmt.get(params),
        bytes: (params) => Buffer.from(JSON.stringify(stmt.all(params))),
        run: (params) => stmt.run(params),
        runBatch: (paramSets) => batch(paramSets),
      }
    },
    transaction(body) {
      const outer = db.transaction(() => {
        depth++
        try {
          return body(tx)
        } finally {
          depth--
        }
      })
      return () => {
        if (depth === 0) return outer()
        const name = `s${depth}`
        ctl(`SAVEPOINT ${name}`)
        depth++
        try {
          const result = body(tx)
          ctl(`RELEASE ${name}`)
          return result
        } catch (err) {
          ctl(`ROLLBACK TO ${name}`)
          ctl(`RELEASE ${name}`)
          throw err
        } finally {
          depth--
        }
      }
    },
    // Live queries, done yourself as with better-sqlite3 (same API): every write re-runs
    // every watched query and calls back.
    live: rerunEveryWatch(db, { all: (s, p) => s.all(p), run: (s, p) => s.run(p) }),
    close: () => db.close(),
  }
}
