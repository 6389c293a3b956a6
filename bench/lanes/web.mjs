// A web server under load: the job most users have (and, in the prisma-web lane, the same
// through Prisma 7 over the library's adapter, issue 44). The library serves a node:http server in a
// process of its own (../web-server.mjs, on this lane's copy of the database); autocannon, in
// this process, drives it over loopback:
//   web.pages   32 connections requesting a 3-query page (a user, a conversation's last 20
//               messages with their authors, its message count), nothing else running
//   web.report  the same, while one more connection requests a GROUP BY report over the 100,000
//               rows of t, one after another
// Per case: every page's latency (wall samples: median, p90, max; p99 computed here), pages/s,
// the server's event-loop active time per page (js), errors (non-2xx, connection errors,
// timeouts) and, in web.report, every report's latency. A synchronous library runs the report on
// its event loop, so every page waits behind it; resqlite runs it on a reader thread.
// Work check: the server counts the pages, reports and queries it served; a phase whose counts
// disagree with the responses autocannon received fails the lane.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { rng } from '../data.mjs'
import { hash } from './common.mjs'

// Loaded when the lane runs: bench/run.mjs installs the bench's packages first, and the test
// suite imports every lane module without them (test/bench-counts.test.mjs).
const require = createRequire(import.meta.url)
const loadAutocannon = () => require('autocannon')

const SERVER = fileURLToPath(new URL('../web-server.mjs', import.meta.url))
const CONNECTIONS = 32
const USERS = 2000 // data.mjs: users
const CONVERSATIONS = 500 // data.mjs: conversations
// Seconds per phase: a few, so the lane stays bounded (about 5 × PHASE_S per library).
const PHASE_S = { full: 5, quick: 2, smoke: 0.5 }
const WARMUP_S = { full: 1, quick: 0.5, smoke: 0.2 }

const startServer = async (lib, db, api) => {
  const child = spawn(process.execPath, [SERVER, lib, db, api], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout })
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the ${lib} web server exited with ${code} before listening`)
  })
  const listening = (async () => {
    for await (const line of lines) if (line.startsWith('LISTENING ')) return Number(line.slice(10))
  })()
  const port = await Promise.race([listening, exited])
  exited.catch(() => {}) // later exits are the lane's own SIGTERM
  return { child, base: `http://127.0.0.1:${port}` }
}

const get = async (base, path) => {
  const res = await fetch(`${base}${path}`)
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
  return Buffer.from(await res.arrayBuffer())
}

// One autocannon run for `seconds`; resolves with every 2xx latency (ms), the failures and the
// seconds it ran.
const load = (base, { connections, seconds, setupRequest, path }) =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const latencies = []
    const failures = { non2xx: 0, errors: 0, timeouts: 0 }
    const inst = loadAutocannon()(
      {
        url: base,
        connections,
        duration: seconds,
        requests: [{ method: 'GET', path, ...(setupRequest ? { setupRequest } : {}) }],
      },
      (err, result) => {
        if (err) return reject(err)
        failures.errors = result.errors
        failures.timeouts = result.timeouts
        resolve({ latencies, failures, elapsedS: (performance.now() - t0) / 1000 })
      },
    )
    inst.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) latencies.push(ms)
      else failures.non2xx++
    })
  })

// The server's counters once it has answered everything it received: autocannon hangs up on
// requests still in flight when it stops, and the server still serves them. Some of those may
// still wait unread in the server's sockets while it answers /stats (a busy event loop: the
// prisma-web lane over better-sqlite3 left 35 of them to the next phase), so the counters are
// taken once nothing is pending and nothing more was served over three polls in a row.
const settled = async (base, reset = false) => {
  let last
  for (let still = 0; ; ) {
    const stats = JSON.parse(await get(base, '/stats'))
    const same = stats.pending === 0 && stats.pages === last?.pages && stats.reports === last?.reports
    still = same ? still + 1 : 0
    if (still === 3) return reset ? JSON.parse(await get(base, '/stats?reset')) : stats
    last = stats
    await sleep(10)
  }
}

const p99 = (values) => {
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]
}

// api: 'driver' (the library itself) or 'prisma' (Prisma over the library's adapter).
async function web(_d, cfg, api = 'driver') {
  if (!cfg.lib || !cfg.db) throw new Error('the web lane needs cfg.lib and cfg.db (child.mjs passes them)')
  const seconds = PHASE_S[cfg.name] ?? PHASE_S.full
  const lane = api === 'prisma' ? 'prisma-web' : 'web'
  const via = api === 'prisma' ? ' through Prisma' : ''
  const { child, base } = await startServer(cfg.lib, cfg.db, api)
  try {
    // Every library must serve the same page and report (checked once, untimed).
    const check = hash(Buffer.concat([await get(base, '/page?user=7&conversation=3'), await get(base, '/report')]))
    const rand = rng(15)
    const pageRequest = (req) => {
      req.path = `/page?user=${1 + Math.floor(rand() * USERS)}&conversation=${1 + Math.floor(rand() * CONVERSATIONS)}`
      return req
    }
    const pages = { connections: CONNECTIONS, setupRequest: pageRequest, path: '/page' }
    await load(base, { ...pages, seconds: WARMUP_S[cfg.name] ?? WARMUP_S.full })

    const phase = async (id, title, withReport) => {
      await settled(base, true) // the warm-up's or the last phase's requests done, counters reset
      const [p, r] = await Promise.all([
        load(base, { ...pages, seconds }),
        withReport ? load(base, { connections: 1, seconds, path: '/report' }) : undefined,
      ])
      const served = await settled(base)
      const reports = r?.latencies.length ?? 0
      // Requests in flight when autocannon stopped were served but not received: at most one
      // per connection.
      const inFlight = served.pages - p.latencies.length - p.failures.non2xx
      if (inFlight < 0 || inFlight > CONNECTIONS)
        throw new Error(
          `${id}: server served ${served.pages} pages, autocannon received ${p.latencies.length} (${JSON.stringify(p.failures)})`,
        )
      if (served.reports - reports < 0 || served.reports - reports > 1)
        throw new Error(`${id}: server served ${served.reports} reports, autocannon received ${reports}`)
      if (served.queries !== 3 * served.pages + served.reports)
        throw new Error(`${id}: ${served.queries} queries for ${served.pages} pages and ${served.reports} reports`)
      if (p.latencies.length === 0) throw new Error(`${id}: no page was served`)
      const errors = [p, r].reduce(
        (n, x) => n + (x ? x.failures.non2xx + x.failures.errors + x.failures.timeouts : 0),
        0,
      )
      return {
        group: 'web',
        id,
        title,
        check,
        rate: { unit: 'pages/s', median: p.latencies.length / p.elapsedS },
        p99: p99(p.latencies),
        errors,
        expect: { pages: served.pages },
        checkedSamples: p.latencies.length,
        samples: {
          wall: p.latencies,
          js: [served.eventLoopActiveMs / served.pages],
          ...(withReport ? { report: r.latencies } : {}),
        },
      }
    }
    return [
      await phase(`${lane}.pages`, `web server${via}: ${CONNECTIONS} connections, 3-query page`, false),
      await phase(
        `${lane}.report`,
        `web server${via}: ${CONNECTIONS} connections, 3-query page, with a GROUP BY report`,
        true,
      ),
    ]
  } finally {
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
}

export const WEB_LANES = { web, 'prisma-web': (d, cfg) => web(d, cfg, 'prisma') }
// The Prisma lane's libraries: those with a Prisma adapter (drivers/prisma.mjs).
export const WEB_LIBRARIES = { 'prisma-web': ['resqlite', 'better-sqlite3'] }
