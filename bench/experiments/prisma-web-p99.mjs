// Where the prisma-web lane's page p99 goes (experiments/073). Serves the lane's pages and
// report (bench/web-server.mjs, through Prisma or the library itself) with the probe
// (prisma-web-p99-probe.cjs) loaded into the server, and drives it as lanes/web.mjs does:
// 32 connections requesting pages while one more requests the report, for a few seconds after
// a second's warm-up. Prints the pages' latencies and rate, the reports served, and the
// server's probe lines (the JS thread's CPU time and wait for a CPU, event-loop delay,
// resqlite's placement counters) for the warm-up and for the measured phase.
//
//   node bench/experiments/prisma-web-p99.mjs <lib> <db> [seconds=5] [--driver] [--renice=N] [--batch]
//     [-- node flags for the server, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof]
//
// <db> is made (data.mjs) if missing; each run works on a copy. --driver: the library without
// Prisma (the web lane). --renice=N: resqlite's engine threads N nice levels below the JS thread;
// --batch: they run as SCHED_BATCH (Linux).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { generate, rng } from '../data.mjs'

const require = createRequire(import.meta.url)
const autocannon = require('autocannon')
const SERVER = fileURLToPath(new URL('../web-server.mjs', import.meta.url))
const PROBE = fileURLToPath(new URL('./prisma-web-p99-probe.cjs', import.meta.url))

const dash = process.argv.indexOf('--')
const args = dash < 0 ? process.argv.slice(2) : process.argv.slice(2, dash)
const nodeFlags = dash < 0 ? [] : process.argv.slice(dash + 1)
const [lib, base, seconds = '5'] = args.filter((a) => !a.startsWith('--'))
const renice = args.find((a) => a.startsWith('--renice='))?.slice(9)
const batch = args.includes('--batch')
if (!existsSync(base)) generate(base)
const db = `${base}.p99`
copyFileSync(base, db)

const env = { ...process.env, ...(renice ? { RENICE: renice } : {}), ...(batch ? { BATCH: '1' } : {}) }
const api = args.includes('--driver') ? 'driver' : 'prisma'
const server = spawn(process.execPath, [...nodeFlags, '--require', PROBE, SERVER, lib, db, api], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env,
})
let port
for await (const line of createInterface({ input: server.stdout })) {
  if (line.startsWith('LISTENING ')) {
    port = Number(line.slice(10))
    break
  }
}
const url = `http://127.0.0.1:${port}`

const rand = rng(15)
const pageRequest = (req) => {
  req.path = `/page?user=${1 + Math.floor(rand() * 2000)}&conversation=${1 + Math.floor(rand() * 500)}`
  return req
}
const load = (path, connections, duration, setupRequest) =>
  new Promise((resolve, reject) => {
    const latencies = []
    const requests = [{ method: 'GET', path, ...(setupRequest ? { setupRequest } : {}) }]
    const run = autocannon({ url, connections, duration, requests }, (err) => (err ? reject(err) : resolve(latencies)))
    run.on('response', (_client, status, _bytes, ms) => {
      if (status === 200) latencies.push(ms)
    })
  })
const quantile = (values, q) => {
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]
}

await load('/page', 32, 1, pageRequest)
await sleep(300)
server.kill('SIGUSR2') // the warm-up's probe line
await sleep(200)
const [pages, reports] = await Promise.all([
  load('/page', 32, Number(seconds), pageRequest),
  load('/report', 1, Number(seconds)),
])
const ms = (x) => Math.round(x * 10) / 10
console.log(
  JSON.stringify({
    lib,
    api,
    renice: renice ?? null,
    batch,
    pagesPerS: ms(pages.length / Number(seconds)),
    pageMs: { p50: ms(quantile(pages, 0.5)), p99: ms(quantile(pages, 0.99)), max: ms(quantile(pages, 1)) },
    reports: reports.length,
    reportMs: { p50: ms(quantile(reports, 0.5)), max: ms(quantile(reports, 1)) },
  }),
)
server.kill('SIGUSR2') // the measured phase's
await sleep(500)
server.kill('SIGTERM')
await once(server, 'exit')
rmSync(db, { force: true })
for (const suffix of ['-wal', '-shm']) rmSync(db + suffix, { force: true })
