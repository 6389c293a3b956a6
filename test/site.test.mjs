// The benchmark dashboard (site/) in a real browser: Debian's chromium driven by
// playwright-core. Builds the page from test/fixtures/bench-results (two release runs in the
// compact form run.mjs writes, cut down to two libraries and one case of seven lanes: see its
// README.md) into a temp dir, opens it from file:// (as a reader would, offline), and checks
// that every chart has data, that the experiments filter works and that nothing was logged as
// an error. Saves a screenshot to test-output/site.png. Fails (does not skip) when chromium is
// missing (test/chromium.mjs). SITE_RESULTS=<dir> builds from another results directory (to
// try the page on other runs, e.g. bench/results). The peer comparison comes from the latest
// suite run (site/build.mjs); the first test checks that rule on its own.

import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build, loadRuns, markSuiteRuns } from '../site/build.mjs'
import { launchChromium } from './chromium.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = join(ROOT, 'test/fixtures/bench-results')

// A results file as run.mjs writes it, reduced to what the dashboard reads.
const runFile = ({ label, config, scope, date, lanes, libs }) => ({
  label,
  config,
  scope,
  environment: { date },
  lanes,
  libraries: libs,
  results: libs.flatMap((lib) =>
    lanes.map((lane) => ({
      lib,
      lane,
      cases: [{ id: lane, title: lane, group: lane, wall: { median: 1 }, js: { median: 1 } }],
    })),
  ),
})

test('dashboard: peers come from the latest suite run, not a later partial or quick run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'resqlite-site-runs-'))
  try {
    // The fixtures' suite run the page uses, then later runs that must not replace it.
    const suite = markSuiteRuns(loadRuns(RESULTS))
      .filter((r) => r.suite)
      .at(-1)
    assert.ok(suite, `${RESULTS} holds no suite run`)
    copyFileSync(join(RESULTS, suite.file), join(dir, suite.file))
    const later = (n) => new Date(Date.parse(suite.date) + n * 60_000).toISOString()
    const write = (r) =>
      writeFileSync(join(dir, `${r.environment.date.replace(/:/g, '-')}-${r.label}.json`), JSON.stringify(r))
    write(
      runFile({
        label: 'check',
        config: 'full',
        scope: 'partial',
        date: later(1),
        lanes: ['live-latency'],
        libs: ['resqlite'],
      }),
    )
    write(
      runFile({
        label: 'quick',
        config: 'quick',
        scope: 'partial',
        date: later(2),
        lanes: ['select', 'bytes', 'point', 'batch', 'stall'],
        libs: ['resqlite', 'better-sqlite3'],
      }),
    )
    const out = join(dir, 'site')
    assert.equal(build({ results: dir, out }).latest, suite.file)
    // A newer suite run does take over.
    write(
      runFile({
        label: 'suite',
        config: 'full',
        scope: 'suite',
        date: later(3),
        lanes: ['select', 'bytes'],
        libs: ['resqlite', 'better-sqlite3'],
      }),
    )
    assert.match(build({ results: dir, out }).latest, /-suite\.json$/)
    // The partial run still enters resqlite's history (its lane just has fewer points).
    const data = readFileSync(join(out, 'data.js'), 'utf8')
    assert.ok(
      JSON.parse(data.slice(data.indexOf('{'), data.lastIndexOf('}') + 1)).history.some((h) => h.label === 'check'),
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('dashboard: every chart has data, the filter works, no console errors', async () => {
  const out = mkdtempSync(join(tmpdir(), 'resqlite-site-'))
  const browser = await launchChromium()
  try {
    build({ out, results: process.env.SITE_RESULTS ?? RESULTS })
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors = []
    page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`))
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`))
    page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`))
    await page.goto(pathToFileURL(join(out, 'index.html')).href)
    await page.waitForFunction(() => window.__siteReady === true, null, { timeout: 10_000 })

    const { charts, canvases, groups, historyIds } = await page.evaluate(() => ({
      charts: Object.values(window.Chart.instances).map((c) => ({
        id: c.canvas.id,
        datasets: c.data.datasets.length,
        points: c.data.datasets
          .flatMap((d) => d.data)
          .filter((v) => typeof v === 'number' && Number.isFinite(v) && v > 0).length,
      })),
      canvases: [...document.querySelectorAll('canvas')].map((c) => c.id),
      groups: [...new Set(window.BENCH.latest.cases.map((c) => c.group))],
      historyIds: Object.keys(window.BENCH.history.at(-1).cases),
    }))
    // One chart per canvas, and at least wall + JS-thread for every lane group of the latest run.
    assert.deepEqual(charts.map((c) => c.id).sort(), [...canvases].sort())
    for (const g of groups) {
      assert.ok(canvases.includes(`chart-${g}-wall`), `no wall chart for ${g}`)
      assert.ok(canvases.includes(`chart-${g}-js`), `no JS-thread chart for ${g}`)
    }
    assert.ok(groups.length >= 5, `latest run has only ${groups.length} lane groups`)
    assert.ok(historyIds.length > 0, 'history has no resqlite cases')
    assert.ok(
      canvases.some((id) => id.startsWith('history-')),
      'no history chart',
    )
    for (const c of charts) {
      assert.ok(c.datasets > 0, `${c.id}: no datasets`)
      assert.ok(c.points > 0, `${c.id}: no data points`)
    }

    // The experiments filter shows only the chosen status.
    const total = await page.$$eval('#experiment-rows tr', (rs) => rs.length)
    assert.ok(total > 0, 'no experiments listed')
    await page.click('button[data-filter="rejected"]')
    const shown = await page.$$eval('#experiment-rows tr:not([hidden])', (rs) => rs.map((r) => r.dataset.status))
    assert.ok(shown.length > 0 && shown.length < total, `rejected filter shows ${shown.length} of ${total}`)
    assert.ok(
      shown.every((s) => s === 'rejected'),
      `rejected filter shows ${shown}`,
    )
    await page.click('button[data-filter="all"]')

    mkdirSync(join(ROOT, 'test-output'), { recursive: true })
    await page.screenshot({ path: join(ROOT, 'test-output', 'site.png'), fullPage: true })
    assert.deepEqual(errors, [])
  } finally {
    await browser.close()
    rmSync(out, { recursive: true, force: true })
  }
})
