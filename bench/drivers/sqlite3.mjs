// sqlite3 (node-sqlite3: async, libuv thread pool, one connection). Statements prepared once;
// concurrent calls on one statement queue inside the library.
//
// Parameters go in as arguments before the callback (`stmt.all(id, cb)`): its Statement
// binds an array argument element by element through N-API `Get` calls and separate
// arguments directly (src/statement.cc, Statement::Bind), so arguments are its cheapest form;
// the difference is small beside the thread-pool round trip of every call.
import { createRequire } from 'node:module'
import { asyncTransactions } from './async-transactions.mjs'

const require = createRequire(import.meta.url)
const sqlite3 = require('sqlite3')

const call = (target, method, ...args) =>
  new Promise((resolve, reject) => target[method](...args, (err, res) => (err ? reject(err) : resolve(res))))

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export function open(path, options) {
  return openWith(sqlite3, require('sqlite3/package.json').version, path, options)
}

// The same driver over another module with sqlite3's API (drivers/resqlite-sqlite3.mjs).
export async function openWith(sqlite3, version, path, { versions = true } = {}) {
  const db = await new Promise((resolve, reject) => {
    const d = new sqlite3.Database(path, (err) => (err ? reject(err) : resolve(d)))
  })
  await call(db, 'exec', 'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
  const statements = []
  const prepareStmt = async (sql) => {
    const stmt = await new Promise((resolve, reject) => {
      const s = db.prepare(sql, (err) => (err ? reject(err) : resolve(s)))
    })
    statements.push(stmt)
    return stmt
  }
  // BEGIN / COMMIT / SAVEPOINT … are prepared once too.
  const control = new Map()
  const ctl = async (sql) => {
    if (!control.has(sql)) control.set(sql, await prepareStmt(sql))
    await call(control.get(sql), 'run')
  }
  // get = the first row of all(), everywhere: Statement#get leaves the statement un-reset (its
  // README says to reset or finalize it), which keeps the table locked (SQLITE_LOCKED) for a
  // later write on the connection; all() on the lanes' single-row lookups does the same SQLite
  // work (one row, then done) and resets.
  const tx = { run: (s, params) => s.run(params), get: (s, params) => s.get(params) }
  return {
    sync: false,
    versions: versions
      ? {
          library: version,
          sqlite: (await call(db, 'get', 'SELECT sqlite_version() AS v')).v,
        }
      : undefined,
    exec: (sql) => call(db, 'exec', sql),
    async prepare(sql) {
      const stmt = await prepareStmt(sql)
      return {
        all: (params) => call(stmt, 'all', ...params),
        get: async (params) => (await call(stmt, 'all', ...params))[0],
        bytes: async (params) => Buffer.from(JSON.stringify(await call(stmt, 'all', ...params))),
        run: (params) => call(stmt, 'run', ...params),
        // BEGIN; every set issued at once (queued on the statement); COMMIT when all are done.
        async runBatch(paramSets) {
          await ctl('BEGIN')
          try {
            await Promise.all(paramSets.map((p) => call(stmt, 'run', ...p)))
            await ctl('COMMIT')
          } catch (err) {
            await ctl('ROLLBACK')
            throw err
          }
        },
      }
    },
    // The body's calls are awaited one by one, so they run in order without db.serialize().
    transaction: asyncTransactions(ctl, tx),
    // Live queries, done yourself: the update hook ('change' event, once per changed row)
    // marks the watched queries on that table; they re-run once per event-loop turn.
    // (resqlite/sqlite3 emits no 'change' events: its live queries are resqlite's own.)
    live: sqlite3 === require('sqlite3') ? diyLive(db, prepareStmt) : undefined,
    async close() {
      for (const s of statements) await call(s, 'finalize')
      await call(db, 'close')
    },
  }
}

function diyLive(db, prepareStmt) {
  const watchers = new Set()
  const counters = { requeries: 0, emissions: 0 }
  const cache = new Map()
  const prepared = async (sql) => cache.get(sql) ?? cache.set(sql, await prepareStmt(sql)).get(sql)
  const dirty = new Set()
  let scheduled = false
  const rerun = async (w) => {
    const rows = await call(w.stmt, 'all', ...w.params)
    if (watchers.has(w)) {
      counters.emissions++
      w.onRows(rows)
    }
  }
  db.on('change', (_type, _db, table) => {
    for (const w of watchers) if (w.tables.includes(table)) dirty.add(w)
    if (scheduled || dirty.size === 0) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      for (const w of dirty) {
        counters.requeries++
        rerun(w)
      }
      dirty.clear()
    })
  })
  return {
    async watch(sql, params, tables, onRows) {
      const w = { stmt: await prepared(sql), params, tables, onRows }
      watchers.add(w)
      await rerun(w)
      return () => watchers.delete(w)
    },
    async write(sql, params) {
      return call(await prepared(sql), 'run', ...params)
    },
    counters: () => ({ ...counters }),
  }
}
