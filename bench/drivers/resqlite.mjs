// resqlite, default options. It caches statements itself, so "prepare" only binds the SQL text.
// Which build: this repository's (dist/ + native/), or RESQLITE_ROOT (the A/B tool and the
// slowed-build demonstration point it at another checkout's build).
import { copyFileSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = process.env.RESQLITE_ROOT
  ? resolve(process.env.RESQLITE_ROOT)
  : fileURLToPath(new URL('../..', import.meta.url))
const { Database } = await import(pathToFileURL(join(root, 'dist/esm/index.mjs')).href)

// options: Database.open's, plus the suite's own `versions: false` (lanes/tenants.mjs: no
// version query on each of many databases, whose open it times).
// RESQLITE_BENCH_INLINE_BUDGET (ms): the `inlineBudget` option, for runs under callgrind
// (ab.mjs --callgrind), where everything runs so much slower that small work overruns the default.
// RESQLITE_BENCH_SYNCHRONOUS: the `synchronous` option ('full'), for what durability costs
// (docs/api.md "Durability").
// RESQLITE_BENCH_TRACE=1: a subscriber that does nothing on every event of the tracing channels
// (docs/tracing.md), for what listening costs (ab.mjs --subscribe, experiments/071).
const inlineBudget = process.env.RESQLITE_BENCH_INLINE_BUDGET
const synchronous = process.env.RESQLITE_BENCH_SYNCHRONOUS
if (process.env.RESQLITE_BENCH_TRACE === '1') {
  const { tracingChannel } = await import('node:diagnostics_channel')
  const nothing = () => {}
  for (const name of ['query', 'transaction', 'open', 'close']) {
    tracingChannel(`resqlite:${name}`).subscribe({
      start: nothing,
      end: nothing,
      asyncStart: nothing,
      asyncEnd: nothing,
      error: nothing,
    })
  }
}

export async function open(path, { versions = true, ...options } = {}) {
  const db = await Database.open(path, {
    ...(inlineBudget && { inlineBudget: Number(inlineBudget) }),
    ...(synchronous && { synchronous }),
    ...options,
  })
  // The lanes' view of a resqlite transaction: its statements run through tx.execute / tx.selectOne.
  // A statement from db.prepare runs in the transaction through the body's async context.
  const wrap = (t) => ({
    t,
    run: (s, params) => (s.statement ? s.statement.execute(params) : t.execute(s.sql, params)),
    get: (s, params) => (s.statement ? s.statement.selectOne(params) : t.selectOne(s.sql, params)),
  })
  return {
    sync: false,
    versions: versions
      ? {
          library: JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version,
          sqlite: (await db.selectOne('SELECT sqlite_version() AS v')).v,
        }
      : undefined,
    exec: (sql) => db.execute(sql),
    // { statement: true }: a db.prepare() Statement (the narrow-table lanes, lanes/statements.mjs);
    // otherwise SQL text given to each call.
    async prepare(sql, options) {
      if (options?.statement) {
        const statement = await db.prepare(sql)
        return {
          sql,
          statement,
          all: (params) => statement.select(params),
          get: (params) => statement.selectOne(params),
          iterate: (params) => statement.iterate(params),
          bytes: (params) => statement.selectBytes(params),
          run: (params) => statement.execute(params),
          runBatch: (paramSets) => statement.executeBatch(paramSets),
        }
      }
      return {
        sql,
        all: (params) => db.select(sql, params),
        get: (params) => db.selectOne(sql, params),
        iterate: (params) => db.iterate(sql, params),
        bytes: (params) => db.selectBytes(sql, params),
        run: (params) => db.execute(sql, params),
        runBatch: (paramSets) => db.executeBatch(sql, paramSets),
      }
    },
    // Called with the enclosing lane tx, it nests: tx.transaction(…) (a SAVEPOINT).
    transaction(body) {
      return (parent) => (parent ? parent.t : db).transaction((t) => body(wrap(t)))
    },
    // The scenarios' live view (lanes/live.mjs, feed.live): the query as a db.stream.
    liveView: (stmt, params) => streamView(db, stmt.sql, params),
    // The live-query lanes (lanes/live-queries.mjs).
    live: {
      watch: (sql, params, _tables, onRows) => db.stream(sql, params).subscribe(onRows),
      write: (sql, params) => db.execute(sql, params),
      counters: async () => (await db.diagnostics()).streams,
    },
    // SQL functions in JavaScript (lanes/functions.mjs).
    defineFunction: (name, fn, options) => db.function(name, fn, options),
    defineAggregate: (name, definition) => db.aggregate(name, definition),
    close: () => db.close(),
    // resqlite-only lanes (encryption): the database file, and other databases opened here.
    path,
    Database,
    /** An encrypted copy of this database (made with rekey), opened with `options`. */
    async encryptedCopy(copyPath, options) {
      copyFileSync(path, copyPath)
      const plain = await Database.open(copyPath, { readers: 1 })
      await plain.rekey(options.encryptionKey, { cipher: options.cipher })
      await plain.close()
      return open(copyPath, options)
    },
  }
}

// A db.stream kept as the scenarios' live view: { kind, rows(), written(shows),
// expectPerSample(writes), close() } (lanes/live.mjs). The engine re-runs the query after a
// committed write that touched what it reads and delivers rows only when they changed, so
// "the next delivery" cannot tell when a write is shown (an unchanged result never arrives;
// a delivery may be a re-run of an older state): written(shows) resolves at the first rows,
// the current ones included, for which the lane's shows(rows) says its write is visible.
async function streamView(db, sql, params) {
  let current
  let waiters = []
  let first
  const ready = new Promise((resolve, reject) => (first = { resolve, reject }))
  const stop = db.stream(sql, params).subscribe(
    (rows) => {
      current = rows
      first.resolve()
      waiters = waiters.filter((w) => (w.shows(rows) ? (w.resolve(), false) : true))
    },
    (err) => {
      first.reject(err)
      for (const w of waiters.splice(0)) w.reject(err)
    },
  )
  await ready
  return {
    kind: 'db.stream',
    rows: () => current,
    written(shows) {
      if (typeof shows !== 'function')
        throw new Error('a stream view needs written(shows): it cannot know which delivery shows a write')
      if (shows(current)) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out: no delivery of ${sql} showed the write`)), 10_000)
        waiters.push({
          shows,
          resolve: () => (clearTimeout(timer), resolve()),
          reject: (e) => (clearTimeout(timer), reject(e)),
        })
      })
    },
    // The re-runs happen in the engine: the lane's sample issues no extra statement.
    expectPerSample: () => ({ ops: 0 }),
    close: () => stop(),
  }
}
