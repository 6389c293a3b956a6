// @photostructure/sqlite's experimental DatabasePool (`@photostructure/sqlite/experimental`):
// async; a fixed pool of connections whose prepare, bind and step run on libuv worker threads
// (4 here, libuv's default number of worker threads), rows handed back to the JS thread.
//
// Its API takes SQL text only (no statement handles: "prepare" binds the text, as PowerSync's
// driver does) and has no interactive transactions: a transaction is a `batch` of operations
// given up front, so runBatch is one and the lanes with transaction bodies do not run for it
// (LIBRARY_LIMITS in lanes/index.mjs). Authorizer "none" (documented): its default, "strict",
// rejects PRAGMA, which the lanes' resets run (wal_checkpoint); no SQL here makes connection-
// local state. WAL, synchronous=NORMAL and a busy timeout through its connectionSetup, on every
// connection.
import { DatabasePool } from '@photostructure/sqlite/experimental'
import { version } from './photostructure.mjs'

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export async function open(path, { versions = true } = {}) {
  const pool = await DatabasePool.open(path, {
    connections: 4,
    authorizer: 'none',
    connectionSetup: [
      { sql: 'PRAGMA journal_mode = WAL' },
      { sql: 'PRAGMA synchronous = NORMAL' },
      // (writes issued together reach different connections: without a timeout, all but one
      // fail with SQLITE_BUSY; its README's example sets one)
      { sql: 'PRAGMA busy_timeout = 5000' },
    ],
  })
  return {
    sync: false,
    versions: versions ? { library: version, sqlite: (await pool.get('SELECT sqlite_version() AS v')).v } : undefined,
    // One statement per call (its operations take exactly one).
    async exec(sql) {
      for (const s of sql
        .split(';')
        .map((x) => x.trim())
        .filter(Boolean))
        await pool.run(s)
    },
    prepare(sql) {
      return {
        sql,
        all: (params) => pool.all(sql, params),
        get: (params) => pool.get(sql, params),
        bytes: async (params) => Buffer.from(JSON.stringify(await pool.all(sql, params))),
        run: (params) => pool.run(sql, params),
        runBatch: (paramSets) =>
          pool.batch(
            paramSets.map((params) => ({ kind: 'run', sql, params })),
            { transaction: 'immediate' },
          ),
      }
    },
    close: () => pool.close(),
  }
}
