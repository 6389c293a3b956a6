// Thousands of databases in one process (issue 33): database-per-tenant, as a Node server
// holds it. In one process, for one library:
//   1. N databases are opened one after another; each gets a table, one write (an INSERT of
//      one row) and one read (that row, by id). Each database's open + create table + first
//      write + first read is one sample (tenants.open).
//   2. The process idles (TENANT_CONFIGS' idleMs), is GC'd; then the threads it added (/proc/self/task) and
//      its RSS growth per database, both against the process before the first open
//      (tenants.idle). "threads" is the most seen at three points: after the opens, after the
//      idle time, after the reads (a pool that grows under load counts).
//   3. Point reads, one at a time and awaited, each on a random tenant (seeded: the same
//      sequence for every library with the same N); one sample is READS of them (tenants.reads).
// The lane opens databases of its own (OWN_DATABASE_LANES in index.mjs): child.mjs runs it
// before opening the suite's database, so the counts start from a process with no database
// open, and run.mjs runs every (lane, library) in a fresh process, so no other library's
// threads or memory are counted.
// The files go in a directory of their own on tmpfs (/dev/shm, when there is one), removed when
// the lane ends: switching a new file to WAL and its first commit sync it to disk, and on this
// machine's shared disk those syncs took milliseconds each, so on disk the opens measured the
// disk (the same for every library) and 1,000 of them per library made the lane take minutes.
// bench/experiments/tenants.mjs --dir=<a disk directory> measures on a disk.
// bench/experiments/tenants.mjs runs the same measures standalone, with any N.
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { rng } from '../data.mjs'
import { checkCounts, counting } from '../measure.mjs'
import { hashRows, makeCase } from './common.mjs'

// Per config: databases, reads per sample, samples of reads, idle time before RSS is read.
export const TENANT_CONFIGS = {
  full: { dbs: 1000, reads: 5000, rounds: 5, idleMs: 1000 },
  quick: { dbs: 100, reads: 5000, rounds: 2, idleMs: 500 },
  smoke: { dbs: 5, reads: 100, rounds: 1, idleMs: 50 },
  callgrind: { dbs: 20, reads: 1000, rounds: 1, idleMs: 50 },
}

// Libraries that cannot hold the configured number of databases in one process: the most
// they get, and why (the case's note says it in the report).
export const TENANT_CAPS = {
  powersync: {
    dbs: 10,
    why: (dbs) =>
      `${dbs} databases, not the others' number: each PowerSync database starts a writer and 5 reader worker_threads, a V8 isolate each, so its memory and open time per database (this lane's numbers) times 1,000 are more than this machine or the lane's time allows; its reads go to random ones of ${dbs}`,
  },
}

const SEED = 33
const CREATE = 'CREATE TABLE kv (id INTEGER PRIMARY KEY, name TEXT, value REAL)'
const INSERT = 'INSERT INTO kv (id, name, value) VALUES (?, ?, ?)'
const SELECT = 'SELECT * FROM kv WHERE id = ?'
const MB = 1024 * 1024
// What tenant i holds: one row, its own.
const rowOf = (i) => ({ id: 1, name: `tenant ${i}`, value: i + 0.5 })

/** Threads of this process (Linux: /proc/self/task); undefined elsewhere. */
export const threadCount = () => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : undefined)

const isTenantRow = (r, i) => r?.id === 1 && r.name === `tenant ${i}` && r.value === i + 0.5

/**
 * The measures, raw: opens `dbs` databases with `open` (a bench driver's), then idles, then
 * reads. Returns { open: {wall, js}, threads, threadsAt, rssPerDb, rssMB, reads: {wall, js},
 * closeMs, sync }. pause: false reads right after the last open, without the idle time and the
 * GC (no threadsAt.idle, rssMB, rssPerDb then). Needs --expose-gc. Every database is closed and `dir` removed before it
 * returns, also when it throws.
 */
export async function measureTenants({ open, dbs, reads, rounds, idleMs, dir, pause = true }) {
  if (!globalThis.gc) throw new Error('the tenants lane needs --expose-gc (RSS after GC)')
  if (!(dbs >= 1) || !(reads >= 1) || !(rounds >= 1))
    throw new Error(`tenants: bad sizes ${JSON.stringify({ dbs, reads, rounds })}`)
  const ctr = { ops: 0 }
  const tenants = []
  const out = { open: { wall: [], js: [] }, reads: { wall: [], js: [] }, threadsAt: {} }
  try {
    globalThis.gc()
    globalThis.gc()
    const threads0 = threadCount()
    const added = () => (threads0 === undefined ? undefined : threadCount() - threads0)
    const rss0 = process.memoryUsage.rss()

    // 1. open + create + first write + first read, one database at a time
    for (let i = 0; i < dbs; i++) {
      const ops0 = ctr.ops
      const e0 = performance.eventLoopUtilization()
      const t0 = performance.now()
      const db = await open(join(dir, `tenant-${i}.db`), { versions: false })
      const t = counting(db, ctr)
      await t.exec(CREATE)
      const insert = await t.prepare(INSERT)
      const { id, name, value } = rowOf(i)
      await insert.run([id, name, value])
      const select = await t.prepare(SELECT)
      const row = await select.get([1])
      const wall = performance.now() - t0
      out.open.wall.push(wall)
      out.open.js.push(db.sync ? wall : performance.eventLoopUtilization(e0).active)
      out.sync = db.sync
      tenants.push({ db, select })
      checkCounts({ ops: 2, row: true }, { ops: ctr.ops - ops0, row: isTenantRow(row, i) }, `opening tenant ${i}`)
      if (i === 0) out.firstRow = row
    }
    out.threadsAt.opened = added()

    // 2. idle, GC'd: threads and RSS per database (pause: false skips it, reads come next)
    if (pause) {
      await sleep(idleMs)
      globalThis.gc()
      globalThis.gc()
      out.threadsAt.idle = added()
      out.rssMB = (process.memoryUsage.rss() - rss0) / MB
      out.rssPerDb = out.rssMB / dbs
    }

    // 3. awaited point reads, each on a random tenant; the sequence is drawn before timing
    const rand = rng(SEED)
    const got = new Array(reads)
    for (let s = 0; s < rounds; s++) {
      const which = Array.from({ length: reads }, () => Math.floor(rand() * dbs))
      const stmts = which.map((k) => tenants[k].select)
      const params = [1]
      const ops0 = ctr.ops
      const e0 = performance.eventLoopUtilization()
      const t0 = performance.now()
      if (out.sync) for (let j = 0; j < reads; j++) got[j] = stmts[j].get(params)
      else for (let j = 0; j < reads; j++) got[j] = await stmts[j].get(params)
      const wall = performance.now() - t0
      out.reads.wall.push(wall)
      out.reads.js.push(out.sync ? wall : performance.eventLoopUtilization(e0).active)
      const right = which.reduce((n, k, j) => n + (isTenantRow(got[j], k) ? 1 : 0), 0)
      checkCounts({ ops: reads, rows: reads }, { ops: ctr.ops - ops0, rows: right }, `in read sample ${s + 1}`)
    }
    out.threadsAt.reads = added()
    out.threads = threads0 === undefined ? undefined : Math.max(...Object.values(out.threadsAt))

    const t0 = performance.now()
    while (tenants.length) await tenants.pop().db.close()
    out.closeMs = performance.now() - t0
    return out
  } finally {
    // (after a failure: close what is still open; the failure is what the lane reports)
    for (const { db } of tenants) {
      try {
        await db.close()
      } catch {}
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Where the tenants' directory goes: tmpfs (/dev/shm) when there is a writable one, else `fallback`. */
export function tenantsBase(fallback = os.tmpdir()) {
  try {
    accessSync('/dev/shm', constants.W_OK)
    return '/dev/shm'
  } catch {
    return fallback
  }
}

/** The sizes for a config and library: { dbs, reads, rounds, idleMs, note }. */
export function tenantSizes(config, lib) {
  const sizes = { ...(TENANT_CONFIGS[config] ?? TENANT_CONFIGS.full) }
  const cap = TENANT_CAPS[lib]
  if (cap && cap.dbs < sizes.dbs) Object.assign(sizes, { dbs: cap.dbs, note: cap.why(cap.dbs) })
  return sizes
}

// The measures for a lane: d is null (it opens its own databases); cfg carries the driver's
// open (child.mjs).
async function measureLane(cfg, pause) {
  if (!cfg.open || !cfg.lib) throw new Error('the tenants lanes need cfg.open and cfg.lib (child.mjs passes them)')
  const sizes = tenantSizes(cfg.name, cfg.lib)
  const dir = mkdtempSync(join(tenantsBase(cfg.db ? dirname(cfg.db) : undefined), `resqlite-bench-tenants-${cfg.lib}-`))
  // (measureTenants removes it; this covers an exit before it could, e.g. a failed open)
  const remove = () => rmSync(dir, { recursive: true, force: true })
  process.once('exit', remove)
  const m = await measureTenants({ open: cfg.open, dir, ...sizes, pause }).finally(() => process.off('exit', remove))
  const extra = { dbs: sizes.dbs, ...(sizes.note ? { note: sizes.note } : {}) }
  return { sizes, m, extra }
}

const readsCase = (id, title, sizes, m, extra) =>
  makeCase(
    'tenants',
    id,
    title,
    `${sizes.reads} reads, each its tenant's row`,
    {
      n: sizes.rounds,
      samples: m.reads,
      expect: { ops: sizes.reads, rows: sizes.reads },
      checkedSamples: sizes.rounds,
    },
    { ...extra, perSample: [sizes.reads, 'queries'] },
  )

async function tenantsLane(_d, cfg) {
  const { sizes, m, extra } = await measureLane(cfg, true)
  const n = sizes.dbs
  const sum = (xs) => xs.reduce((a, b) => a + b, 0)
  return [
    makeCase(
      'tenants',
      'tenants.open',
      'tenants: open + create table + first write + first read, per database',
      hashRows([m.firstRow]),
      {
        n,
        samples: m.open,
        expect: { ops: 2, row: true },
        checkedSamples: n,
      },
      extra,
    ),
    makeCase(
      'tenants',
      'tenants.idle',
      'tenants: the databases open and idle (wall: all the opens)',
      'databases open and idle',
      {
        n: 1,
        samples: {
          wall: [sum(m.open.wall)],
          js: [sum(m.open.js)],
          ...(m.threads === undefined ? {} : { threads: [m.threads] }),
          rssPerDb: [m.rssPerDb],
          closeAll: [m.closeMs],
        },
        expect: { dbs: n },
        checkedSamples: 1,
      },
      { ...extra, threadsAt: m.threadsAt },
    ),
    readsCase(
      'tenants.reads',
      `tenants: ${sizes.reads.toLocaleString('en')} awaited point reads, each on a random database`,
      sizes,
      m,
      extra,
    ),
  ]
}

// The same reads right after the opens, with no idle time and no GC between (issue 47): a
// server takes requests as soon as its tenants are open. Its own lane, in a process of its
// own, so the tenants lane's idle RSS and threads stay free of these reads.
async function tenantsNoPauseLane(_d, cfg) {
  const { sizes, m, extra } = await measureLane(cfg, false)
  return [
    readsCase(
      'tenants.reads-no-pause',
      `tenants: ${sizes.reads.toLocaleString('en')} awaited point reads, each on a random database, right after the opens (no idle time, no GC)`,
      sizes,
      m,
      extra,
    ),
  ]
}

export const TENANT_LANES = { tenants: tenantsLane, 'tenants-no-pause': tenantsNoPauseLane }
// Lanes that open their own databases: child.mjs runs them before opening the suite's.
export const OWN_DATABASE_LANES = ['tenants', 'tenants-no-pause']
