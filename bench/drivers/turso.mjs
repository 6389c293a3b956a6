// @tursodatabase/database (Turso: the Rust rewrite of SQLite), its promise API: async calls,
// but each steps the statement on the JS thread (Statement#get/all/run loop over the native
// stepSync, awaiting only its I/O), one call at a time per connection (an internal lock).
// Statements prepared once; transaction control (BEGIN, COMMIT, SAVEPOINT sN, …) prepared once
// too, run on the connection, as the sqlite3 driver does. Not its transactionAsync(): that
// hands the body a Transaction whose statements must be prepared from it, i.e. again in every
// transaction (statements of the Database wait for the transaction's end), and the lanes run
// one transaction at a time, so nothing else can step into one.
//
// Parameters go in as one array (`stmt.get([id])`): its bind takes a single array argument
// as the positional list (database-common bind.js); separate arguments are collected into
// that array first.
import { readFileSync } from 'node:fs'
import { connect } from '@tursodatabase/database'
import { asyncTransactions } from './async-transactions.mjs'

// (its package.json is not in its exports map)
export const version = JSON.parse(
  readFileSync(new URL('../node_modules/@tursodatabase/database/package.json', import.meta.url), 'utf8'),
).version

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export async function open(path, { versions = true } = {}) {
  const db = await connect(path)
  await db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
  const control = new Map()
  const ctl = (sql) => {
    if (!control.has(sql)) control.set(sql, db.prepare(sql))
    return control.get(sql).run()
  }
  // (s: this driver's statement below, whose calls are queued)
  const tx = { run: (s, params) => s.run(params), get: (s, params) => s.get(params) }
  return {
    sync: false,
    versions: versions
      ? { library: version, sqlite: (await db.prepare('SELECT sqlite_version() AS v').get()).v }
      : undefined,
    exec: (sql) => db.exec(sql),
    prepare(sql) {
      const stmt = db.prepare(sql)
      // Calls on one statement wait for the one before: its run/get/all bind their parameters
      // before they take the connection's lock, so two in flight on one statement can step
      // with the other's (insert-concurrent: "UNIQUE constraint failed"; upstream: open issue
      // tursodatabase/turso#7794). The connection runs one call at a time anyway, so this takes
      // no concurrency away.
      let tail = Promise.resolve()
      const serial = (call) => {
        const p = tail.then(call)
        tail = p.catch(() => {})
        return p
      }
      return {
        all: (params) => serial(() => stmt.all(params)),
        get: (params) => serial(() => stmt.get(params)),
        bytes: async (params) => Buffer.from(JSON.stringify(await serial(() => stmt.all(params)))),
        run: (params) => serial(() => stmt.run(params)),
        // BEGIN; the sets one after another (the connection runs one call at a time); COMMIT.
        async runBatch(paramSets) {
          await ctl('BEGIN')
          try {
            for (const p of paramSets) await serial(() => stmt.run(p))
            await ctl('COMMIT')
          } catch (err) {
            await ctl('ROLLBACK')
            throw err
          }
        },
      }
    },
    transaction: asyncTransactions(ctl, tx),
    close: () => db.close(),
  }
}
