// resqlite (this repository's build: dist/ + native/), default options. It caches statements
// itself, so "prepare" only binds the SQL text.
import { readFileSync } from 'node:fs'
import { Database } from '../../dist/esm/index.mjs'

export async function open(path) {
  const db = await Database.open(path)
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  return {
    sync: false,
    versions: {
      library: pkg.version,
      sqlite: (await db.selectOne('SELECT sqlite_version() AS v')).v,
    },
    prepare(sql) {
      return {
        all: (params) => db.select(sql, params),
        get: (params) => db.selectOne(sql, params),
        bytes: (params) => db.selectBytes(sql, params),
      }
    },
    close: () => db.close(),
  }
}
