// Read replicas through Litestream's VFS (docs/replication.md "Read replicas with Litestream's
// VFS"): a primary process (examples/replicas/primary.mjs) commits multi-row transactions on a
// plain file that `litestream replicate` copies to a file:// replica; a replica process
// (replica.mjs with LITESTREAM_VFS) loads the VFS extension with Database.loadExtension and opens
// the replica straight from that directory (`vfs: 'litestream'`, `replica: true`), printing
// every emission of its live query. The two share nothing but the replica directory. Three
// rounds each of: the replica process SIGKILLed and restarted, and the primary's machine lost in
// the middle of a transaction (the primary process and its Litestream SIGKILLed, both
// restarted beside the surviving file). After each, the replica's live query must reach the
// last acknowledged commit by itself; no emission may ever hold part of a transaction; at the
// end the replica holds every acknowledged commit. A write on the replica rejects with
// ERR_DATABASE_REPLICA and changes nothing.
//
// Run with RESQLITE_REPLICA_WATCH=off to see it fail: the replica's live query then never
// notices the transactions the VFS polls in.

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { expectReject } from './helpers.mjs'
import { findLitestream, findLitestreamVfs, Replication } from './litestream.mjs'
import { Child, emissions, killPrimaryInTransaction } from './replica-child.mjs'

const PRIMARY = fileURLToPath(new URL('../examples/replicas/primary.mjs', import.meta.url))
const REPLICA = fileURLToPath(new URL('../examples/replicas/replica.mjs', import.meta.url))
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

test('Litestream VFS replica: live queries follow the primary through kills of either side, never torn, nothing acknowledged missing', {
  timeout: 300_000,
}, async (t) => {
  const bin = findLitestream()
  const so = findLitestreamVfs()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-litestream-vfs-test-'))
  const file = path.join(dir, 'app.db')
  // Litestream's default monitor interval (1 s) would set the pace: 10 ms, as measured in
  // experiments/055.
  const replication = new Replication(t, bin, dir, file, { syncInterval: '10ms', monitorInterval: '10ms' })
  const uri = `file:app.db?replica_url=${encodeURIComponent(replication.replica)}&poll_interval=10ms`
  const vfsLog = path.join(dir, 'vfs.log')
  const children = new Set()
  const spawnChild = (...args) => {
    const c = new Child(...args)
    children.add(c)
    return c
  }
  t.after(async () => {
    for (const c of children) await c.kill()
    await replication.stop('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  })

  let acked = 0 // the last commit any primary process acknowledged
  const primaries = []
  const startPrimary = () => {
    const p = spawnChild(PRIMARY, file, { INTERVAL: '50', SLOW_TX: '1', CHECKPOINTS: 'external' })
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
    const r = spawnChild(REPLICA, uri, { LITESTREAM_VFS: so, LITESTREAM_LOG_FILE: vfsLog })
    replicas.push(r)
    return r
  }
  const caughtUp = (r, tx, what) =>
    r.waitFor((lines) => emissions(lines).some((e) => e.tx >= tx), `${what}: tx ${tx} on the replica`)

  let p = startPrimary()
  await p.waitFor(() => lastAck() >= 1, 'the first commit on the primary')
  await replication.start()
  await p.waitFor(() => lastAck() >= 5, 'five commits on the primary')
  await replication.sync()
  let r = startReplica()
  await caughtUp(r, lastAck(), 'the first commits')

  for (let round = 1; round <= 3; round++) {
    // The replica's process is lost while the primary goes on; it comes back and catches up.
    await r.kill()
    await sleep(200 + Math.random() * 600)
    const away = lastAck()
    r = startReplica()
    await p.waitFor(() => lastAck() > away, 'a commit while the replica was away')
    await caughtUp(r, lastAck(), `round ${round}, after the replica's restart`)

    // The primary's machine is lost in the middle of a transaction: its process and its
    // Litestream. Both restart beside the surviving file; the replica's process stays up.
    p = await killPrimaryInTransaction(p, {
      engine: replication,
      startPrimary,
      lastAck,
      caughtUp: (tx, what) => caughtUp(r, tx, what),
      what: `round ${round}, after the primary's restart`,
    })
  }

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
  assert.ok(fs.existsSync(vfsLog), 'the VFS log file (nothing is logged in it at the default level)')
  process.env.LITESTREAM_LOG_FILE = vfsLog // not the test's stdout
  t.after(() => delete process.env.LITESTREAM_LOG_FILE) // the directory goes: a later load would fail
  await Database.loadExtension(so)
  const db = await Database.open(uri, { vfs: 'litestream', replica: true })
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

    // docs/replication.md: the extension's functions are on connections on its VFS (its log
    // went where LITESTREAM_LOG_FILE, read when it loaded, said: checked above); the name before
    // the '?' is only a name, no file of it was made; and with nothing committed, every check
    // re-runs the live query (the VFS makes each read transaction look like a change), which
    // emits nothing new.
    assert.match((await db.selectOne('SELECT litestream_txid() AS txid')).txid, /^[0-9a-f]{16}$/)
    assert.ok(!fs.existsSync(path.join(process.cwd(), 'app.db')), 'a local file named after the URI')
    const seen = []
    const sub = db.stream('SELECT count(*) AS n FROM items').subscribe((rows) => seen.push(rows))
    await sleep(500)
    sub.unsubscribe()
    const { requeries, unchangedSuppressed } = (await db.diagnostics()).streams
    assert.equal(seen.length, 1)
    // A re-run queued or running as the subscription ends is counted, and never compared.
    assert.ok(
      requeries >= 5 && requeries - unchangedSuppressed <= 1,
      `${requeries} re-runs, ${unchangedSuppressed} suppressed`,
    )
  } finally {
    await db.close()
  }
})

test("Litestream's VFS extension loaded with a wrong entry point: ERR_EXTENSION, and the process goes on (its Go runtime stays mapped)", async () => {
  const so = findLitestreamVfs()
  // In a child: the crash this guards against would take the test runner down with it.
  const script = `
    import { Database } from ${JSON.stringify(new URL('../dist/esm/index.mjs', import.meta.url).href)}
    await Database.loadExtension({ path: ${JSON.stringify(so)}, entryPoint: 'no_such_init' }).catch((e) => console.log(e.code))
    await Database.loadExtension(${JSON.stringify(so)})
    const db = await Database.open(':memory:')
    console.log((await db.selectOne('SELECT 1 AS one')).one)
    await db.close()
    await new Promise((r) => setTimeout(r, 300))
    console.log('alive')`
  const { status, signal, stdout } = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  })
  assert.deepEqual(
    { status, signal, lines: stdout.trim().split('\n') },
    {
      status: 0,
      signal: null,
      lines: ['ERR_EXTENSION', '1', 'alive'],
    },
  )
})
