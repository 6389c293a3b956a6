// Encryption at rest (resqlite only: no peer in the suite encrypts). One process holds the
// lane's plaintext copy and an encrypted copy of it (driver.encryptedCopy: rekey with a
// passphrase, default cipher chacha20) and measures each pair in alternation — plaintext,
// encrypted, plaintext, … (measureAlternating) — so both see the same machine noise. The
// targets compare resqlite with itself (targets.mjs: encrypted / plaintext).
import { closeSync, openSync, readSync, rmSync } from 'node:fs'
import { narrowRow, rng } from '../data.mjs'
import { counting, measureAlternating } from '../measure.mjs'
import { hashRows, makeCase, rowsOf } from './common.mjs'

const ENC_OPTIONS = { encryptionKey: 'bench passphrase' }
const SELECT_ROWS = 10_000
const BATCH_ROWS = 10_000
const T_ROWS = 100_000 // rows of t (data.mjs): what the open lane's first query counts
const OPEN_MAX_SAMPLES = 60 // every open derives the key (PBKDF2): ~tens of ms each

// A plaintext SQLite file starts with this header; an encrypted one must not.
function assertEncrypted(path) {
  const fd = openSync(path, 'r')
  const head = Buffer.alloc(16)
  readSync(fd, head, 0, 16, 0)
  closeSync(fd)
  if (head.toString('latin1') === 'SQLite format 3\0')
    throw new Error(`${path} is not encrypted: it starts with the plaintext SQLite header`)
}

async function encryption(d, cfg) {
  if (!d.encryptedCopy || !d.Database || !d.path)
    throw new Error('the encryption lane needs a driver with path, Database and encryptedCopy (resqlite)')
  const encPath = `${d.path}-encrypted.db`
  const enc = counting(await d.encryptedCopy(encPath, ENC_OPTIONS), d.ctr)
  try {
    assertEncrypted(encPath)
    const dbs = { plain: d, encrypted: enc }
    const names = Object.keys(dbs)
    const cases = []
    const both = async (make) =>
      Object.fromEntries(await Promise.all(names.map(async (k) => [k, await make(k, dbs[k])])))

    // select 10,000 rows → row objects; both copies must return the same rows.
    const selects = await both(async (_k, db) => {
      const q = await db.prepare('SELECT * FROM t WHERE id <= ?')
      return { op: () => q.all([SELECT_ROWS]), expect: { ops: 1, rows: SELECT_ROWS }, count: rowsOf }
    })
    const checks = await both(async (k) => hashRows(await selects[k].op()))
    if (checks.plain !== checks.encrypted)
      throw new Error(
        `the encrypted copy returns other rows than the plaintext one (${checks.encrypted} vs ${checks.plain})`,
      )
    let m = await measureAlternating(d, selects, cfg)
    for (const k of names)
      cases.push(
        makeCase(
          'encryption',
          `enc.select.${k}`,
          `select ${SELECT_ROWS.toLocaleString('en')} rows, ${k}`,
          checks[k],
          m[k],
        ),
      )

    // executeBatch of 10,000 rows into write_t, emptied (and the WAL checkpointed) before every
    // sample, untimed.
    const rand = rng(21)
    const rows = Array.from({ length: BATCH_ROWS }, (_, i) => narrowRow(rand, i + 1))
    const inserts = await both(async (_k, db) => {
      const u = db.uncounted
      await u.exec('DROP TABLE IF EXISTS write_t; CREATE TABLE write_t (id INTEGER PRIMARY KEY, name TEXT, value REAL)')
      const ins = await db.prepare('INSERT INTO write_t (id, name, value) VALUES (?, ?, ?)')
      const countStmt = await u.prepare('SELECT count(*) AS c FROM write_t')
      return {
        op: () => ins.runBatch(rows),
        reset: () => u.exec('DELETE FROM write_t; PRAGMA wal_checkpoint(PASSIVE)'),
        expect: { ops: BATCH_ROWS, rows: BATCH_ROWS },
        count: async () => ({ rows: (await countStmt.get([])).c }),
      }
    })
    m = await measureAlternating(d, inserts, cfg)
    for (const k of names) {
      const written = await (await dbs[k].uncounted.prepare('SELECT * FROM write_t ORDER BY id')).all([])
      cases.push(
        makeCase(
          'encryption',
          `enc.batch.${k}`,
          `batch insert ${BATCH_ROWS.toLocaleString('en')} rows, ${k}`,
          `${written.length} rows ${hashRows(written)}`,
          m[k],
        ),
      )
    }

    // Database.open (default readers; the encrypted one derives its key) + the first query;
    // the connection is closed before the next sample, untimed. The query counts as one
    // operation, by hand: it runs on a connection the counting wrapper never sees.
    const paths = { plain: d.path, encrypted: encPath }
    const opened = []
    const closeOpened = async () => {
      for (const db of opened.splice(0)) await db.close()
    }
    const opens = await both(async (k) => ({
      op: async () => {
        const db = await d.Database.open(paths[k], k === 'encrypted' ? ENC_OPTIONS : {})
        opened.push(db)
        d.ctr.ops++
        return db.selectOne('SELECT count(*) AS n FROM t')
      },
      reset: closeOpened,
      expect: { ops: 1, tRows: T_ROWS },
      count: (row) => ({ tRows: row?.n }),
    }))
    try {
      m = await measureAlternating(d, opens, { ...cfg, maxIters: Math.min(cfg.maxIters, OPEN_MAX_SAMPLES) })
    } finally {
      await closeOpened()
    }
    for (const k of names)
      cases.push(makeCase('encryption', `enc.open.${k}`, `open + first query, ${k}`, `count ${T_ROWS}`, m[k]))
    return cases
  } finally {
    await enc.close()
    for (const s of ['', '-wal', '-shm', '-journal']) rmSync(encPath + s, { force: true })
  }
}

export const ENCRYPTION_LANES = { encryption }
// Libraries each lane runs for (lanes not listed here run for every library).
export const ENCRYPTION_LIBRARIES = { encryption: ['resqlite'] }
