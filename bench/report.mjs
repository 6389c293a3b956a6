// Turns a results object (see run.mjs) into the console table and the Markdown report.
// node bench/report.mjs <results.json> rewrites the .md next to it from the JSON (after a
// change to this formatting; the numbers come from the file).
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
export const REFERENCE_LIB = 'better-sqlite3'

export const fmt = (x) =>
  x === undefined || x === null || Number.isNaN(x)
    ? '–'
    : Math.abs(x) >= 100
      ? x.toFixed(1)
      : Math.abs(x) >= 1
        ? x.toFixed(2)
        : x.toFixed(3)
const fmtInt = (x) => Math.round(x).toLocaleString('en')
const ratio = (a, b) => (a && b && b > 0 ? a / b : undefined)

export function flatCases(res) {
  return res.results.flatMap((r) => (r.cases ?? []).map((c) => ({ lib: r.lib, sync: r.sync, ...c })))
}

function extra(c) {
  const parts = []
  if (c.rate)
    parts.push(
      `${fmtInt(c.rate.median)} ${c.rate.unit}${c.rate.p90 === undefined ? '' : ` (p90 ${fmtInt(c.rate.p90)})`}`,
    )
  // the web lane: latency tail of the pages, failed requests, the concurrent report's latency
  if (c.p99 !== undefined) parts.push(`p99 ${fmt(c.p99)} / max ${fmt(c.wall.max)} ms`)
  if (c.errors !== undefined) parts.push(`errors ${c.errors}`)
  if (c.report) parts.push(`report ${fmt(c.report.median)} / max ${fmt(c.report.max)} ms`)
  if (c.stall) parts.push(`stall ${fmt(c.stall.median)} / p90 ${fmt(c.stall.p90)} / max ${fmt(c.stall.max)} ms`)
  if (c.stallCheap && c.stallHeavy)
    parts.push(`stall while cheap ${fmt(c.stallCheap.median)}, once heavy ${fmt(c.stallHeavy.median)} ms (medians)`)
  if (c.rss) parts.push(`RSS +${fmt(c.rss.median)} MB (first ${fmt(c.rssFirst)})`)
  if (c.kept) parts.push(`heap kept ${fmt(c.kept.median)} MB`)
  // live-query lanes: delivery after the write's acknowledgement, the same write with no
  // stream, and what the library's counters say it did
  if (c.afterAck) parts.push(`after ack ${fmt(c.afterAck.median)} / p90 ${fmt(c.afterAck.p90)} ms`)
  if (c.plainWrite) parts.push(`write alone ${fmt(c.plainWrite.median)} ms`)
  if (c.plainJs) parts.push(`JS per write alone ${fmt(c.plainJs.median)} ms`)
  if (c.counts)
    parts.push(`requeries ${fmt(c.counts.requeries)}, emissions ${fmt(c.counts.emissions)} per ${c.counts.per}`)
  // the tenants lane: how many databases were open, the threads they added, RSS per database
  if (c.dbs !== undefined) parts.push(`${fmtInt(c.dbs)} databases`)
  if (c.threads) parts.push(`threads +${fmtInt(c.threads.median)}`)
  if (c.rssPerDb) parts.push(`RSS ${fmt(c.rssPerDb.median)} MB per database`)
  if (c.closeAll) parts.push(`closing all ${fmt(c.closeAll.median)} ms`)
  if (c.note && c.id === 'tenants.idle') parts.push(c.note)
  // the wal-readers lane: the WAL's largest size, and the writer's inserts
  if (c.walMaxMiB !== undefined) parts.push(`WAL max ${fmt(c.walMaxMiB)} MiB`)
  if (c.insertsPerSec !== undefined) parts.push(`${fmtInt(c.insertsPerSec)} inserts/s`)
  return parts.join('; ')
}

// Rows of the big table: one per (case, library), cases in lane order, libraries in run order.
function caseRows(res) {
  const cases = flatCases(res)
  const ids = [...new Set(cases.map((c) => c.id))]
  const out = []
  for (const id of ids) {
    const ref = cases.find((c) => c.id === id && c.lib === REFERENCE_LIB)
    for (const lib of res.libraries) {
      const c = cases.find((x) => x.id === id && x.lib === lib)
      if (!c) continue
      out.push({
        c,
        cells: [
          c.title,
          lib,
          fmt(c.wall.median),
          fmt(c.wall.p90),
          fmt(c.js.median),
          fmt(c.js.p90),
          fmt(ratio(c.wall.median, ref?.wall.median)),
          fmt(ratio(c.js.median, ref?.js.median)),
          String(c.n),
          extra(c),
        ],
      })
    }
  }
  return out
}
const HEADER = ['lane', 'library', 'wall med', 'wall p90', 'JS med', 'JS p90', 'wall ×bs3', 'JS ×bs3', 'n', 'other']

export function textTable(head, body) {
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)))
  const line = (r) => r.map((v, i) => (i < 2 || i === r.length - 1 ? v.padEnd(w[i]) : v.padStart(w[i]))).join('  ')
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n')
}
export const mdTable = (head, body) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  )

export function consoleReport(res) {
  const lines = [
    `\nresqlite bench (${res.config}) — ms per sample; JS = JS-thread time; ×bs3 = ratio to better-sqlite3's median\n`,
    textTable(
      HEADER,
      caseRows(res).map((r) => r.cells),
    ),
  ]
  if (res.targets.some((t) => t.value !== undefined))
    lines.push(
      `\ntargets (resqlite vs a peer or itself, from the medians; with --repeat, a ratio's 95 % interval over the repeats)\n\n${textTable(['target', 'measured', 'goal', 'result'], targetRows(res))}`,
    )
  if (res.problems.length) lines.push(`\nproblems:\n${res.problems.map((p) => `- ${p}`).join('\n')}`)
  lines.push(`\ntotal ${res.durationS.toFixed(0)} s`)
  return lines.join('\n')
}

export const goalText = (t) => (t.op === 'reported' ? 'reported' : `${t.op} ${t.goal}`)
const targetRows = (res) =>
  res.targets.map((t) => [
    t.name,
    t.ci ? `${fmt(t.value)} (${fmt(t.ci.lo)}–${fmt(t.ci.hi)})` : fmt(t.value),
    goalText(t),
    t.value === undefined ? 'n/a' : t.op === 'reported' ? '' : t.pass ? 'PASS' : 'FAIL',
  ])

// Wall-time ratio of every library to better-sqlite3, one row per case: the at-a-glance view.
function ratioSummary(res) {
  const cases = flatCases(res)
  const ids = [...new Set(cases.map((c) => c.id))]
  const body = ids.map((id) => {
    const ref = cases.find((c) => c.id === id && c.lib === REFERENCE_LIB)
    const title = cases.find((c) => c.id === id).title
    return [
      `\`${id}\``,
      title,
      ...res.libraries.map((lib) => {
        const c = cases.find((x) => x.id === id && x.lib === lib)
        if (!c) return '–'
        // Memory: RSS growth in MB, not a ratio (growth near zero makes ratios meaningless).
        if (c.rss && c.group === 'memory') return `+${fmt(c.rss.median)} MB`
        if (c.kept) return `${fmt(c.kept.median)} MB kept`
        // tenants.idle: threads added and RSS per database, not a time
        if (c.rssPerDb)
          return `${c.threads ? `+${fmtInt(c.threads.median)} threads, ` : ''}${fmt(c.rssPerDb.median)} MB/db (${fmtInt(c.dbs)} dbs)`
        const r = ratio(c.wall.median, ref?.wall.median)
        return lib === REFERENCE_LIB
          ? `${fmt(c.wall.median)} ms`
          : r === undefined
            ? `${fmt(c.wall.median)} ms`
            : `${fmt(r)}×`
      }),
    ]
  })
  return mdTable(['case', 'what', ...res.libraries], body)
}

export function markdownReport(res) {
  const env = res.environment
  const rows = caseRows(res)
  const groups = [...new Set(rows.map((r) => r.c.group))]
  return `# resqlite benchmark — ${res.label} (${res.config})

- date: ${env.date}; run took ${res.durationS.toFixed(0)} s${res.repeat > 1 ? `; every (lane, library) run ${res.repeat} times, alternating order, samples pooled` : ''}
- Node (lanes): ${env.nodeLanes}; orchestrator: ${env.nodeOrchestrator}
- CPU: ${env.cpu}, ${env.cores} cores; OS: ${env.os}; load average at start ${env.loadStart.join(' / ')}, at end ${env.loadEnd.join(' / ')}
- resqlite ${env.resqliteVersion}${env.resqliteCommit ? ` (commit ${env.resqliteCommit}${env.resqliteDirty ? ', with uncommitted changes' : ''})` : ''}${env.resqliteNativeSha1 ? ` (native sha1 ${env.resqliteNativeSha1})` : ''}${env.resqliteRoot ? `, build at ${env.resqliteRoot}` : ''}
- libraries: ${Object.entries(env.libraries)
    .map(([lib, v]) => `${lib} ${v?.library ?? '?'} (SQLite ${v?.sqlite ?? '?'})`)
    .join('; ')}
- every connection WAL + synchronous=NORMAL; each (lane, library) in its own process on a copy of one generated database; lanes: ${res.lanes.join(', ')}
${
  Object.keys(res.laneLibraries ?? {}).length
    ? `- lanes run for some libraries only: ${Object.entries(res.laneLibraries)
        .map(([l, ls]) => `${l} (${ls.join(', ') || 'none'})`)
        .join('; ')}\n`
    : ''
}
## Peers

${res.peers.map((p) => `- **${p.lib}**: ${p.present ? 'present' : `absent — ${p.reason}`}${p.note ? ` (${p.note})` : ''}`).join('\n')}

## Wall time relative to better-sqlite3 (median; below 1 is faster; memory lanes: RSS growth)

${ratioSummary(res)}

## All lanes

Times in ms per sample: one call, or the batch the lane names. JS = time the JS thread was busy
(sync libraries: = wall; async: event-loop utilization \`active\` over the call). ×bs3 = the
median's ratio to better-sqlite3's. n = samples; each sample's operation and row counts were
checked against what the lane declares.
${groups
  .map(
    (g) =>
      `\n### ${g}\n\n${mdTable(
        HEADER,
        rows.filter((r) => r.c.group === g).map((r) => r.cells),
      )}\n`,
  )
  .join('')}
${res.targets.some((t) => t.value !== undefined) ? `\n## Targets (resqlite vs a peer or itself, from the medians above; with --repeat, a ratio's 95 % interval over the repeats)\n\n${mdTable(['target', 'measured', 'goal', 'result'], targetRows(res))}\n` : ''}
${res.comparison ? `\n## Compared to ${res.comparison.to}\n\n\`\`\`\n${res.comparison.text}\n\`\`\`\n` : ''}
${res.problems.length ? `## Problems\n\n${res.problems.map((p) => `- ${p}`).join('\n')}\n` : ''}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2]
  writeFileSync(file.replace(/\.json$/, '.md'), markdownReport(JSON.parse(readFileSync(file, 'utf8'))))
  console.log(`wrote ${file.replace(/\.json$/, '.md')}`)
}
