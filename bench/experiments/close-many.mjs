// What closing many databases costs the JS thread (experiments/057): opens 1,000 databases on
// tmpfs, then closes them one after another, and reports the wall time, the JS thread's CPU time
// (its /proc stat) and the synchronous part of close(). `node bench/experiments/close-many.mjs
// [<build root>]` (default: this checkout's dist/ and native/).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(process.argv[2] ?? fileURLToPath(new URL('../..', import.meta.url)))
const { Database } = await import(pathToFileURL(path.join(root, 'dist/esm/index.mjs')).href)
const dir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : '/tmp', 'resqlite-close-'))
/** The JS thread's CPU time in ms (utime + stime of its /proc task, in 10 ms ticks). */
function jsThreadCpu() {
  const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}
try {
  const dbs = []
  for (let i = 0; i < 1000; i++) {
    const db = await Database.open(path.join(dir, `d${i}.db`))
    await db.execute('CREATE TABLE t (x)')
    dbs.push(db)
  }
  const cpu = jsThreadCpu()
  const t0 = performance.now()
  let synchronous = 0
  for (const db of dbs) {
    const s = performance.now()
    const closed = db.close()
    synchronous += performance.now() - s
    await closed
  }
  console.log(
    `${root}: closing 1,000 databases: wall ${(performance.now() - t0).toFixed(0)} ms, ` +
      `JS thread CPU ${jsThreadCpu() - cpu} ms, synchronous part of close() ${synchronous.toFixed(1)} ms`,
  )
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
