// Builds the benchmark dashboard: npm run site [-- --results=<dir> --out=<dir>]
// Reads the results files (bench/results/*.json; scratch/ and local/ are left out) and the experiments
// index, writes <out>/index.html + data.js + app.js + style.css and a copy of Chart.js from
// node_modules (no CDN: the page works offline, from file://). Default out: site/dist
// (generated, not committed).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LEGACY_IDS } from '../bench/compare.mjs'

const SITE = dirname(fileURLToPath(import.meta.url))
const ROOT = dirname(SITE)
const arg = (name, def) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def
const resultsDir = resolve(arg('results', join(ROOT, 'bench/results')))
const outDir = resolve(arg('out', join(SITE, 'dist')))
const experimentsDir = resolve(arg('experiments', join(ROOT, 'experiments')))

// Lane groups of results written before cases carried one.
const legacyGroup = (id) =>
  id.startsWith('select.')
    ? 'select'
    : id.startsWith('bytes.')
      ? 'bytes'
      : id === 'shape.wide'
        ? 'shapes'
        : ['point', 'batch', 'stall'].includes(id)
          ? id
          : 'writes'

// A full run (not --quick or --smoke): older files say quick: false instead of config.
const isFull = (r) => (r.config ?? (r.quick ? 'quick' : 'full')) === 'full'

// The peer comparison comes from the latest *suite run*: a full run of every lane for every
// library, so a partial run (--only / --libs, e.g. a check of one lane) left in bench/results
// never replaces it. run.mjs records scope: 'suite' | 'partial'. Files written before it did
// have no scope: such a full run counts as a suite run when it holds at least as many
// (lane, library) results as every earlier full run (the suite only grew; partial runs were
// smaller than the run before them).
export function markSuiteRuns(runs) {
  let most = 0
  for (const r of runs) {
    if (!r.full) r.suite = false
    else if (r.scope) r.suite = r.scope === 'suite'
    else {
      r.suite = r.pairs >= most
      most = Math.max(most, r.pairs)
    }
  }
  return runs
}

export function loadRuns(dir) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
  return files.map((f) => {
    const r = JSON.parse(readFileSync(join(dir, f), 'utf8'))
    const cases = (r.results ?? []).flatMap((x) =>
      (x.cases ?? []).map((c) => {
        const id = LEGACY_IDS[c.id] ?? c.id
        return {
          lib: x.lib,
          id,
          title: c.title,
          group: c.group ?? legacyGroup(id),
          wall: c.wall?.median,
          js: c.js?.median,
          rss: c.rss?.median,
          p99: c.p99, // the web lane's page latency tail
        }
      }),
    )
    return {
      file: f,
      label: r.label,
      date: r.environment?.date,
      full: isFull(r),
      scope: r.scope,
      pairs: (r.results ?? []).length,
      libraries: r.libraries ?? [...new Set(cases.map((c) => c.lib))],
      peers: r.peers,
      environment: r.environment,
      problems: r.problems ?? [],
      cases,
    }
  })
}

// The index table of experiments/README.md: | # | [title](file) | status | impact |
export function loadExperiments(dir) {
  const text = readFileSync(join(dir, 'README.md'), 'utf8')
  return [...text.matchAll(/^\| (\d{3}) \| \[(.+?)\]\((.+?)\) \| (accepted|rejected|in review) \| (.*?) \|$/gm)].map(
    (m) => ({ n: m[1], title: m[2], file: m[3], status: m[4], impact: m[5] }),
  )
}

export function build({ results = resultsDir, out = outDir, experiments = experimentsDir } = {}) {
  const runs = markSuiteRuns(loadRuns(results).filter((r) => r.date))
  const full = runs.filter((r) => r.full)
  const suites = runs.filter((r) => r.suite)
  if (suites.length === 0)
    throw new Error(`no full suite run in ${results} (a full run of every lane for every library)`)
  const latest = suites.at(-1)
  // History: resqlite's medians per case over every full run (partial ones too: a lane's
  // line simply has fewer points).
  const history = full.map((r) => ({
    file: r.file,
    label: r.label,
    date: r.date,
    cases: Object.fromEntries(
      r.cases
        .filter((c) => c.lib === 'resqlite')
        .map((c) => [c.id, { wall: c.wall, js: c.js, group: c.group, title: c.title }]),
    ),
  }))
  const data = {
    generated: new Date().toISOString(),
    latest: {
      file: latest.file,
      label: latest.label,
      date: latest.date,
      environment: latest.environment,
      libraries: latest.libraries,
      peers: latest.peers,
      problems: latest.problems,
      cases: latest.cases,
    },
    history,
    experiments: loadExperiments(experiments).map((e) => ({ ...e, href: relative(out, join(experiments, e.file)) })),
  }
  mkdirSync(out, { recursive: true })
  const require = createRequire(import.meta.url)
  // (the UMD file is not in chart.js's exports map: found next to its main file, dist/chart.cjs)
  copyFileSync(join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'), join(out, 'chart.umd.min.js'))
  for (const f of ['index.html', 'app.js', 'style.css']) copyFileSync(join(SITE, 'src', f), join(out, f))
  // Plain script (not JSON fetched at run time): file:// pages cannot fetch.
  writeFileSync(join(out, 'data.js'), `window.BENCH = ${JSON.stringify(data)};\n`)
  return { out, runs: runs.length, fullRuns: full.length, suiteRuns: suites.length, latest: latest.file }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(resultsDir)) throw new Error(`no results directory ${resultsDir}`)
  const r = build()
  console.log(
    `site: ${r.out}/index.html (${r.fullRuns} full runs of ${r.runs}; peers from the latest suite run, ${r.latest})`,
  )
}
