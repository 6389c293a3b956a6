// resqlite, default options. It caches statements itself, so "prepare" only binds the SQL text.
// Which build: this repository's (dist/ + native/), or RESQLITE_ROOT (the A/B tool and the
// slowed-build demonstration point it at another checkout's build).
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = process.env.RESQLITE_ROOT ? resolve(process.env.RESQLITE_ROOT) : fileURLToPath(new URL('../..', import.meta.url))
const { Database } = await import(pathToFileURL(join(root, 'dist/esm/index.mjs')).href)

export async function open(path) {
  const db = await Database.open(path)
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  // The lanes' view of a resqlite transaction: its statements run through tx.execute / tx.selectOne.
  const wrap = (t) => ({ t, run: (s, params) => t.execute(s.sql, params), get: (s, params) => t.selectOne(s.sql, params) })
  return {
    sync: false,
    versions: {
      library: pkg.version,
      sqlite: (await db.selectOne('SELECT sqlite_version() AS v')).v,
    },
    exec: (sql) => db.execute(sql),
    prepare(sql) {
      return {
        sql,
        all: (params) => db.select(sql, params),
        get: (params) => db.selectOne(sql, params),
        bytes: (params) => db.selectBytes(sql, params),
        run: (params) => db.execute(sql, params),
        runBatch: (paramSets) => db.executeBatch(sql, paramSets),
      }
    },
    // Called with the enclosing lane tx, it nests: tx.transaction(…) (a SAVEPOINT).
    transaction(body) {
      return (parent) => (parent ? parent.t : db).transaction((t) => body(wrap(t)))
    },
    // live(stmt, params): not yet — the scenarios re-run queries after writes (lanes/live.mjs)
    // until db.stream lands; it then plugs in here.
    close: () => db.close(),
  }
}
