// sqlite3 (node-sqlite3: async, libuv thread pool, one connection). Statements prepared once;
// concurrent calls on one statement queue inside the library.
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const sqlite3 = require('sqlite3')

const call = (target, method, ...args) =>
  new Promise((resolve, reject) => target[method](...args, (err, res) => (err ? reject(err) : resolve(res))))

export async function open(path) {
  const db = await new Promise((resolve, reject) => {
    const d = new sqlite3.Database(path, (err) => (err ? reject(err) : resolve(d)))
  })
  await call(db, 'exec', 'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
  const statements = []
  return {
    sync: false,
    versions: {
      library: require('sqlite3/package.json').version,
      sqlite: (await call(db, 'get', 'SELECT sqlite_version() AS v')).v,
    },
    async prepare(sql) {
      const stmt = await new Promise((resolve, reject) => {
        const s = db.prepare(sql, (err) => (err ? reject(err) : resolve(s)))
      })
      statements.push(stmt)
      return {
        all: (params) => call(stmt, 'all', params),
        get: (params) => call(stmt, 'get', params),
        bytes: async (params) => Buffer.from(JSON.stringify(await call(stmt, 'all', params))),
      }
    },
    async close() {
      for (const s of statements) await call(s, 'finalize')
      await call(db, 'close')
    },
  }
}
