// The benchmark lanes check the work every sample does: a driver that returns fewer rows or
// issues fewer statements than the lane declares must fail the lane, not produce a number.

import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import v8 from 'node:v8'
import vm from 'node:vm'
import { Worker } from 'node:worker_threads'
import { LANES, LIBRARY_LIMITS, runLane, supports } from '../bench/lanes/index.mjs'
import { measureTenants, TENANT_CONFIGS } from '../bench/lanes/tenants.mjs'
import { CONFIGS, counting, measure } from '../bench/measure.mjs'

// A fake synchronous driver over no database: `SELECT * FROM t WHERE id <= ?` returns rows
// computed from the parameter, shortened by `short` rows.
function fakeDriver({ short = 0 } = {}) {
  return {
    sync: true,
    exec() {},
    prepare: () => ({
      all: ([n]) => Array.from({ length: Math.max(0, n - short) }, (_, i) => ({ id: i + 1 })),
      get: () => ({ id: 1 }),
    }),
    transaction: (body) => () => body({}),
    close() {},
  }
}

test('a driver doing the declared work passes the select lane', async () => {
  const cases = await runLane('select', fakeDriver(), CONFIGS.smoke)
  assert.deepEqual(
    cases.map((c) => [c.id, c.checkedSamples]),
    [
      ['select.10', 1],
      ['select.100', 1],
      ['select.1000', 1],
      ['select.10000', 1],
    ],
  )
})

test('a driver that drops a row fails the lane', async () => {
  await assert.rejects(
    runLane('select', fakeDriver({ short: 1 }), CONFIGS.smoke),
    /work check failed.*rows = 9, expected 10/,
  )
})

test('an op that issues fewer statements than declared fails (operation count)', async () => {
  const d = counting(fakeDriver(), { ops: 0 })
  const q = await d.prepare('SELECT * FROM t WHERE id <= ?')
  const op = () => [q.all([10])] // declares two queries, issues one
  await assert.rejects(
    measure(d, op, CONFIGS.smoke, { expect: { ops: 2, rows: 20 }, count: (rs) => ({ rows: rs.flat().length }) }),
    /ops = 1, expected 2/,
  )
})

// The interleaved lane (lanes/interleaved.mjs) times the work between its calls into gaps.ms;
// measure leaves it out of both clocks. An op that reports far more than it took (1 s of gaps
// in a call of well under 1 ms) must come out far below zero, sync and async alike.
test('measure leaves the work an op reports in gaps out of its wall and JS-thread time', async () => {
  for (const sync of [true, false]) {
    const d = counting({ ...fakeDriver(), sync }, { ops: 0 })
    const gaps = { ms: 0 }
    const op = () => {
      d.ctr.ops++
      gaps.ms += 1000
      return sync ? 1 : Promise.resolve(1)
    }
    const m = await measure(d, op, CONFIGS.smoke, { expect: { ops: 1 }, count: () => ({}), gaps })
    assert.ok(m.samples.wall[0] < -900, `sync ${sync}: wall ${m.samples.wall[0]}`)
    assert.ok(m.samples.js[0] < -900, `sync ${sync}: js ${m.samples.js[0]}`)
  }
})

// The tenants lane (issue 33, bench/lanes/tenants.mjs) over fake databases: a Map per tenant.
// `mixUp`: once every database is open, reads answer with tenant 0's row (a driver that reads
// the wrong database). `perOpen(i)`: what opening tenant i also does (start a thread, hold
// memory). The lane reads RSS after a GC: gc() as `node --expose-gc` would give it.
v8.setFlagsFromString('--expose-gc')
globalThis.gc ??= vm.runInNewContext('gc')

function fakeTenantOpen({ mixUp = false, perOpen = () => {}, failAt = -1, closed = [], paths = [] } = {}) {
  const rows = []
  const held = []
  let gets = 0
  const open = async (path) => {
    const i = rows.length
    if (i === failAt) throw new Error(`cannot open tenant ${i}`)
    paths.push(path)
    const table = new Map()
    rows.push(table)
    held.push(perOpen(i, path))
    return {
      sync: true,
      exec() {},
      prepare: (sql) => ({
        run: ([id, name, value]) => table.set(id, { id, name, value }),
        // (the first `dbs` gets are the opens' first reads)
        get: ([id]) => (mixUp && ++gets > TENANT_CONFIGS.smoke.dbs ? rows[0] : table).get(id),
        sql,
      }),
      close() {
        closed.push(i)
        const h = held[i]
        if (h?.terminate) return h.terminate()
      },
    }
  }
  return open
}

test('the tenants lane: a driver doing the work passes; every database and read is checked', async () => {
  const cases = await runLane('tenants', null, { ...CONFIGS.smoke, lib: 'fake', open: fakeTenantOpen() })
  const byId = Object.fromEntries(cases.map((c) => [c.id, c]))
  assert.deepEqual(Object.keys(byId), ['tenants.open', 'tenants.idle', 'tenants.reads'])
  const sizes = TENANT_CONFIGS.smoke
  assert.equal(byId['tenants.open'].samples.wall.length, sizes.dbs)
  assert.equal(byId['tenants.open'].checkedSamples, sizes.dbs)
  assert.equal(byId['tenants.reads'].samples.wall.length, sizes.rounds)
  assert.deepEqual(byId['tenants.reads'].expect, { ops: sizes.reads, rows: sizes.reads })
  assert.equal(byId['tenants.idle'].dbs, sizes.dbs)
  // (fake databases start no thread; the process's own may come and go)
  assert.ok(byId['tenants.idle'].samples.threads[0] <= 2, `threads +${byId['tenants.idle'].samples.threads[0]}`)
})

test('the tenants lane: a read answered from another database fails the lane', async () => {
  await assert.rejects(
    runLane('tenants', null, { ...CONFIGS.smoke, lib: 'fake', open: fakeTenantOpen({ mixUp: true }) }),
    /work check failed in read sample 1: rows = \d+, expected 100/,
  )
})

test('the tenants lane counts the threads the databases start and the memory they hold', async () => {
  const MB = 1024 * 1024
  const perOpen = (i) =>
    i % 2 === 0
      ? new Worker('setInterval(() => {}, 1000)', { eval: true }) // a thread (Node's worker: more than one)
      : Buffer.alloc(8 * MB, 1) // memory, touched
  const cases = await runLane('tenants', null, { ...CONFIGS.smoke, lib: 'fake', open: fakeTenantOpen({ perOpen }) })
  const idle = cases.find((c) => c.id === 'tenants.idle')
  const workers = Math.ceil(TENANT_CONFIGS.smoke.dbs / 2)
  assert.ok(idle.samples.threads[0] >= workers, `threads +${idle.samples.threads[0]}, ${workers} workers`)
  // 8 MB on every other database, 4 MB each on average (workers' heaps add to it)
  assert.ok(idle.samples.rssPerDb[0] >= 3, `RSS per database ${idle.samples.rssPerDb[0]} MB`)
})

test('the tenants lane closes its databases and removes its directory, also when an open fails', async () => {
  for (const failAt of [-1, 3]) {
    const closed = []
    const paths = []
    const run = runLane('tenants', null, {
      ...CONFIGS.smoke,
      lib: 'fake',
      open: fakeTenantOpen({ failAt, closed, paths }),
    })
    if (failAt < 0) await run
    else await assert.rejects(run, /cannot open tenant 3/)
    const opened = failAt < 0 ? TENANT_CONFIGS.smoke.dbs : failAt
    assert.deepEqual(
      closed.toSorted((a, b) => a - b),
      Array.from({ length: opened }, (_, i) => i),
    )
    assert.equal(existsSync(dirname(paths[0])), false, `${dirname(paths[0])} removed`)
  }
})

test('tenants-no-pause reads right after the opens: no idle time, no GC, and every read checked', async () => {
  const cases = await runLane('tenants-no-pause', null, { ...CONFIGS.smoke, lib: 'fake', open: fakeTenantOpen() })
  assert.deepEqual(
    cases.map((c) => [c.id, c.checkedSamples, c.expect]),
    [
      [
        'tenants.reads-no-pause',
        TENANT_CONFIGS.smoke.rounds,
        { ops: TENANT_CONFIGS.smoke.reads, rows: TENANT_CONFIGS.smoke.reads },
      ],
    ],
  )
  await assert.rejects(
    runLane('tenants-no-pause', null, { ...CONFIGS.smoke, lib: 'fake', open: fakeTenantOpen({ mixUp: true }) }),
    /work check failed in read sample 1/,
  )
  // The idle step (sleep, GC, RSS) is skipped: nothing it measures is there, however long idleMs.
  const dir = join(tmpdir(), `resqlite-no-pause-${process.pid}`)
  const sizes = { ...TENANT_CONFIGS.smoke, idleMs: 60_000 }
  const m = await measureTenants({ open: fakeTenantOpen(), dir, ...sizes, pause: false })
  assert.equal(m.threadsAt.idle, undefined)
  assert.equal(m.rssPerDb, undefined)
  assert.equal(m.reads.wall.length, sizes.rounds)
})

test('LIBRARY_LIMITS names lanes that exist, and supports() leaves them out for that library only', () => {
  for (const [lib, limits] of Object.entries(LIBRARY_LIMITS)) {
    for (const [lane, why] of Object.entries(limits)) {
      assert.ok(why, `${lib} / ${lane}: a reason`)
      assert.ok(LANES[lane], `${lib}: no lane ${lane}`)
      assert.equal(supports(lane, lib), false, `${lane} / ${lib}`)
      assert.equal(supports(lane, 'better-sqlite3'), true, `${lane} / better-sqlite3`)
    }
  }
  assert.equal(supports('point-awaited', 'photostructure-pool'), true)
})
