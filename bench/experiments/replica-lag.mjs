// Read replicas on this machine (experiments/052, 055): replication lag and read cost of LiteFS
// and of Litestream's VFS read replicas. Two "machines" are two sets of processes that share only
// the replication channel: LiteFS's HTTP stream on loopback, or a file:// Litestream replica.
//
// Run: node bench/experiments/replica-lag.mjs [litefs|litestream-vfs|litestream-vfs-python] [seconds-per-rate]
//      (litestream-vfs needs LITESTREAM_VFS=<path of litestream-vfs.so>, built from Litestream's
//      Go module by `bash scripts/build-litestream-vfs.sh v0.5.18 <file>`, and litestream on
//      PATH; its replica side is resqlite (`vfs: 'litestream'`, 055), or with
//      litestream-vfs-python Debian's /usr/bin/python3 (052). RATES=10,100 picks the rates.)
//
// A writer process commits one row per transaction, paced at 10, 100 and 1,000 commits/s, and
// records when each commit was acknowledged. A replica process polls `max(id)` every ~1 ms
// (readable) and, for LiteFS, holds a resqlite live query on the same (`replica: true`,
// watchExternalChanges every WATCH ms) and records each emission. lag(i) = first time commit i
// was readable (or emitted) on the replica − its acknowledgement on the primary. The clocks are
// one machine's (performance.timeOrigin + performance.now()).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = fileURLToPath(import.meta.url)
const INDEX = new URL('../../dist/esm/index.mjs', import.meta.url).href
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const WATCH = Number(process.env.WATCH ?? 10)
/** Alternating rounds of reads on the replica and on the local copy (the median is reported). */
const ROUNDS = Number(process.env.ROUNDS ?? 7)

/** Commits `rate` single-row transactions a second for `seconds`; prints [id, ackTime][]. */
async function writer(file, rate, seconds) {
  const { Database } = await import(INDEX)
  const db = await Database.open(file, { checkpoints: process.env.EXTERNAL ? 'external' : 'auto' })
  let id = (await db.selectOne('SELECT coalesce(max(id), 0) AS m FROM t')).m
  const acks = []
  const start = now()
  const n = Math.round(rate * seconds)
  for (let i = 0; i < n; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - now()
    if (wait > 1) await sleep(wait)
    id++
    await db.execute('INSERT INTO t (id, at) VALUES (?, ?)', [id, now()])
    acks.push([id, now()])
  }
  await db.close()
  process.stdout.write(JSON.stringify({ acks, achieved: n / ((now() - start) / 1000) }))
}

/** Polls max(id) and holds a live query on it; on stdin 'dump' prints what it saw and exits. */
async function replica(file) {
  const { Database } = await import(INDEX)
  const db = await Database.open(file, { replica: true, watchExternalChanges: { interval: WATCH }, ...(await vfs()) })
  const polled = []
  const emitted = []
  let last = 0
  db.stream('SELECT max(id) AS m FROM t').subscribe((rows) => {
    emitted.push([rows[0].m ?? 0, now()])
    if (emitted.length === 1) process.stdout.write('ready\n')
  })
  let polling = true
  ;(async () => {
    while (polling) {
      const { m } = await db.selectOne('SELECT coalesce(max(id), 0) AS m FROM t')
      if (m !== last) polled.push([m, now()])
      last = m
      await sleep(1)
    }
  })()
  process.stdin.once('data', async () => {
    polling = false
    await sleep(20)
    process.stdout.write(`${JSON.stringify({ polled, emitted })}\n`)
    await db.close()
    process.exit(0)
  })
}

/** Reads on the replica and on a local copy, alternating rounds of 2,000: a point read by
 * random id, a 100-row range, and point reads 16 at a time (Promise.all). Prints µs per read of
 * each (the median of ROUNDS rounds, default 7). */
async function reads(file, local) {
  const { Database } = await import(INDEX)
  const remote = await Database.open(file, { replica: true, ...(await vfs()) })
  await remote.backup(local)
  const copy = await Database.open(local, { readonly: true })
  const { m } = await remote.selectOne('SELECT max(id) AS m FROM t')
  const id = (i) => 1 + ((i * 7919) % (m - 100))
  const shapes = {
    point: (db, i) => db.selectOne('SELECT * FROM t WHERE id = ?', [id(i)]),
    range100: (db, i) => db.select('SELECT * FROM t WHERE id BETWEEN ? AND ?', [id(i), id(i) + 99]),
    point16: (db, i) =>
      Promise.all(Array.from({ length: 16 }, (_, j) => db.selectOne('SELECT * FROM t WHERE id = ?', [id(i * 16 + j)]))),
  }
  const out = {}
  for (const [shape, run] of Object.entries(shapes)) {
    const per = shape === 'point16' ? 16 : 1
    // Wall time, and the CPU time of the whole process (every thread: resqlite's, and the VFS's
    // pollers), each per read: on a loaded machine the CPU time varies less.
    const round = async (db, side) => {
      const start = performance.now()
      const cpu = process.cpuUsage()
      for (let i = 0; i < 2000 / per; i++) await run(db, i)
      const used = process.cpuUsage(cpu)
      times[side].push(((performance.now() - start) * 1000) / 2000)
      cpus[side].push((used.user + used.system) / 2000)
    }
    const times = { replica: [], local: [] }
    const cpus = { replica: [], local: [] }
    for (let r = 0; r < ROUNDS; r++) {
      await round(remote, 'replica')
      await round(copy, 'local')
    }
    const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1]
    out[shape] = {
      replica: median(times.replica),
      local: median(times.local),
      replicaCpu: median(cpus.replica),
      localCpu: median(cpus.local),
    }
  }
  process.stdout.write(JSON.stringify(out))
  await remote.close()
  await copy.close()
}

/** With LITESTREAM_VFS, a replica opens through Litestream's VFS (its path is a URI). */
async function vfs() {
  if (!process.env.LITESTREAM_VFS) return {}
  const { Database } = await import(INDEX)
  await Database.loadExtension(process.env.LITESTREAM_VFS)
  return { vfs: 'litestream', ...(process.env.READERS ? { readers: Number(process.env.READERS) } : {}) }
}

function child(args, env = {}) {
  const c = spawn(args[0], args.slice(1), { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } })
  c.out = ''
  c.stdout.on('data', (d) => (c.out += d))
  c.done = new Promise((resolve) => c.once('exit', resolve))
  return c
}

async function until(check, what, ms = 30_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

/** For each acknowledged id, the first time the replica showed an id ≥ it, minus the ack. */
function lags(acks, seen) {
  const out = []
  let j = 0
  for (const [id, at] of acks) {
    while (j < seen.length && seen[j][0] < id) j++
    if (j === seen.length) throw new Error(`commit ${id} never seen on the replica`)
    out.push(seen[j][1] - at)
  }
  return out
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))]
  return { n: s.length, p50: q(0.5), p99: q(0.99), max: s.at(-1) }
}
const fmt = (s) => `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (n ${s.n})`

async function main(engine, seconds) {
  const { Database } = await import(INDEX)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-replica-lag-'))
  const cleanup = []
  try {
    let primaryFile
    let replicaCmd
    let so
    if (engine === 'litefs') {
      const { cluster } = await import('../../examples/replicas/litefs.mjs')
      const { primary, replicas } = await cluster(dir)
      cleanup.push(
        () => replicas[0].stop(),
        () => primary.stop(),
      )
      await primary.start()
      await replicas[0].start()
      primaryFile = primary.file('lag.db')
      const replicaFile = replicas[0].file('lag.db')
      const db = await Database.open(primaryFile)
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, at REAL)')
      await db.close()
      await until(() => fs.existsSync(replicaFile), 'the database on the replica')
      replicaCmd = [process.execPath, HERE, 'replica', replicaFile]
    } else if (engine === 'litestream-vfs' || engine === 'litestream-vfs-python') {
      so = process.env.LITESTREAM_VFS
      if (!so) throw new Error('set LITESTREAM_VFS to the path of litestream-vfs.so')
      primaryFile = path.join(dir, 'lag.db')
      const replicaUrl = `file://${path.join(dir, 'replica')}`
      fs.writeFileSync(
        path.join(dir, 'litestream.yml'),
        `dbs:\n  - path: ${primaryFile}\n    replica:\n      url: ${replicaUrl}\n      sync-interval: ${process.env.SYNC ?? '10ms'}\n    monitor-interval: ${process.env.MONITOR ?? '10ms'}\n`,
      )
      const db = await Database.open(primaryFile, { checkpoints: 'external' })
      await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, at REAL)')
      await db.close()
      const ls = child(['litestream', 'replicate', '-config', path.join(dir, 'litestream.yml')])
      cleanup.push(async () => {
        ls.kill()
        await ls.done
      })
      await until(() => fs.existsSync(path.join(dir, 'replica', 'ltx')), 'the first snapshot')
      process.env.EXTERNAL = '1'
      const poll = process.env.POLL ?? '10ms'
      replicaCmd =
        engine === 'litestream-vfs'
          ? [
              process.execPath,
              HERE,
              'replica',
              `file:${primaryFile}.replica?replica_url=${replicaUrl}&poll_interval=${poll}`,
            ]
          : [
              '/usr/bin/python3',
              fileURLToPath(new URL('./replica-lag-vfs.py', import.meta.url)),
              so,
              `file:${primaryFile}.replica?vfs=litestream&replica_url=${replicaUrl}&poll_interval=${poll}`,
            ]
    } else throw new Error(`unknown engine ${engine}`)

    console.log(`${engine}: ${os.cpus().length} CPUs, ${seconds} s per rate, live-query watch interval ${WATCH} ms`)
    for (const rate of (process.env.RATES ?? '10,100,1000').split(',').filter(Boolean).map(Number)) {
      const r = child(replicaCmd, { LITESTREAM_LOG_FILE: path.join(dir, 'vfs.log'), LITESTREAM_VFS: so })
      await until(() => r.out.includes('ready\n'), 'the replica')
      await sleep(300)
      const w = child([process.execPath, HERE, 'writer', primaryFile, String(rate), String(seconds)])
      await w.done
      const { acks, achieved } = JSON.parse(w.out)
      const lastId = acks.at(-1)[0]
      await sleep(2000)
      r.stdin.write('dump\n')
      await r.done
      const { polled, emitted } = JSON.parse(r.out.split('\n').findLast((l) => l.startsWith('{')))
      const readable = stats(lags(acks, polled))
      console.log(`${rate}/s (achieved ${achieved.toFixed(0)}/s, last id ${lastId})`)
      console.log(`  readable on the replica: ${fmt(readable)}`)
      if (emitted.length > 0) {
        const live = stats(lags(acks, emitted))
        console.log(`  live-query emission:     ${fmt(live)}`)
        console.log(`  live p99 / readable p99: ${(live.p99 / readable.p99).toFixed(2)}`)
      }
    }
    const readCmd =
      engine === 'litestream-vfs-python'
        ? [...replicaCmd, 'reads', path.join(dir, 'local.db')]
        : [process.execPath, HERE, 'reads', replicaCmd[3], path.join(dir, 'local.db')]
    const rd = child(readCmd, { LITESTREAM_LOG_FILE: path.join(dir, 'vfs.log'), LITESTREAM_VFS: so })
    await rd.done
    const cost = JSON.parse(rd.out.split('\n').findLast((l) => l.startsWith('{')))
    for (const [shape, c] of Object.entries(cost)) {
      console.log(
        `read ${shape} (warm, µs per read, median of ${ROUNDS} rounds): replica ${c.replica.toFixed(1)}, ` +
          `local file ${c.local.toFixed(1)}, ratio ${(c.replica / c.local).toFixed(2)}` +
          (c.replicaCpu === undefined
            ? ''
            : `; CPU µs per read: replica ${c.replicaCpu.toFixed(1)}, local ${c.localCpu.toFixed(1)}, ` +
              `ratio ${(c.replicaCpu / c.localCpu).toFixed(2)}`),
      )
    }
  } finally {
    for (const f of cleanup) await f()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const role = process.argv[2]
if (role === 'writer') await writer(process.argv[3], Number(process.argv[4]), Number(process.argv[5]))
else if (role === 'replica') await replica(process.argv[3])
else if (role === 'reads') await reads(process.argv[3], process.argv[4])
else await main(role ?? 'litefs', Number(process.argv[3] ?? 10))
