// Power loss (issue 43): a child process runs a random mix of writes, checkpoints and (encrypted)
// rekeys with a shim preloaded (test/power-loss/shim.c) that logs every file call on its
// database's files with the bytes written, and its acknowledgements in the same order. The log
// is replayed to many cut points, each write after its file's last fsync dropped, kept or torn
// at 512-byte sectors (test/power-loss/replay.mjs), and each state is opened and checked:
// integrity_check passes, no intact database is refused, every transaction is all or nothing,
// the transactions present are a prefix of those issued, and at synchronous = FULL every
// acknowledged one is there (at NORMAL only the last ones may be missing: the prefix rule).
// It proves it can fail: with synchronous = OFF, or acknowledgements written before the call,
// it must report losses. Linux only (LD_PRELOAD). POWER_LOSS_SEED=<n> replays other seeds;
// POWER_LOSS_KEEP=<dir> keeps the files of each failing state (the keys: workload.mjs keyFor).

import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { tempDir } from './helpers.mjs'
import { check, cutStates, expected, marks, parseLog, unsyncedJournalCounts, writeState } from './power-loss/replay.mjs'
import { prng } from './power-loss/workload.mjs'

const HERE = fileURLToPath(new URL('./power-loss/', import.meta.url))
const SEED = Number(process.env.POWER_LOSS_SEED ?? 43)
const RUNS = 3 // child runs per configuration: a different workload each
const CUTS = 70 // cut points replayed per run
const KEEP = process.env.POWER_LOSS_KEEP // a directory: each failing state's files are kept there
const OPS = 90 // operations per child run

const linuxOnly = { skip: process.platform !== 'linux' && 'Linux only: the shim is loaded with LD_PRELOAD' }

/** Compiles the shim into dir with the C compiler (a project prerequisite). */
function buildShim(dir) {
  const out = path.join(dir, 'shim.so')
  execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', out, path.join(HERE, 'shim.c'), '-ldl'], { stdio: 'pipe' })
  return out
}

/** Runs the child under the shim; returns its directory and the parsed log. */
function runChild(dir, config) {
  const work = path.join(dir, `run-${config.seed}`)
  fs.mkdirSync(work)
  const log = path.join(dir, `log-${config.seed}`)
  const child = spawnSync(process.execPath, [path.join(HERE, 'child.mjs'), work, JSON.stringify(config)], {
    env: { ...process.env, LD_PRELOAD: shim, PL_DIR: work, PL_LOG: log },
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.equal(child.status, 0, `the child failed (${child.signal ?? child.status}):\n${child.stderr}`)
  const records = parseLog(fs.readFileSync(log))
  fs.rmSync(log)
  return { work, records, marks: marks(records), diagnostics: JSON.parse(child.stdout) }
}

/** Runs `runs` children for a configuration and checks `cuts` cut points of each. */
async function trials(t, name, { index, encrypted, synchronous, ackEarly = false, runs = RUNS, cuts = CUTS }) {
  const dir = tempDir(t)
  const counts = {
    trials: 0,
    corrupt: 0,
    intactRefused: 0,
    holes: 0,
    partial: 0,
    lost: 0,
    statesWithLoss: 0,
    mostLost: 0,
    journalsUnsynced: 0,
  }
  const failures = []
  for (let run = 0; run < runs; run++) {
    const seed = SEED * 1000 + index * 10 + run
    const config = { seed, ops: OPS, encrypted, synchronous, ackEarly }
    const { work, records, marks: all } = runChild(dir, config)
    counts.journalsUnsynced += unsyncedJournalCounts(records)
    assert.equal(all.at(-1)?.line, 'E', 'the child closed the database and said so')
    const rand = prng(seed)
    const points = Array.from({ length: cuts }, () => 1 + Math.floor(rand() * records.length)).sort((a, b) => a - b)
    let i = 0
    for (const { cut, files } of cutStates(records, points, rand)) {
      const state = path.join(dir, `state-${run}-${i++}`)
      writeState(state, files)
      const exp = expected(all, cut, seed, encrypted)
      const r = await check(state, exp)
      fs.rmSync(state, { recursive: true, force: true })
      counts.trials++
      if (r.verdict === 'corrupt') counts.corrupt++
      if (r.verdict === 'intact-refused') counts.intactRefused++
      counts.holes += r.holes
      counts.partial += r.partial
      counts.lost += r.lost
      if (r.lost) counts.statesWithLoss++
      counts.mostLost = Math.max(counts.mostLost, r.lost)
      // at NORMAL the last acknowledged commits may be lost (the WAL is synced at checkpoints)
      if (r.verdict !== 'ok' || r.holes || r.partial || (r.lost && synchronous !== 'normal')) {
        failures.push(`seed ${seed} cut ${cut}/${records.length}: ${JSON.stringify({ ...r, acked: exp.acked })}`)
        if (KEEP) writeState(path.join(KEEP, `${seed}-${cut}`), files)
      }
    }
    fs.rmSync(work, { recursive: true, force: true })
  }
  const line =
    `power-loss ${name} (seed ${SEED}): ${counts.trials} trials, ${counts.corrupt} corrupt, ` +
    `${counts.intactRefused} intact refused, ${counts.holes} holes, ${counts.partial} partial, ` +
    `${counts.lost} acknowledged commits lost (in ${counts.statesWithLoss} states, at most ${counts.mostLost} in one), ` +
    `${counts.journalsUnsynced} journal record counts written before their records were synced`
  t.diagnostic(line)
  for (const f of failures.slice(0, 5)) t.diagnostic(f)
  return { counts, failures }
}

const shimDir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-shim-'))
after(() => fs.rmSync(shimDir, { recursive: true, force: true }))
let shim
test(
  'the shim sees every write of the engine: the log rebuilds the database, and every acknowledged transaction',
  linuxOnly,
  async (t) => {
    const dir = tempDir(t)
    shim = buildShim(shimDir)
    for (const [encrypted, synchronous] of [
      [false, 'normal'],
      [true, 'full'],
    ]) {
      const seed = SEED * 1000 + 900 + (encrypted ? 1 : 0)
      const run = runChild(dir, { seed, ops: OPS, encrypted, synchronous })
      t.diagnostic(
        `${encrypted ? 'encrypted' : 'plain'} ${synchronous}: ${run.records.length} calls logged, ${JSON.stringify(run.diagnostics)}`,
      )
      // replaying every logged call, nothing dropped, rebuilds the file the child left byte for byte
      const [{ files }] = cutStates(run.records, [run.records.length], Math.random, { keepAll: true })
      const db = fs.readFileSync(path.join(run.work, 'db'))
      assert.ok(db.length > 100_000, `the workload wrote a database of some size (${db.length} bytes)`)
      assert.ok(files.get('db')?.equals(db), 'the log rebuilds the database file exactly')
      const left = fs.readdirSync(run.work).filter((n) => n !== 'acks')
      assert.deepEqual([...files.keys()].sort(), left.sort())
      // and at cuts in the middle, nothing dropped, the WAL as logged holds every acknowledged
      // transaction: the log has the WAL's writes too, those of the JS thread's connection included
      const acks = run.marks.filter((m) => m.line.startsWith('A '))
      assert.ok(acks.length > 50, `the acknowledgements are in the log (${acks.length})`)
      const cuts = acks.filter((_, i) => i % 10 === 5).map((m) => m.at + 1)
      for (const { cut, files: state } of cutStates(run.records, cuts, Math.random, { keepAll: true })) {
        const at = path.join(dir, `state-${cut}`)
        writeState(at, state)
        const exp = expected(run.marks, cut, seed, encrypted)
        const r = await check(at, exp)
        const summary = { verdict: r.verdict, partial: r.partial, holes: r.holes, lost: r.lost }
        assert.deepEqual(summary, { verdict: 'ok', partial: 0, holes: 0, lost: 0 }, `cut ${cut}: ${JSON.stringify(r)}`)
        // (a write group commits at once and is acknowledged call by call: more may be present)
        assert.ok(r.present >= exp.acked, `cut ${cut}: ${JSON.stringify(r)}, ${exp.acked} acknowledged`)
      }
      if (synchronous === 'normal') {
        // at NORMAL single writes commit on the JS thread's connection and in groups: the log saw them
        assert.ok(
          run.diagnostics.inline.writes > 0 && run.diagnostics.groupCommit.groups + run.diagnostics.inline.groups > 0,
          JSON.stringify(run.diagnostics),
        )
      }
    }
  },
)

const CONFIGS = [false, true].flatMap((encrypted) =>
  ['normal', 'full'].map((synchronous) => ({ encrypted, synchronous })),
)
for (const [index, { encrypted, synchronous }] of CONFIGS.entries()) {
  const name = `${encrypted ? 'encrypted' : 'plain'} ${synchronous}`
  test(`power loss, ${name}: no corrupt or refused database, no hole, no partial transaction${synchronous === 'full' ? ', no acknowledged commit lost' : ''}`, {
    ...linuxOnly,
    timeout: 300_000,
  }, async (t) => {
    assert.ok(shim, 'the shim was built by the first test')
    const { counts, failures } = await trials(t, name, {
      index,
      encrypted,
      synchronous,
    })
    assert.ok(counts.trials >= 200, `${counts.trials} trials`)
    const { corrupt, intactRefused, holes, partial, journalsUnsynced } = counts
    assert.deepEqual(
      { corrupt, intactRefused, holes, partial, journalsUnsynced },
      { corrupt: 0, intactRefused: 0, holes: 0, partial: 0, journalsUnsynced: 0 },
      failures.slice(0, 5).join('\n'),
    )
    if (synchronous === 'full') assert.equal(counts.lost, 0, failures.slice(0, 5).join('\n'))
  })
}

// The harness can fail: the same checks report losses when the durability is not there.
test('power loss, must fail: synchronous = OFF loses acknowledged commits', {
  ...linuxOnly,
  timeout: 300_000,
}, async (t) => {
  assert.ok(shim, 'the shim was built by the first test')
  const { counts } = await trials(t, 'plain off (must fail)', {
    index: 4,
    encrypted: false,
    synchronous: 'off',
    runs: 1,
    cuts: 40,
  })
  assert.ok(counts.lost > 0, 'acknowledged commits lost without fsync')
})
test('power loss, must fail: an acknowledgement written before its commit is reported lost', {
  ...linuxOnly,
  timeout: 300_000,
}, async (t) => {
  assert.ok(shim, 'the shim was built by the first test')
  const { counts } = await trials(t, 'plain full, acks early (must fail)', {
    index: 5,
    encrypted: false,
    synchronous: 'full',
    ackEarly: true,
    runs: 1,
    cuts: 40,
  })
  assert.ok(counts.lost > 0, 'acknowledged commits lost')
})
