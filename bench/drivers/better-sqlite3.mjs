// better-sqlite3 13 (synchronous, on the JS thread). Statements prepared once by the lanes.
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const Database = require('better-sqlite3-13')

export async function open(path) {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  return {
    sync: true,
    versions: {
      library: require('better-sqlite3-13/package.json').version,
      sqlite: db.prepare('SELECT sqlite_version() AS v').get().v,
    },
    prepare(sql) {
      const stmt = db.prepare(sql)
      return {
        all: (params) => stmt.all(params),
        get: (params) => stmt.get(params),
        bytes: (params) => Buffer.from(JSON.stringify(stmt.all(params))),
      }
    },
    close: () => db.close(),
  }
}
