// Replays the shim's log (shim.c) to rebuild the files as a power cut would leave them, and
// checks what the engine then opens against what the child (child.mjs) was told was committed.
import fs from 'node:fs'
import path from 'node:path'
import { Database } from '../../dist/esm/index.mjs'
import { keyFor, sumFor } from './workload.mjs'

export const OP = { OPEN: 1, WRITE: 2, TRUNC: 3, FSYNC: 4, CLOSE: 5, UNLINK: 6, RENAME: 7 }
const SECTOR = 512

/** The log's records, in order: { op, handle, offset, data } (data: a view into the log). */
export function parseLog(buf) {
  const records = []
  for (let at = 0; at < buf.length; ) {
    if (at + 17 > buf.length) throw new Error(`the shim's log ends inside a record header at byte ${at}`)
    const op = buf[at]
    const handle = buf.readUInt32LE(at + 1)
    const offset = Number(buf.readBigUInt64LE(at + 5))
    const size = buf.readUInt32LE(at + 13)
    at += 17
    if (at + size > buf.length) throw new Error(`the shim's log ends inside a record's data at byte ${at}`)
    records.push({ op, handle, offset, data: buf.subarray(at, at + size) })
    at += size
  }
  return records
}

/** A file's bytes, growable. */
class Bytes {
  constructor(from) {
    this.buf = from ? Buffer.from(from.buf.subarray(0, from.length)) : Buffer.alloc(0)
    this.length = from ? from.length : 0
  }
  write(offset, data) {
    const end = offset + data.length
    if (end > this.buf.length) {
      const grown = Buffer.alloc(Math.max(end, this.buf.length * 2))
      this.buf.copy(grown, 0, 0, this.length)
      this.buf = grown
    }
    if (offset > this.length) this.buf.fill(0, this.length, offset)
    data.copy(this.buf, offset)
    this.length = Math.max(this.length, end)
  }
  truncate(length) {
    if (length > this.length) this.write(this.length, Buffer.alloc(length - this.length))
    this.length = length
  }
  bytes() {
    return this.buf.subarray(0, this.length)
  }
}

/**
 * Walks the log once and yields, at each cut (record indices, ascending), the files as they would
 * be after a power cut there: for each file, every write and truncation before its last fsync
 * before the cut is kept; each one after it is dropped, kept, or (a write) torn at 512-byte
 * sectors, at random. A rename after the directory's last fsync is kept or undone at random;
 * creating and deleting a file count as durable at once (the model leaves their ordering out).
 * `-shm` is not durable state (recovery rebuilds it): it is left out, as is the acks file.
 * Yields { cut, files: Map<name, Buffer> }; with keepAll, nothing after a sync is dropped.
 */
export function* cutStates(records, cuts, rand, { keepAll = false } = {}) {
  const handles = new Map() // handle -> file (an inode: it keeps its handles across a rename)
  const names = new Map() // name -> file
  let renames = [] // renames since the directory's last fsync: { from, to, moved, replaced }
  let next = 0
  for (const cut of cuts) {
    for (; next < cut; next++) apply(records[next])
    const named = new Map(names)
    for (const { from, to, moved, replaced } of [...renames].reverse()) {
      if (!keepAll && rand() < 0.5) {
        named.set(from, moved)
        if (replaced) named.set(to, replaced)
        else named.delete(to)
      }
    }
    const out = new Map()
    for (const [name, file] of named) {
      if (name.endsWith('-shm') || name === 'acks') continue
      const bytes = new Bytes(file.durable)
      for (const r of file.pending) {
        const fate = keepAll ? 1 : Math.floor(rand() * 3) // 0 dropped, 1 kept, 2 torn
        if (fate === 0) continue
        if (r.op === OP.TRUNC) bytes.truncate(r.offset)
        else if (fate === 1) bytes.write(r.offset, r.data)
        else tear(bytes, r, rand)
      }
      out.set(name, Buffer.from(bytes.bytes()))
    }
    yield { cut, files: out }
  }

  function apply(r) {
    if (r.op === OP.OPEN) {
      const name = r.data.toString()
      if (name.endsWith('/')) {
        handles.set(r.handle, 'dir') // the directory itself (shim.c logs it with a slash)
        return
      }
      const base = path.basename(name)
      if (!names.has(base)) names.set(base, { durable: new Bytes(), pending: [] })
      handles.set(r.handle, names.get(base))
    } else if (r.op === OP.WRITE || r.op === OP.TRUNC) {
      handles.get(r.handle).pending.push(r)
    } else if (r.op === OP.FSYNC) {
      const file = handles.get(r.handle)
      if (file === 'dir') {
        renames = [] // the directory synced: its renames are durable
        return
      }
      for (const p of file.pending) {
        if (p.op === OP.TRUNC) file.durable.truncate(p.offset)
        else file.durable.write(p.offset, p.data)
      }
      file.pending = []
    } else if (r.op === OP.UNLINK) {
      names.delete(path.basename(r.data.toString()))
    } else if (r.op === OP.RENAME) {
      const [from, to] = r.data
        .toString()
        .split('\0')
        .map((p) => path.basename(p))
      renames.push({ from, to, moved: names.get(from), replaced: names.get(to) })
      names.set(to, names.get(from))
      names.delete(from)
    }
  }
}

const JOURNAL_MAGIC = Buffer.from('d9d505f920a163d7', 'hex')

/**
 * How many times a rollback journal's header was given its record count while records it counts
 * were not yet synced. SQLite does that at synchronous = NORMAL (records and count reach the disk
 * in one sync), and a cut can then leave a hot journal whose count covers a torn record: plain
 * SQLite's checksum skips it, SQLite3 Multiple Ciphers refuses the database instead. The engine's
 * own journal transactions (the switch to WAL at open, and away from it for a rekey) run at FULL,
 * which syncs the records first (sqlite/setup.rs ROLLBACK_JOURNAL_SYNC): this counts 0 then.
 */
export function unsyncedJournalCounts(records) {
  const handles = new Map() // handle -> file name
  const unsynced = new Set() // journals with records written since their last fsync
  let count = 0
  for (const r of records) {
    const name = handles.get(r.handle)
    if (r.op === OP.OPEN) handles.set(r.handle, path.basename(r.data.toString()))
    else if (r.op === OP.UNLINK) unsynced.delete(path.basename(r.data.toString()))
    else if (!name?.endsWith('-journal')) continue
    else if (r.op === OP.FSYNC) unsynced.delete(name)
    else if (r.op !== OP.WRITE) continue
    else if (r.offset > 0) unsynced.add(name)
    else if (r.data.length >= 12 && r.data.subarray(0, 8).equals(JOURNAL_MAGIC)) {
      const n = r.data.readUInt32BE(8)
      if (n !== 0 && n !== 0xffffffff && unsynced.has(name)) count++
    }
  }
  return count
}

/** Keeps each 512-byte sector of a write (aligned in the file) or not, at random. */
function tear(bytes, r, rand) {
  for (let at = r.offset; at < r.offset + r.data.length; ) {
    const end = Math.min(r.offset + r.data.length, (Math.floor(at / SECTOR) + 1) * SECTOR)
    if (rand() < 0.5) bytes.write(at, r.data.subarray(at - r.offset, end - r.offset))
    at = end
  }
}

/** The child's marks (child.mjs) in the log's order, each with its record index. */
export function marks(records) {
  const acksHandles = new Set()
  const out = []
  for (let i = 0; i < records.length; i++) {
    const r = records[i]
    if (r.op === OP.OPEN && path.basename(r.data.toString()) === 'acks') acksHandles.add(r.handle)
    if (r.op === OP.WRITE && acksHandles.has(r.handle)) {
      for (const line of r.data.toString().split('\n')) if (line) out.push({ at: i, line })
    }
  }
  return out
}

/**
 * What a cut before record `cut` may find: transactions issued (txn -> rows), how many were
 * acknowledged (txns are acknowledged in issue order, so a count), and the keys that can be in
 * force (newest first: a rekey issued and not acknowledged, the newest acknowledged, the one
 * before it).
 */
export function expected(allMarks, cut, seed, encrypted) {
  const rows = new Map()
  let acked = 0
  let schema = false
  let issuedKey = 0
  const ackedKeys = [0]
  for (const { at, line } of allMarks) {
    const [tag, a, b] = line.split(' ')
    if (tag === 'I') rows.set(Number(a), Number(b)) // every issue, also after the cut
    if (at >= cut) continue
    if (tag === 'A') acked = Math.max(acked, Number(a))
    if (tag === 'S') schema = true
    if (tag === 'K') issuedKey = Number(a)
    if (tag === 'R') ackedKeys.push(Number(a))
  }
  let keys = null
  if (encrypted) {
    const ids = [...new Set([issuedKey, ...ackedKeys.slice(-2).reverse()])]
    keys = ids.map((i) => ({ i, key: keyFor(seed, i) }))
  }
  return { rows, acked, schema, keys }
}

/** Writes a state's files into dir. */
export function writeState(dir, files) {
  fs.mkdirSync(dir, { recursive: true })
  for (const [name, bytes] of files) fs.writeFileSync(path.join(dir, name), bytes)
}

/**
 * Opens the state in dir and classifies it: 'intact-refused' (no key it may have opens it, but
 * the same files opened through a symlink pass integrity_check), 'corrupt' (refused otherwise, or
 * integrity_check fails), else 'ok'; with the transactions found, and the problems
 * against `exp`: partial (a transaction with only some of its rows, or wrong values), holes (a
 * transaction missing before one present: not a prefix), lost (acknowledged, absent).
 */
export async function check(dir, exp) {
  const file = path.join(dir, 'db')
  const result = { verdict: 'ok', partial: 0, holes: 0, lost: 0, present: 0, error: null }
  const snapshot = new Map(fs.readdirSync(dir).map((n) => [n, fs.readFileSync(path.join(dir, n))]))
  let opened = null
  for (const candidate of exp.keys ?? [null]) {
    // a refused open may have touched the files: each key gets the state as the cut left it
    fs.rmSync(dir, { recursive: true, force: true })
    writeState(dir, snapshot)
    try {
      opened = await Database.open(file, candidate ? { encryptionKey: candidate.key } : {})
      break
    } catch (e) {
      result.error = `${e.code}: ${e.message}`
    }
  }
  if (!opened) {
    // a state no key opens and that is not intact either way is a corrupt database
    result.verdict = (await intactThroughSymlink(dir, snapshot, exp)) ? 'intact-refused' : 'corrupt'
    return result
  }
  try {
    const integrity = await opened.select('PRAGMA integrity_check')
    if (integrity.length !== 1 || integrity[0].integrity_check !== 'ok') {
      result.verdict = 'corrupt'
      result.error = JSON.stringify(integrity.slice(0, 3))
      return result
    }
    const table = await opened.select("SELECT 1 FROM sqlite_schema WHERE name = 't'")
    const found = table.length
      ? await opened.select(
          'SELECT txn, count(*) AS n, sum(v) AS s, count(DISTINCT k) AS dk FROM t GROUP BY txn ORDER BY txn',
        )
      : []
    if (!table.length && exp.schema) result.lost = exp.acked
    let max = 0
    for (const { txn, n, s, dk } of found) {
      const want = exp.rows.get(txn)
      if (want === undefined || n !== want || dk !== want || s !== sumFor(txn, want)) result.partial++
      max = Math.max(max, txn)
    }
    result.present = found.length
    result.holes = max - found.length // ids run 1..max: each one missing below the largest is a hole
    result.lost = Math.max(result.lost, exp.acked - max)
  } catch (e) {
    // SQLite found the file damaged while reading it (SQLITE_CORRUPT, SQLITE_NOTADB)
    result.verdict = 'corrupt'
    result.error = `${e.code}: ${e.message}`
  } finally {
    // close() checkpoints the WAL into the file: a failure there is a damaged state too
    await opened.close().catch((e) => {
      result.verdict = 'corrupt'
      result.error = `close: ${e.code}: ${e.message}`
    })
  }
  return result
}

/** Whether the refused state passes integrity_check with one of its keys when opened through a
 * symlink (a path beside which resqlite's key check, which reads page 1 of the file alone when
 * a -wal is there, finds none: issue 43). */
async function intactThroughSymlink(dir, snapshot, exp) {
  for (const candidate of exp.keys ?? [null]) {
    fs.rmSync(dir, { recursive: true, force: true })
    writeState(dir, snapshot)
    const link = path.join(dir, 'link', 'db')
    fs.mkdirSync(path.dirname(link))
    fs.symlinkSync(path.join(dir, 'db'), link)
    try {
      const db = await Database.open(link, candidate ? { encryptionKey: candidate.key } : {})
      try {
        const integrity = await db.select('PRAGMA integrity_check')
        if (integrity.length === 1 && integrity[0].integrity_check === 'ok') return true
      } finally {
        await db.close()
      }
    } catch {
      // refused through the symlink too: not known to be intact with this key
    }
  }
  return false
}
