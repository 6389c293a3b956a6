// Loaded into the web server (bench/web-server.mjs) by prisma-web-p99.mjs with `--require`
// (experiments/073). On SIGUSR2 it prints, on stderr, one line `PROBE {json}` for the time since
// the last: the JS thread's time on a CPU and runnable but waiting for one
// (/proc/self/task/<pid>/schedstat), its involuntary context switches, the event-loop delay
// histogram (monitorEventLoopDelay), and each resqlite database's placement counters since it
// opened (`diagnostics().inline`). RENICE=n: resqlite's engine threads run n nice levels below
// the JS thread (at most 19), set as they appear; BATCH=1: they run as SCHED_BATCH (chrt), which
// a wake-up does not let preempt the JS thread.
const { execFileSync } = require('node:child_process')
const { readdirSync, readFileSync } = require('node:fs')
const { getPriority, setPriority } = require('node:os')
const { monitorEventLoopDelay, performance } = require('node:perf_hooks')

const root = process.env.RESQLITE_ROOT ?? `${__dirname}/../..`
const delay = monitorEventLoopDelay({ resolution: 1 })
delay.enable()

// Every Database the server opens (the adapter opens its own): for its counters.
const databases = []
const { Database } = require(`${root}/dist/cjs/database.js`)
const open = Database.open
Database.open = async function (...args) {
  const db = await open.apply(this, args)
  databases.push(db)
  return db
}

const task = `/proc/self/task/${process.pid}`
const sample = () => {
  const [onCpu, waiting] = readFileSync(`${task}/schedstat`, 'utf8').split(' ').map(Number)
  const status = readFileSync(`${task}/status`, 'utf8')
  return {
    onCpu,
    waiting,
    involuntary: Number(/nonvoluntary_ctxt_switches:\s*(\d+)/.exec(status)[1]),
    at: performance.now(),
  }
}

const reniced = new Set()
if (process.env.RENICE || process.env.BATCH) {
  const level = Math.min(19, getPriority(process.pid) + Number(process.env.RENICE ?? 0))
  setInterval(() => {
    for (const tid of readdirSync('/proc/self/task')) {
      if (reniced.has(tid)) continue
      try {
        if (!readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith('resqlite')) continue
        setPriority(Number(tid), level)
        if (process.env.BATCH) execFileSync('chrt', ['--batch', '--pid', '0', tid])
        reniced.add(tid)
      } catch {} // a thread that ended meanwhile
    }
  }, 20).unref()
}

let last = sample()
process.on('SIGUSR2', async () => {
  const now = sample()
  const ms = (ns) => Math.round(ns / 1e6)
  const out = {
    wallMs: Math.round(now.at - last.at),
    jsOnCpuMs: ms(now.onCpu - last.onCpu),
    jsRunnableWaitingMs: ms(now.waiting - last.waiting),
    jsInvoluntarySwitches: now.involuntary - last.involuntary,
    loopDelayMs: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
    renicedThreads: reniced.size,
    inline: await Promise.all(
      databases.map((db) =>
        db.diagnostics().then(
          (d) => d.inline,
          (e) => e.code,
        ),
      ),
    ),
  }
  last = now
  delay.reset()
  process.stderr.write(`PROBE ${JSON.stringify(out)}\n`)
})
