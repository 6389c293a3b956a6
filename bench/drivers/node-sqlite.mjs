// node:sqlite (built into Node 24; synchronous, on the JS thread). Its StatementSync takes
// anonymous parameters as arguments only (`stmt.get(id)`): the lanes' array is spread.
import { DatabaseSync } from 'node:sqlite'

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export function open(path, options) {
  return openWith(DatabaseSync, `node ${process.version}`, path, options)
}

// The same driver over another module with node:sqlite's API (drivers/photostructure.mjs).
export async function openWith(DatabaseSync, library, path, { versions = true } = {}) {
  const db = new DatabaseSync(path)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
  // BEGIN / COMMIT / SAVEPOINT … are prepared once too (as better-sqlite3 does internally).
  const control = new Map()
  const ctl = (sql) => {
    if (!control.has(sql)) control.set(sql, db.prepare(sql))
    control.get(sql).run()
  }
  const tx = { run: (s, params) => s.run(params), get: (s, params) => s.get(params) }
  let depth = 0 // open transaction levels: 0 → BEGIN, deeper → SAVEPOINT (one transaction at a time)
  return {
    sync: true,
    versions: versions
      ? {
          library,
          sqlite: db.prepare('SELECT sqlite_version() AS v').get().v,
        }
      : undefined,
    exec: (sql) => db.exec(sql),
    prepare(sql) {
      const stmt = db.prepare(sql)
      return {
        all: (params) => stmt.all(...params),
        get: (params) => stmt.get(...params),
        iterate: (params) => stmt.iterate(...params),
        bytes: (params) => Buffer.from(JSON.stringify(stmt.all(...params))),
        run: (params) => stmt.run(...params),
        runBatch(paramSets) {
          ctl('BEGIN')
          try {
            for (const p of paramSets) stmt.run(...p)
            ctl('COMMIT')
          } catch (err) {
            ctl('ROLLBACK')
            throw err
          }
        },
      }
    },
    transaction(body) {
      return () => {
        const level = depth
        ctl(level ? `SAVEPOINT s${level}` : 'BEGIN')
        depth++
        try {
          const result = body(tx)
          ctl(level ? `RELEASE s${level}` : 'COMMIT')
          return result
        } catch (err) {
          ctl(level ? `ROLLBACK TO s${level}` : 'ROLLBACK')
          if (level) ctl(`RELEASE s${level}`)
          throw err
        } finally {
          depth--
        }
      }
    },
    // SQL functions in JavaScript (lanes/functions.mjs): node:sqlite's `start` is the
    // accumulator's value or a function, like the others'; its `result` is optional too.
    defineFunction: (name, fn, options) => db.function(name, options, fn),
    defineAggregate: (name, definition) => db.aggregate(name, definition),
    close: () => db.close(),
  }
}
