// @powersync/node (PowerSync's Node SDK used as a local SQLite database, no sync service):
// async; one writer and (by default) 5 reader worker_threads, each a better-sqlite3
// connection with the PowerSync extension loaded; results cross by structured clone.
//
// Its API takes SQL text only and its workers prepare every statement on each call (no
// statement reuse is exposed), so "prepare" here only binds the SQL text. It sets WAL on the
// writer itself; synchronous=NORMAL is set on every connection through initializeConnection.
import { createRequire } from 'node:module'
import { basename, dirname } from 'node:path'
import { Schema } from '@powersync/common'
import { PowerSyncDatabase } from '@powersync/node'

const require = createRequire(import.meta.url)

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export async function open(path, { versions = true } = {}) {
  const db = new PowerSyncDatabase({
    schema: new Schema({}), // no synced tables: the lanes use the generated tables as they are
    database: {
      dbFilename: basename(path),
      dbLocation: dirname(path),
      initializeConnection: (conn) => conn.execute('PRAGMA synchronous = NORMAL'),
    },
  })
  await db.init()
  // Writes and nested levels inside writeTransaction; levels below the first are SAVEPOINTs
  // (PowerSync transactions do not nest).
  let depth = 0
  const wrap = (t) => ({
    t,
    run: (s, params) => t.execute(s.sql, params),
    get: (s, params) => t.getOptional(s.sql, params),
  })
  const exec = async (sql) => {
    // One statement per call (its workers use better-sqlite3's prepare).
    for (const s of sql
      .split(';')
      .map((x) => x.trim())
      .filter(Boolean))
      await db.execute(s)
  }
  return {
    sync: false,
    versions: versions
      ? {
          library: require('@powersync/node/package.json').version,
          sqlite: (await db.get('SELECT sqlite_version() AS v')).v,
          powersync: (await db.get('SELECT powersync_rs_version() AS v')).v,
        }
      : undefined,
    exec,
    prepare(sql) {
      return {
        sql,
        all: (params) => db.getAll(sql, params),
        get: (params) => db.getOptional(sql, params),
        bytes: async (params) => Buffer.from(JSON.stringify(await db.getAll(sql, params))),
        run: (params) => db.execute(sql, params),
        runBatch: (paramSets) => db.executeBatch(sql, paramSets),
      }
    },
    transaction(body) {
      return async (parent) => {
        if (!parent) return db.writeTransaction((t) => body(wrap(t)))
        const name = `s${++depth}`
        await parent.t.execute(`SAVEPOINT ${name}`)
        try {
          const result = await body(wrap(parent.t))
          await parent.t.execute(`RELEASE ${name}`)
          return result
        } catch (err) {
          await parent.t.execute(`ROLLBACK TO ${name}`)
          await parent.t.execute(`RELEASE ${name}`)
          throw err
        } finally {
          depth--
        }
      }
    },
    live: watchLive(db),
    close: () => db.close(),
  }
}

// Live queries with PowerSync's own watched queries, throttling off (throttleMs: 0; its
// default waits 30 ms): db.customQuery(…).watch() re-runs the query whenever its writer reports
// a change to a table the query reads (found with EXPLAIN) and emits every result (its default
// comparator never calls two results equal). The query's execute is ours only to count the
// re-runs (the first run is not one).
function watchLive(db) {
  const counters = { requeries: 0, emissions: 0 }
  return {
    async watch(sql, params, _tables, onRows) {
      let ran = false
      const query = db
        .customQuery({
          compile: () => ({ sql, parameters: params }),
          execute: () => {
            if (ran) counters.requeries++
            ran = true
            return db.getAll(sql, params)
          },
        })
        .watch({ throttleMs: 0 })
      query.registerListener({
        onData: (rows) => {
          counters.emissions++
          onRows(rows)
        },
        onError: (err) => process.emitWarning(err),
      })
      return () => query.close()
    },
    write: (sql, params) => db.execute(sql, params),
    counters: () => ({ ...counters }),
  }
}
