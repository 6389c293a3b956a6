// Continuous replication with Litestream (docs/replication.md): a child process writes through
// resqlite while `litestream replicate` copies the database to a file:// replica. At a random
// moment the writer and Litestream are both SIGKILLed, as when the machine is lost: a restore of
// the replica must pass integrity_check and hold every commit acknowledged before the last sync
// point Litestream reported (`litestream sync -wait`), with no partial transaction. Then
// Litestream starts again beside the surviving file, as when the machine comes back: once it
// synced, a restore holds every acknowledged commit. Both checkpoint policies, three rounds each.

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject, tempDir } from './helpers.mjs'
import { findLitestream, Replication } from './litestream.mjs'
import { TX_EVERY } from './replication-writer.mjs'

const WRITER = fileURLToPath(new URL('./replication-writer.mjs', import.meta.url))
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Checks a restored database and returns S: it holds exactly commits 1..S, each complete. */
async function checkRestored(file) {
  const db = await Database.open(file, { readonly: true })
  try {
    assert.deepEqual(await db.select('PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
    const { commits, last } = await db.selectOne('SELECT count(DISTINCT seq) AS commits, max(seq) AS last FROM items')
    assert.equal(commits, last ?? 0, `commits missing below seq ${last}: only ${commits} of them restored`)
    const partial = await db.select(
      'SELECT seq, count(*) AS rows, max(n) AS n FROM items GROUP BY seq HAVING count(*) != max(n) OR min(n) != max(n)',
    )
    assert.deepEqual(partial, [], 'partially restored commits')
    const { txRows, rows } = await db.selectOne(
      `SELECT (SELECT tx_rows FROM meta) AS txRows, (SELECT count(*) FROM items WHERE seq % ${TX_EVERY} = 0) AS rows`,
    )
    assert.equal(txRows, rows, 'a transaction restored without its UPDATE, or the reverse')
    return last ?? 0
  } finally {
    await db.close()
  }
}

/** Samples the WAL file: its largest size, and how often it started over (its salts changed). */
function watchWal(file) {
  const wal = { maxBytes: 0, restarts: 0 }
  let salts
  const timer = setInterval(() => {
    try {
      const fd = fs.openSync(`${file}-wal`, 'r')
      const header = Buffer.alloc(24)
      const read = fs.readSync(fd, header, 0, 24, 0)
      wal.maxBytes = Math.max(wal.maxBytes, fs.fstatSync(fd).size)
      fs.closeSync(fd)
      const now = read === 24 ? header.subarray(16, 24).toString('hex') : undefined
      if (now !== undefined && salts !== undefined && now !== salts) wal.restarts++
      salts = now ?? salts
    } catch {} // no WAL yet
  }, 10)
  return { wal, stop: () => clearInterval(timer) }
}

/** How often the WAL must have started over before a round's kill, and how long a round may
 * write to get there. */
const RESTARTS = 2
const MAX_ROUND_MS = 120_000

/** One round: write, sync now and then, kill everything at a random moment, restore, check. */
async function round(t, bin, checkpoints, seed) {
  const dir = tempDir(t)
  const file = path.join(dir, 'app.db')
  const ls = new Replication(t, bin, dir, file)
  await ls.start()
  const writer = spawn(process.execPath, [WRITER, file, checkpoints, String(seed)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.after(() => writer.kill('SIGKILL'))
  let acked = 0
  const ackedAt = new Map() // seq -> when its acknowledgement arrived
  let pending = ''
  writer.stdout.on('data', (d) => {
    const lines = (pending + d).split('\n')
    pending = lines.pop()
    for (const line of lines) {
      ackedAt.set(Number(line), performance.now())
      acked = Math.max(acked, Number(line))
    }
  })
  const writerDone = new Promise((resolve) => writer.stdout.once('close', resolve))
  const sampler = watchWal(file)
  t.after(sampler.stop) // a failed round must not leave the interval keeping the process alive
  // Litestream's sync fails ("no position, waiting for data") until it has seen the writer's
  // first commit: a loaded machine may start the writer later than the first sync point.
  for (let i = 0; acked === 0; i++) {
    if (i === 400) throw new Error('the writer acknowledged no commit within 10 s')
    await sleep(25)
  }
  await ls.sync()
  // Sync points until the kill: what was acknowledged when a sync was asked for is replicated once
  // it returns. The kill waits, past its random moment, until the WAL has started over twice
  // (the case under test), which on a loaded machine can take longer than the moment drawn.
  let killAfter = 1500 + Math.random() * 2500
  const start = performance.now()
  let syncedAcked = 0
  let syncs = 0
  let restoredUnderLoad
  const due = () => {
    const elapsed = performance.now() - start
    if (elapsed >= killAfter && sampler.wal.restarts < RESTARTS && elapsed < MAX_ROUND_MS) killAfter = elapsed + 100
    return elapsed >= killAfter
  }
  while (!due()) {
    await sleep(Math.min(100 + Math.random() * 300, Math.max(0, killAfter - (performance.now() - start))))
    if (due()) break
    const before = acked
    await ls.sync()
    syncedAcked = before
    syncs++
    if (restoredUnderLoad === undefined && performance.now() - start > killAfter / 2) {
      // A restore while the writer goes on (the replica changes under it).
      const file = path.join(dir, 'restored-under-load.db')
      await ls.restore(file)
      restoredUnderLoad = await checkRestored(file)
      assert.ok(restoredUnderLoad >= before, `commit ${before} was synced, the restore ends at ${restoredUnderLoad}`)
    }
  }
  assert.equal(writer.exitCode, null, 'the writer stopped before it was killed')
  writer.kill('SIGKILL')
  await ls.stop('SIGKILL')
  const killedAt = performance.now()
  await writerDone
  sampler.stop()
  assert.ok(syncs > 0 && syncedAcked > 0, `no sync point with commits before the kill (${syncs} syncs)`)
  assert.ok(restoredUnderLoad > 0, 'no restore while the writer ran')

  const lost = path.join(dir, 'restored-after-loss.db')
  await ls.restore(lost)
  const survived = await checkRestored(lost)
  assert.ok(survived >= syncedAcked, `commit ${syncedAcked} was synced, the restore ends at ${survived}`)
  // How long before the loss the oldest acknowledged commit the replica lacks was acknowledged.
  const lostTimes = [...ackedAt].filter(([seq]) => seq > survived).map(([, at]) => at)
  const window = lostTimes.length > 0 ? killedAt - Math.min(...lostTimes) : 0

  await ls.start()
  await ls.sync()
  const back = path.join(dir, 'restored-after-restart.db')
  await ls.restore(back)
  const all = await checkRestored(back)
  await ls.stop('SIGTERM')
  assert.ok(all >= acked, `commit ${acked} was acknowledged, the restore after the restart ends at ${all}`)

  const snapshots = [...ls.logText().matchAll(/msg=sync .*reason="([^"]+)"/g)].map((m) => m[1])
  return { acked, syncedAcked, restoredUnderLoad, survived, window, all, syncs, killAfter, wal: sampler.wal, snapshots }
}

for (const checkpoints of ['auto', 'external']) {
  test(`Litestream replicates through SIGKILLs (checkpoints: '${checkpoints}')`, async (t) => {
    const bin = findLitestream()
    for (const seed of [1, 2, 3]) {
      const r = await round(t, bin, checkpoints, seed)
      t.diagnostic(
        `round ${seed}: killed after ${Math.round(r.killAfter)} ms, ${r.acked} commits acknowledged, ` +
          `${r.syncs} sync points (last at commit ${r.syncedAcked}), a restore under load ended at ` +
          `${r.restoredUnderLoad}; restore after the loss ends at commit ` +
          `${r.survived} (${r.acked - r.survived} acknowledged commits lost, from the last ` +
          `${Math.round(r.window)} ms), after the restart at ${r.all}; ` +
          `WAL up to ${(r.wal.maxBytes / 2 ** 20).toFixed(1)} MiB, restarted ${r.wal.restarts} times; ` +
          `Litestream snapshots for lost positions: ${JSON.stringify(r.snapshots)}`,
      )
      assert.ok(r.wal.restarts >= RESTARTS, `the WAL started over only ${r.wal.restarts} times in ${MAX_ROUND_MS} ms`)
      assert.deepEqual(r.snapshots, [], 'Litestream lost its position in the WAL')
    }
  })
}

test('rekey under a replicating Litestream waits busyTimeout, then says why it cannot run', async (t) => {
  const bin = findLitestream()
  const dir = tempDir(t)
  const file = path.join(dir, 'app.db')
  const db = await Database.open(file, { busyTimeout: 300 })
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (x)')
  await db.execute('INSERT INTO t VALUES (1)')
  const ls = new Replication(t, bin, dir, file)
  await ls.start()
  await ls.sync() // Litestream now holds its read transaction
  const started = performance.now()
  await expectReject(
    () => db.rekey('key'),
    ResqliteError,
    'SQLITE_BUSY',
    /another process/,
    /Litestream/,
    /stop that process, rekey/,
  )
  const waited = performance.now() - started
  assert.ok(waited >= 300, `rekey gave up after ${waited} ms, before busyTimeout`)
  // Nothing changed: the database still works and still replicates.
  await db.execute('INSERT INTO t VALUES (2)')
  await ls.sync()
  await ls.stop('SIGTERM')
  const restored = path.join(dir, 'restored.db')
  await ls.restore(restored)
  const copy = await Database.open(restored, { readonly: true })
  assert.deepEqual(await copy.select('SELECT x FROM t ORDER BY x'), [{ x: 1 }, { x: 2 }])
  await copy.close()
  // With Litestream stopped, the rekey runs.
  await db.rekey('key')
  assert.deepEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 2 }])
})

test('rekey waits for another connection that lets go within busyTimeout', async (t) => {
  const file = path.join(tempDir(t), 'app.db')
  const db = await Database.open(file, { busyTimeout: 5000 })
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (x)')
  const other = await Database.open(file, { readonly: true })
  assert.deepEqual(await other.select('SELECT count(*) AS n FROM t'), [{ n: 0 }])
  const rekeyed = db.rekey('key')
  await sleep(200)
  await other.close()
  await rekeyed
  await db.execute('INSERT INTO t VALUES (1)')
  assert.deepEqual(await db.select('SELECT count(*) AS n FROM t'), [{ n: 1 }])
})

test('Litestream cannot read an encrypted database; VACUUM INTO makes encrypted copies to ship instead', async (t) => {
  const bin = findLitestream()
  const dir = tempDir(t)
  const file = path.join(dir, 'secret.db')
  const db = await Database.open(file, { encryptionKey: 'key' })
  t.after(() => db.close())
  await db.execute('CREATE TABLE t (x)')
  await db.execute('INSERT INTO t VALUES (1)')
  const ls = new Replication(t, bin, dir, file)
  await ls.start()
  await assert.rejects(ls.sync(), /file is not a database/)
  await ls.stop('SIGTERM')
  // The copy is a consistent snapshot, encrypted with the same key and cipher.
  const copy = path.join(dir, 'copy.db')
  await db.execute('VACUUM INTO ?', [copy])
  await expectReject(() => Database.open(copy, { readonly: true }), ResqliteError, 'SQLITE_NOTADB')
  const opened = await Database.open(copy, { encryptionKey: 'key', readonly: true })
  assert.deepEqual(await opened.select('PRAGMA integrity_check'), [{ integrity_check: 'ok' }])
  assert.deepEqual(await opened.select('SELECT x FROM t'), [{ x: 1 }])
  await opened.close()
})
