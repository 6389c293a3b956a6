// The chat lane's sample (bench/lanes/scenarios.mjs: 200 calls from 8 clients in flight, the
// reset's checkpoint before each), resqlite builds and better-sqlite3 side by side in one
// process, taking turns sample by sample. Across processes this machine's chat time moves by a
// third for the same build (experiments/064), so builds are compared within one process.
//
//   node bench/experiments/chat-ab.mjs <db> <root> [<root> …] [--samples=300] [--pin=split|one]
//
// --pin (Linux, taskset) places the process's threads after a warm-up sample: `split` puts the
// JS thread on CPU 0 and every other thread on CPU 1, `one` puts all of them on CPU 0. Without
// it the kernel places them.
//
// Prints each side's median µs per sample and, per side, the median of its per-round ratio to
// better-sqlite3's sample of the same round (with the 10th and 90th percentile).
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { generate } from '../data.mjs'
import { CHAT_RESET, CHAT_SQL, chatOps, chatSampleOn } from '../lanes/scenarios.mjs'

const args = process.argv.slice(2)
const samples = Number(args.find((a) => a.startsWith('--samples='))?.slice(10) ?? 300)
const pin = args.find((a) => a.startsWith('--pin='))?.slice(6)
const [base, ...roots] = args.filter((a) => !a.startsWith('--'))
if (!existsSync(base)) generate(base)
const ops = chatOps()

function copy(name) {
  const file = `${base}.ab-${name}`
  for (const end of ['', '-wal', '-shm']) rmSync(file + end, { force: true })
  copyFileSync(base, file)
  return file
}

async function resqliteSide(root, i) {
  const { Database } = await import(pathToFileURL(join(resolve(root), 'dist/esm/index.mjs')).href)
  const db = await Database.open(copy(i))
  return { name: root, reset: () => db.execute(CHAT_RESET), sample: chatSampleOn(db) }
}

function betterSide() {
  const Database = createRequire(import.meta.url)('better-sqlite3')
  const db = new Database(copy('bs3'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  const s = Object.fromEntries(Object.entries(CHAT_SQL).map(([kind, sql]) => [kind, db.prepare(sql)]))
  return {
    name: 'better-sqlite3',
    reset: async () => db.exec(CHAT_RESET),
    sample: async () => {
      for (const { kind, params } of ops)
        if (kind === 'user') s.user.get(...params)
        else if (kind === 'last20') s.last20.all(...params)
        else s[kind].run(...params)
    },
  }
}

const sides = [betterSide(), ...(await Promise.all(roots.map(resqliteSide)))]
if (pin !== undefined) {
  for (const side of sides) {
    await side.reset()
    await side.sample() // every thread of the engine exists after it
  }
  for (const tid of readdirSync('/proc/self/task')) {
    const cpu = pin === 'split' && Number(tid) !== process.pid ? '1' : '0'
    execFileSync('taskset', ['-p', '-c', cpu, tid], { stdio: 'ignore' })
  }
}
const times = sides.map(() => [])
for (let round = 0; round < samples + 20; round++) {
  for (let k = 0; k < sides.length; k++) {
    const side = sides[(k + round) % sides.length] // a different side goes first each round
    await side.reset()
    const t0 = process.hrtime.bigint()
    await side.sample()
    if (round >= 20) times[sides.indexOf(side)].push(Number(process.hrtime.bigint() - t0) / 1e3)
  }
}
const q = (a, p) => [...a].sort((x, y) => x - y)[Math.floor(a.length * p)]
for (let k = 0; k < sides.length; k++) {
  const ratios = times[k].map((t, r) => t / times[0][r])
  const r =
    k === 0
      ? ''
      : `  vs better-sqlite3 ${q(ratios, 0.5).toFixed(3)} (${q(ratios, 0.1).toFixed(3)}–${q(ratios, 0.9).toFixed(3)})`
  console.log(`${sides[k].name}: median ${q(times[k], 0.5).toFixed(0)} µs${r}`)
}
