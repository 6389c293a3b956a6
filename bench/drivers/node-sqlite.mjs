// node:sqlite (built into Node 24; synchronous, on the JS thread).
import { DatabaseSync } from 'node:sqlite'

export async function open(path) {
  const db = new DatabaseSync(path)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
  return {
    sync: true,
    versions: {
      library: `node ${process.version}`,
      sqlite: db.prepare('SELECT sqlite_version() AS v').get().v,
    },
    prepare(sql) {
      const stmt = db.prepare(sql)
      return {
        all: (params) => stmt.all(...params),
        get: (params) => stmt.get(...params),
        bytes: (params) => Buffer.from(JSON.stringify(stmt.all(...params))),
      }
    },
    close: () => db.close(),
  }
}
