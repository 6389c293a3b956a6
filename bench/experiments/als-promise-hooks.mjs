// What the library's AsyncLocalStorage costs the rest of the process (experiments/062): 20,000
// awaits of plain promises (no database involved) and 20,000 awaited point selects, timed
// before and after the first transaction and standalone write. On Node 20 and 22 an
// AsyncLocalStorage with a store runs async_hooks' promise hooks on every promise the process
// makes; on Node 24 (AsyncContextFrame) it does not.
//
//   node bench/experiments/als-promise-hooks.mjs [root=.]
//   node --experimental-async-context-frame bench/experiments/als-promise-hooks.mjs   (Node 22)
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const root = resolve(process.argv[2] ?? '.')
const { Database } = await import(pathToFileURL(join(root, 'dist/esm/index.mjs')).href)
const db = await Database.open(join(mkdtempSync(join(tmpdir(), 'als-hooks-')), 'a.db'))
await db.execute(
  'CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER);' +
    'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000) INSERT INTO t SELECT i, i FROM s',
)
const point = await db.prepare('SELECT * FROM t WHERE id = ?')
const CALLS = 20_000

const plainPromises = async () => {
  for (let i = 0; i < CALLS; i++) await Promise.resolve(i)
}
const pointSelects = async () => {
  for (let i = 0; i < CALLS; i++) await point.selectOne([1 + (i % 1000)])
}

/** The median of 15 runs of `fn`, in ms. */
async function median(fn) {
  const times = []
  for (let r = 0; r < 15; r++) {
    const t0 = performance.now()
    await fn()
    times.push(performance.now() - t0)
  }
  return times.sort((a, b) => a - b)[7]
}

const before = [await median(plainPromises), await median(pointSelects)]
await db.transaction(async (tx) => {
  await tx.execute('INSERT INTO t (a) VALUES (1)')
})
await db.execute('INSERT INTO t (a) VALUES (2)')
const after = [await median(plainPromises), await median(pointSelects)]
const flags = process.execArgv.join(' ')
console.log(`${process.version}${flags ? ` ${flags}` : ''}, before → after the first transaction (ms, medians):`)
for (const [i, name] of ['awaits of plain promises', 'awaited point selects'].entries()) {
  const ratio = (after[i] / before[i]).toFixed(2)
  console.log(`  ${CALLS} ${name}: ${before[i].toFixed(2)} → ${after[i].toFixed(2)} (${ratio} ×)`)
}
await db.close()
