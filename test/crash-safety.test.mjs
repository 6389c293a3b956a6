// Crash safety: a process killed with SIGKILL while committing leaves a database that passes
// integrity_check and holds every acknowledged commit fully, and no partial one (WAL,
// synchronous = NORMAL: a process kill, unlike an OS crash, must not lose an acknowledged commit).

import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'
import { prng } from './tx-helpers.mjs'

const ESM_ENTRY = new URL('../dist/esm/index.mjs', import.meta.url).href
const KILLS = 5

// Child prelude: opens the database, creates the schema, reports `ready <first seq>`, then loops.
// Each acknowledged commit is written to stdout synchronously (fs.writeSync) after it resolved.
const prelude = (extraSchema = '') => `import { Database } from ${JSON.stringify(ESM_ENTRY)};
import fs from 'node:fs';
const db = await Database.open(process.argv[2]);
await db.execute(\`CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, k INTEGER NOT NULL, pad BLOB);
                  CREATE INDEX IF NOT EXISTS t_seq ON t (seq);
                  CREATE TABLE IF NOT EXISTS meta (one INTEGER PRIMARY KEY CHECK (one = 1), total INTEGER NOT NULL);
                  INSERT OR IGNORE INTO meta VALUES (1, 0);
                  ${extraSchema}\`);
const { m } = await db.selectOne('SELECT coalesce(max(seq), 0) AS m FROM t');
fs.writeSync(1, 'ready ' + (m + 1) + '\\n');
`

const VARIANTS = {
  // a transaction of 50 rows: 10 single inserts, a savepoint with a 40-row batch, a counter update
  transaction: {
    rowsPerSeq: 50,
    source: `${prelude()}
for (let seq = m + 1; ; seq++) {
  await db.transaction(async (tx) => {
    for (let k = 0; k < 10; k++) {
      await tx.execute('INSERT INTO t (seq, k, pad) VALUES (?, ?, randomblob(200))', [seq, k]);
    }
    await tx.transaction(async (sp) => {
      await sp.executeBatch('INSERT INTO t (seq, k, pad) VALUES (?, ?, randomblob(200))',
                            Array.from({ length: 40 }, (_, i) => [seq, 10 + i]));
    });
    await new Promise((r) => setImmediate(r));
    await tx.execute('UPDATE meta SET total = total + 50');
  });
  fs.writeSync(1, seq + '\\n');
}
`,
  },
  // a standalone executeBatch of 1,000 rows per call, plus a counter update per batch
  batch: {
    rowsPerSeq: 1000,
    source: `${prelude('CREATE TRIGGER IF NOT EXISTS t_count AFTER INSERT ON t BEGIN UPDATE meta SET total = total + 1; END;')}
for (let seq = m + 1; ; seq++) {
  await db.executeBatch('INSERT INTO t (seq, k, pad) VALUES (?, ?, randomblob(40))',
                        Array.from({ length: 1000 }, (_, k) => [seq, k]));
  fs.writeSync(1, seq + '\\n');
}
`,
  },
}

/** Runs the child until `ready`, lets it commit for killAfterMs, kills it with SIGKILL.
 * Returns the first sequence id it would write and the ids it acknowledged, in order. */
function killRun(script, dbFile, killAfterMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, dbFile], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let readyAt
    let killed = false
    const guard = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the child did not report ready within 15 s\n--- stdout ---\n${out}\n--- stderr ---\n${err}`))
    }, 15_000)
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stdout.on('data', (d) => {
      out += d
      if (readyAt === undefined && /^ready \d+\n/.test(out)) {
        readyAt = performance.now()
        clearTimeout(guard)
        setTimeout(() => {
          killed = true
          child.kill('SIGKILL')
        }, killAfterMs)
      }
    })
    child.stderr.on('data', (d) => (err += d))
    child.on('error', (e) => {
      clearTimeout(guard)
      reject(e)
    })
    child.on('close', (code, signal) => {
      clearTimeout(guard)
      if (!killed || signal !== 'SIGKILL') {
        reject(
          new Error(
            `the child ended by itself (code ${code}, signal ${signal}) before being killed\n--- stdout ---\n${out}\n--- stderr ---\n${err}`,
          ),
        )
        return
      }
      const lines = out.split('\n')
      lines.pop() // an incomplete last line (or ''): not an acknowledgement
      const start = Number(/^ready (\d+)$/.exec(lines.shift())[1])
      const bad = lines.find((l) => !/^\d+$/.test(l))
      if (bad !== undefined)
        reject(new Error(`unexpected child output line ${JSON.stringify(bad)}\n--- stderr ---\n${err}`))
      else resolve({ start, acks: lines.map(Number), stderr: err })
    })
  })
}

async function crashTest(t, variant) {
  const { rowsPerSeq, source } = VARIANTS[variant]
  const dir = tempDir(t)
  const script = path.join(dir, `child-${variant}.mjs`)
  fs.writeFileSync(script, source)
  const dbFile = path.join(dir, 'crash.db')
  const seed = (Date.now() ^ process.pid) >>> 0
  const rand = prng(seed)
  // spread the kill times over 50-400 ms, in a random order, each with some jitter
  const slots = Array.from({ length: KILLS }, (_, i) => 50 + Math.floor((i * 350) / KILLS + rand() * (350 / KILLS)))
  slots.sort(() => rand() - 0.5)
  let committed = 0 // the highest sequence id in the database so far
  let totalAcks = 0
  const history = []
  for (const killAfterMs of slots) {
    const { start, acks } = await killRun(script, dbFile, killAfterMs)
    const where = `(${variant}, seed ${seed}, killed ${killAfterMs} ms after ready; runs so far: ${JSON.stringify(history)})`
    assert.equal(
      start,
      committed + 1,
      `the child started at seq ${start} but the database held 1..${committed} ${where}`,
    )
    const lastAck = acks.length ? acks.at(-1) : committed
    assert.deepStrictEqual(
      acks,
      Array.from({ length: acks.length }, (_, i) => start + i),
      `acknowledgements out of sequence ${where}`,
    )
    totalAcks += acks.length

    const db = await Database.open(dbFile)
    try {
      assert.deepStrictEqual(
        await db.select('PRAGMA integrity_check'),
        [{ integrity_check: 'ok' }],
        `integrity_check ${where}`,
      )
      const groups = await db.select(
        'SELECT seq, count(*) AS n, count(DISTINCT k) AS dk, min(k) AS lo, max(k) AS hi FROM t GROUP BY seq ORDER BY seq',
      )
      for (const g of groups) {
        assert.deepStrictEqual(
          g,
          { seq: g.seq, n: rowsPerSeq, dk: rowsPerSeq, lo: 0, hi: rowsPerSeq - 1 },
          `sequence ${g.seq} is present but partial ${where}`,
        )
      }
      const seqs = groups.map((g) => g.seq)
      assert.deepStrictEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, i) => i + 1),
        `sequence ids are not 1..n ${where}`,
      )
      const max = seqs.length
      assert.ok(max >= lastAck, `acknowledged commit ${lastAck} is missing: the database ends at ${max} ${where}`)
      assert.ok(
        max <= lastAck + 1,
        `the database holds ${max}, beyond the last acknowledged ${lastAck} + the one in flight ${where}`,
      )
      const { total } = await db.selectOne('SELECT total FROM meta')
      assert.equal(
        total,
        max * rowsPerSeq,
        `the counter updated in the same transaction disagrees with the rows ${where}`,
      )
      history.push({ killAfterMs, acks: acks.length, inFlightCommitted: max > lastAck })
      committed = max
    } finally {
      await db.close()
    }
  }
  t.diagnostic(`${variant}: ${JSON.stringify(history)}`)
  assert.ok(
    totalAcks > 0,
    `no commit was acknowledged in ${KILLS} runs: the test did not exercise anything (${variant}, seed ${seed})`,
  )
  assert.ok(committed > 0)
}

test('SIGKILL during transactions: integrity ok, every acknowledged transaction fully present, none partial', {
  timeout: 60_000,
}, async (t) => {
  await crashTest(t, 'transaction')
})

test('SIGKILL during 1,000-row executeBatch calls: integrity ok, every acknowledged batch fully present, none partial', {
  timeout: 60_000,
}, async (t) => {
  await crashTest(t, 'batch')
})
