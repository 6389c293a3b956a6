// Small awaited calls on the narrow table (experiments/059), in one process:
//
//   node bench/experiments/small-calls.mjs <root A> <root B> [--lanes=pt,tx,it] [--rounds=300]
//     two builds' dist/ + native/ side by side, A and B alternating: median B / A per lane;
//   node bench/experiments/small-calls.mjs <root> --against=better-sqlite3 [--lanes=…]
//     one build against better-sqlite3's `stmt.get` / `stmt.run` in its own transactions;
//   node --single-threaded bench/experiments/small-calls.mjs <root|better-sqlite3> --count=N --lanes=tx
//     N calls of one lane after a fixed warm-up, for callgrind: run it twice with two counts
//     and divide the difference of the main thread's instructions by the difference of calls
//     (as point-select-instructions.mjs). Under callgrind every call runs ~50 × slower, so
//     writes overrun the inline budget and back off to the writer thread (experiments/060):
//     give --inline-budget=10 (ms, resqlite's `inlineBudget`) to count the path the lane takes.
//
// Lanes: pt, 1,000 awaited point selects through a Statement; tx, 10 transactions of 100 of
// them; it, 100 transactions of 2 inserts and a select (the suite's narrow-* lanes).
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const args = process.argv.slice(2)
const flag = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback
const roots = args.filter((a) => !a.startsWith('--'))
const lanes = flag('lanes', 'pt,tx,it').split(',')
const rounds = Number(flag('rounds', '300'))
const count = flag('count')
const inlineBudget = flag('inline-budget')
const dir = mkdtempSync(join(tmpdir(), 'small-calls-'))
const SETUP =
  'CREATE TABLE narrow (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER);' +
  'CREATE TABLE narrow_w (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER);' +
  'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10000) ' +
  'INSERT INTO narrow SELECT i, i * 7 % 1000, i % 13 FROM s'

/** Each lane as `calls => Promise`, over a database of its own. */
async function resqlite(root, name) {
  const { Database } = await import(pathToFileURL(join(resolve(root), 'dist/esm/index.mjs')).href)
  const db = await Database.open(
    join(dir, `${name}.db`),
    inlineBudget === undefined ? {} : { inlineBudget: Number(inlineBudget) },
  )
  await db.execute(SETUP)
  const point = await db.prepare('SELECT * FROM narrow WHERE id = ?')
  const insert = await db.prepare('INSERT INTO narrow_w (id, a, b) VALUES (?, ?, ?)')
  const back = await db.prepare('SELECT * FROM narrow_w WHERE id = ?')
  let k = 0
  let w = 0
  const id = () => 1 + ((k++ * 7919) % 10000)
  return {
    pt: async (n) => {
      for (let i = 0; i < n; i++) await point.selectOne([id()])
    },
    tx: async (n) => {
      for (let t = 0; t < n / 100; t++)
        await db.transaction(async () => {
          for (let i = 0; i < 100; i++) await point.selectOne([id()])
        })
    },
    it: async (n) => {
      for (let t = 0; t < n; t++) {
        w++
        await db.transaction(async () => {
          await insert.execute([2 * w + 1, w, 1])
          await insert.execute([2 * w + 2, w, 2])
          await back.selectOne([2 * w + 1])
        })
      }
    },
  }
}

function betterSqlite3(name) {
  const Database = createRequire(import.meta.url)('better-sqlite3')
  const db = new Database(join(dir, `${name}.db`))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec(SETUP)
  const point = db.prepare('SELECT * FROM narrow WHERE id = ?')
  const insert = db.prepare('INSERT INTO narrow_w (id, a, b) VALUES (?, ?, ?)')
  const back = db.prepare('SELECT * FROM narrow_w WHERE id = ?')
  let k = 0
  let w = 0
  const id = () => 1 + ((k++ * 7919) % 10000)
  const reads = db.transaction(() => {
    for (let i = 0; i < 100; i++) point.get(id())
  })
  const interactive = db.transaction(() => {
    insert.run(2 * w + 1, w, 1)
    insert.run(2 * w + 2, w, 2)
    back.get(2 * w + 1)
  })
  return {
    pt: async (n) => {
      for (let i = 0; i < n; i++) point.get(id())
    },
    tx: async (n) => {
      for (let t = 0; t < n / 100; t++) reads()
    },
    it: async (n) => {
      for (let t = 0; t < n; t++) {
        w++
        interactive()
      }
    },
  }
}

const CALLS = { pt: 1000, tx: 1000, it: 100 }
const open = (root, name) => (root === 'better-sqlite3' ? betterSqlite3(name) : resqlite(root, name))

if (count !== undefined) {
  const lib = await open(roots[0], 'counted')
  const lane = lib[lanes[0]]
  await lane(5000)
  await lane(Number(count))
} else {
  const a = await open(roots[0], 'a')
  const bName = roots[1] ?? flag('against')
  const b = await open(bName, 'b')
  const times = { a: {}, b: {} }
  for (const l of lanes) {
    times.a[l] = []
    times.b[l] = []
  }
  for (let r = 0; r < rounds; r++) {
    for (const l of lanes) {
      for (const side of r % 2 ? ['a', 'b'] : ['b', 'a']) {
        const t0 = performance.now()
        await (side === 'a' ? a : b)[l](CALLS[l])
        times[side][l].push(performance.now() - t0)
      }
    }
  }
  const median = (xs) => {
    const s = xs.slice(Math.floor(xs.length / 5)).sort((x, y) => x - y)
    return s[s.length >> 1]
  }
  console.log(`A = ${roots[0]}, B = ${bName}; ${rounds} rounds, medians after the first fifth (ms)`)
  for (const l of lanes) {
    const [ma, mb] = [median(times.a[l]), median(times.b[l])]
    console.log(
      `${l.padEnd(3)} A ${ma.toFixed(3)}  B ${mb.toFixed(3)}  A / B ${(ma / mb).toFixed(3)}  B / A ${(mb / ma).toFixed(3)}`,
    )
  }
}
