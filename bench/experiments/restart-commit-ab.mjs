// The first transactions after a checkpoint, two builds side by side in one process
// (experiments/062): the narrow-tx-interactive lane's shape (2 inserts and a select back, 100
// transactions after each reset: DELETE and a PASSIVE checkpoint, so the first COMMIT starts
// the WAL over and syncs its header), A and B alternating.
//
//   node bench/experiments/restart-commit-ab.mjs <root A> <root B> [rounds=400]
//
// Per side, medians after 20 warm-up rounds: the first transaction's COMMIT (the body's end
// to the transaction's settling), the whole second transaction, and the 100 transactions.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const [rootA, rootB, roundsArg] = process.argv.slice(2)
const rounds = Number(roundsArg ?? 400)
const WARMUP = 20
const dir = mkdtempSync(join(tmpdir(), 'restart-commit-'))
const now = () => performance.now()

/** One sample: reset, then 100 transactions; [first COMMIT, second transaction, all] in ms. */
async function side(root, name) {
  const { Database } = await import(pathToFileURL(join(resolve(root), 'dist/esm/index.mjs')).href)
  const db = await Database.open(join(dir, `${name}.db`))
  await db.execute('CREATE TABLE narrow_w (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)')
  const insert = await db.prepare('INSERT INTO narrow_w (id, a, b) VALUES (?, ?, ?)')
  const back = await db.prepare('SELECT * FROM narrow_w WHERE id = ?')
  let bodyEnd = 0
  const tx = (w) =>
    db.transaction(async () => {
      await insert.execute([2 * w + 1, w, 1])
      await insert.execute([2 * w + 2, w, 2])
      await back.selectOne([2 * w + 1])
      bodyEnd = now()
    })
  return async () => {
    await db.execute('DELETE FROM narrow_w; PRAGMA wal_checkpoint(PASSIVE)')
    const t0 = now()
    await tx(0)
    const firstCommit = now() - bodyEnd
    const t1 = now()
    await tx(1)
    const second = now() - t1
    for (let w = 2; w < 100; w++) await tx(w)
    return [firstCommit, second, now() - t0]
  }
}

const runs = { a: await side(rootA, 'a'), b: await side(rootB, 'b') }
const times = { a: [[], [], []], b: [[], [], []] }
for (let r = 0; r < rounds; r++) {
  for (const s of r % 2 ? ['a', 'b'] : ['b', 'a']) {
    const sample = await runs[s]()
    if (r < WARMUP) continue
    for (const [i, t] of sample.entries()) times[s][i].push(t)
  }
}
const median = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1]
console.log(`A = ${rootA}, B = ${rootB}; ${rounds - WARMUP} rounds, medians`)
for (const [i, name, unit, scale] of [
  [0, 'first COMMIT', 'µs', 1000],
  [1, 'second transaction', 'µs', 1000],
  [2, '100 transactions', 'ms', 1],
]) {
  const a = median(times.a[i])
  const b = median(times.b[i])
  console.log(
    `${name.padEnd(19)} A ${(a * scale).toFixed(unit === 'ms' ? 3 : 1)} ${unit}  B ${(b * scale).toFixed(unit === 'ms' ? 3 : 1)} ${unit}  B / A ${(b / a).toFixed(3)}`,
  )
}
