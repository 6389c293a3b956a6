// Read replicas with LiteFS (docs/replication.md "Read replicas"): two LiteFS nodes on loopback,
// each its own `litefs mount` with its own files; the example's primary process
// (examples/replicas/primary.mjs) commits multi-row transactions on the primary's mount, and its
// replica process (replica.mjs) prints every emission of a live query opened with
// `replica: true` on the replica's mount. Three rounds each of: the replica's machine lost
// (its process and its LiteFS node SIGKILLed, then restarted), and the primary's machine lost
// in the middle of a transaction. After each, the replica's live query must reach the last
// acknowledged commit by itself; no emission may ever hold part of a transaction; at the end the
// replica holds every acknowledged commit. A write on the replica rejects with
// ERR_DATABASE_REPLICA and changes nothing.
//
// Run with RESQLITE_REPLICA_WATCH=off to see it fail: the replica's live query then never
// notices LiteFS's commits.

import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { cluster } from '../examples/replicas/litefs.mjs'
import { expectReject } from './helpers.mjs'
import { CATCH_UP_MS, Child, emissions, killPrimaryInTransaction } from './replica-child.mjs'

const PRIMARY = fileURLToPath(new URL('../examples/replicas/primary.mjs', import.meta.url))
const REPLICA = fileURLToPath(new URL('../examples/replicas/replica.mjs', import.meta.url))
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

test('LiteFS replica: live queries follow the primary through kills of either side, never torn, nothing acknowledged missing', {
  timeout: 300_000,
}, async (t) => {
  // Not tempDir(t): its removal would run before the mounts are gone.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-replicas-test-'))
  const nodes = await cluster(dir)
  const { primary } = nodes
  const [replica] = nodes.replicas
  const children = new Set()
  const spawnChild = (...args) => {
    const c = new Child(...args)
    children.add(c)
    return c
  }
  t.after(async () => {
    for (const c of children) await c.kill()
    await replica.stop('SIGKILL')
    await primary.stop('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  })
  await primary.start()
  await replica.start()

  let acked = 0 // the last commit any primary process acknowledged
  const primaries = []
  const startPrimary = () => {
    const p = spawnChild(PRIMARY, primary.file('app.db'), { INTERVAL: '50', SLOW_TX: '1' })
    primaries.push(p)
    return p
  }
  const lastAck = () => {
    for (const p of primaries) {
      for (const line of p.lines) {
        const m = /^ack (\d+)$/.exec(line)
        if (m) acked = Math.max(acked, Number(m[1]))
      }
    }
    return acked
  }
  const replicas = []
  const startReplica = () => {
    const r = spawnChild(REPLICA, replica.file('app.db'))
    replicas.push(r)
    return r
  }
  /** Waits until the replica process's live query emitted commit `tx` or later. */
  const caughtUp = (r, tx, what) =>
    r.waitFor((lines) => emissions(lines).some((e) => e.tx >= tx), `${what}: tx ${tx} on the replica`)

  let p = startPrimary()
  let r = startReplica()
  await p.waitFor(() => lastAck() >= 5, 'five commits on the primary')
  await caughtUp(r, lastAck(), 'the first commits')

  for (let round = 1; round <= 3; round++) {
    // The replica's machine is lost while the primary goes on; it comes back and catches up.
    await r.kill()
    await replica.stop('SIGKILL')
    await sleep(200 + Math.random() * 600)
    await replica.start()
    r = startReplica()
    const away = lastAck()
    await p.waitFor(() => lastAck() > away, 'a commit while the replica was away')
    await caughtUp(r, lastAck(), `round ${round}, after the replica's restart`)

    // The primary's machine is lost in the middle of a transaction: its process, then its
    // LiteFS node. The replica's process stays up and its live query follows the new primary.
    // (On a loaded machine the kill may land after the commit instead: then go again.)
    p = await killPrimaryInTransaction(p, {
      engine: primary,
      startPrimary,
      lastAck,
      caughtUp: (tx, what) => caughtUp(r, tx, what),
      what: `round ${round}, after the primary's restart`,
    })
  }

  // No emission of any replica process ever held part of a transaction.
  const all = replicas.flatMap((x) => emissions(x.lines))
  assert.ok(all.length > 10, `only ${all.length} emissions`)
  assert.deepEqual(
    all.filter((e) => e.torn),
    [],
    'emissions holding part of a transaction',
  )

  // Stop the primary; once the replica shows its last commit, the replica holds every
  // acknowledged commit, each whole.
  await p.kill()
  const last = lastAck()
  await caughtUp(r, last, 'the final commits')
  const db = await Database.open(replica.file('app.db'), { replica: true })
  try {
    const state = await db.selectOne(`SELECT count(DISTINCT tx) AS commits, max(tx) AS last,
      (SELECT count(*) FROM items) AS rows, (SELECT total FROM meta) AS total FROM items`)
    assert.ok(state.last >= last, `the replica holds commits up to ${state.last}, ${last} was acknowledged`)
    assert.equal(state.commits, state.last, 'a commit missing on the replica')
    assert.equal(state.rows, state.total, 'part of a transaction on the replica')
    assert.deepEqual(await db.select('SELECT tx FROM items GROUP BY tx HAVING count(*) != max(k)'), [])

    // A write on the replica: its own error, and nothing changes.
    const snapshot = await db.select('SELECT * FROM items ORDER BY id')
    await expectReject(
      () => db.execute("INSERT INTO items (tx, k, note) VALUES (0, 1, 'on the replica')"),
      ResqliteError,
      'ERR_DATABASE_REPLICA',
      /read replica/,
      /primary/,
    )
    await expectReject(
      () => db.transaction(async (tx) => tx.execute('DELETE FROM items')),
      ResqliteError,
      'ERR_DATABASE_REPLICA',
    )
    assert.deepEqual(await db.select('SELECT * FROM items ORDER BY id'), snapshot)

    // Opened without replica: true, the database on the replica's mount opens, but LiteFS
    // fails the first write.
    const rw = await Database.open(replica.file('app.db'))
    try {
      await expectReject(
        () => rw.execute("INSERT INTO items (tx, k, note) VALUES (0, 1, 'on the replica')"),
        ResqliteError,
        'SQLITE_IOERR_WRITE',
      )
    } finally {
      await rw.close()
    }
    assert.deepEqual(await db.select('SELECT * FROM items ORDER BY id'), snapshot)
  } finally {
    await db.close()
  }
})

/** A LiteFS primary and replica under a fresh directory, stopped (and removed) after the test. */
async function freshCluster(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-replicas-test-'))
  const nodes = await cluster(dir)
  t.after(async () => {
    await nodes.replicas[0].stop('SIGKILL')
    await nodes.primary.stop('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  })
  await nodes.primary.start()
  await nodes.replicas[0].start()
  return { dir, primary: nodes.primary, replica: nodes.replicas[0] }
}

/** Every file under `dir` whose bytes contain `text`. */
function filesContaining(dir, text) {
  const found = []
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath ?? entry.path, entry.name)
    if (entry.isFile() && fs.readFileSync(file).includes(text)) found.push(file)
  }
  return found
}

test('LiteFS replicates an encrypted database whose header is plaintext: pages stay encrypted in transit and at rest, and the replica live query follows', {
  timeout: 120_000,
}, async (t) => {
  const { dir, primary, replica } = await freshCluster(t)
  const key = crypto.randomBytes(32)
  const cipher = { name: 'chacha20', plaintextHeaderSize: 32 }
  const db = await Database.open(primary.file('secret.db'), { encryptionKey: key, cipher })
  t.after(() => db.close())
  await db.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
  await db.execute("INSERT INTO notes (body) VALUES ('a confidential note 1')")

  const file = replica.file('secret.db')
  await waitUntil(() => fs.existsSync(file), 'the database on the replica')
  const ro = await Database.open(file, { encryptionKey: key, cipher, replica: true })
  t.after(() => ro.close())
  const seen = []
  ro.stream('SELECT count(*) AS n FROM notes').subscribe((rows) => seen.push(rows[0].n))
  await waitUntil(() => seen.at(-1) === 1, 'the first note on the replica')
  await db.executeBatch('INSERT INTO notes (body) VALUES (?)', [['a confidential note 2'], ['a confidential note 3']])
  await waitUntil(() => seen.at(-1) === 3, 'the live query after two more notes')
  assert.deepEqual(
    (await ro.select('SELECT body FROM notes ORDER BY id')).map((r) => r.body),
    ['a confidential note 1', 'a confidential note 2', 'a confidential note 3'],
  )
  // Nothing LiteFS keeps or shows (the primary's and the replica's data directories and mounts)
  // holds the plaintext.
  assert.deepEqual(filesContaining(dir, 'a confidential note'), [])
})

test('LiteFS cannot replicate a database encrypted whole (its header too): the first commit never reaches the replica and later writes are SQLITE_BUSY', {
  timeout: 120_000,
}, async (t) => {
  const { primary, replica } = await freshCluster(t)
  const key = crypto.randomBytes(32)
  const db = await Database.open(primary.file('whole.db'), { encryptionKey: key, busyTimeout: 1000 })
  t.after(() => db.close())
  // SQLite sees its commit succeed; LiteFS cannot read the encrypted header and stops.
  await db.execute('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
  await expectReject(() => db.execute("INSERT INTO notes (body) VALUES ('x')"), ResqliteError, 'SQLITE_BUSY')
  assert.match(primary.logText(), /fatal error occurred while committing WAL to .*whole\.db.*read truncated page/)
  const file = replica.file('whole.db')
  const hasTable = async () => {
    if (!fs.existsSync(file)) return false
    try {
      const ro = await Database.open(file, { encryptionKey: key, replica: true })
      try {
        return (await ro.select("SELECT name FROM sqlite_schema WHERE name = 'notes'")).length > 0
      } finally {
        await ro.close()
      }
    } catch {
      return false
    }
  }
  await sleep(1000)
  assert.equal(await hasTable(), false, 'the table reached the replica')
})

test('a long read on a LiteFS replica holds back the transactions LiteFS applies there until it ends', {
  timeout: 120_000,
}, async (t) => {
  const { primary, replica } = await freshCluster(t)
  const db = await Database.open(primary.file('long.db'))
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY)')
  await db.execute('INSERT INTO t VALUES (1)')
  const file = replica.file('long.db')
  await waitUntil(() => fs.existsSync(file), 'the database on the replica')
  const ro = await Database.open(file, { replica: true })
  t.after(() => ro.close())
  await waitUntil(async () => (await ro.selectOne('SELECT count(*) AS n FROM t')).n === 1, 'the first row')
  for (let attempt = 1; ; attempt++) {
    const before = (await ro.selectOne('SELECT count(*) AS n FROM t')).n
    // A read of a second or more, whose snapshot is taken when it starts.
    let longDone
    const long = ro
      .selectOne(
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 8000000) SELECT count(*) AS k, (SELECT count(*) FROM t) AS n FROM c',
      )
      .then((row) => {
        longDone = Date.now()
        return row
      })
    await sleep(200)
    await db.execute('INSERT INTO t DEFAULT VALUES')
    let seen
    await waitUntil(async () => {
      if ((await ro.selectOne('SELECT count(*) AS n FROM t')).n > before) seen = Date.now()
      return seen !== undefined
    }, 'the new row on the replica')
    const { n } = await long
    // The long read's snapshot came before LiteFS applied the commit: the commit showed only
    // once the long read ended. (If the commit arrived before the long read began, try again.)
    if (n === before) {
      assert.ok(seen >= longDone, `the commit showed ${longDone - seen} ms before the long read ended`)
      return
    }
    assert.ok(attempt < 3, 'the long read never began before the commit arrived')
  }
})

async function waitUntil(check, what, ms = CATCH_UP_MS) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}
