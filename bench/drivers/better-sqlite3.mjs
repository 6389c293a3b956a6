// better-sqlite3 13 (synchronous, on the JS thread). Statements prepared once by the lanes.
// Parameters go in as arguments (`stmt.get(id)`), its documented form: the lanes' parameter
// array is spread into the call. It also takes an array (`stmt.get([id])`), which costs a
// little more (bench/experiments/bind-forms.mjs: ~3 % on a point get, ~7 % on an insert);
// the spread costs the same as calling with literal arguments.
import { createRequire } from 'node:module'
import { rerunEveryWatch } from './diy-live.mjs'

const require = createRequire(import.meta.url)
const Database = require('better-sqlite3')

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export async function open(path, { versions = true } = {}) {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  // (s: this driver's statement below, whose methods spread the parameters)
  const tx = { run: (s, params) => s.run(params), get: (s, params) => s.get(params) }
  return {
    sync: true,
    versions: versions
      ? {
          library: require('better-sqlite3/package.json').version,
          sqlite: db.prepare('SELECT sqlite_version() AS v').get().v,
        }
      : undefined,
    exec(sql) {
      db.exec(sql)
    },
    prepare(sql) {
      const stmt = db.prepare(sql)
      const batch = db.transaction((paramSets) => {
        for (const p of paramSets) stmt.run(...p)
      })
      return {
        all: (params) => stmt.all(...params),
        get: (params) => stmt.get(...params),
        iterate: (params) => stmt.iterate(...params),
        bytes: (params) => Buffer.from(JSON.stringify(stmt.all(...params))),
        run: (params) => stmt.run(...params),
        runBatch: (paramSets) => batch(paramSets),
      }
    },
    // Its own transaction functions: created once; called inside another one, they nest as a
    // SAVEPOINT (the enclosing tx argument is not needed).
    transaction: (body) => db.transaction(() => body(tx)),
    // Live queries, done yourself: every write re-runs every watched query and calls back.
    live: rerunEveryWatch(db, { all: (s, p) => s.all(...p), run: (s, p) => s.run(...p) }),
    // SQL functions in JavaScript (lanes/functions.mjs), its documented form.
    defineFunction: (name, fn, options) => db.function(name, options, fn),
    defineAggregate: (name, definition) => db.aggregate(name, definition),
    close: () => db.close(),
  }
}
