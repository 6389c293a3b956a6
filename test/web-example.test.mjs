// examples/web in a real browser (Debian's chromium, test/chromium.mjs). Starts the app on a
// free loopback port with a fresh database, opens two pages, adds a todo in one and expects it
// in the other without a reload, pushed over Server-Sent Events. Saves a screenshot to
// test-output/web-example.png.

import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startServer } from '../examples/web/server.mjs'
import { launchChromium } from './chromium.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
// How long a todo added in one page may take to show in the other (commit → live query re-run
// → SSE → render); it takes milliseconds here, the bound leaves room for a loaded machine.
const PUSH_BOUND_MS = 2000

const withApp = async (body) => {
  const dir = mkdtempSync(join(tmpdir(), 'resqlite-web-'))
  const app = await startServer({ file: join(dir, 'todos.db') })
  try {
    await body(app)
  } finally {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

test('web example: JSON endpoints, and bad input gets a 400 that names the problem', () =>
  withApp(async ({ url }) => {
    const post = (path, body) =>
      fetch(new URL(path, url), { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    const created = await post('api/todos', JSON.stringify({ title: 'write the example' }))
    assert.equal(created.status, 201)
    const { id } = await created.json()
    assert.equal((await post('api/todos/toggle', JSON.stringify({ id }))).status, 200)
    const res = await fetch(new URL('api/todos', url))
    assert.equal(res.headers.get('content-type'), 'application/json')
    assert.deepEqual(await res.json(), [{ id, title: 'write the example', done: 1 }])

    const empty = await post('api/todos', JSON.stringify({ title: '  ' }))
    assert.equal(empty.status, 400)
    assert.match((await empty.json()).error, /title must be a string of 1 to 200 characters/)
    const notJson = await post('api/todos', '{')
    assert.equal(notJson.status, 400)
    assert.match((await notJson.json()).error, /not JSON/)
    const missing = await post('api/todos/toggle', JSON.stringify({ id: 999 }))
    assert.equal(missing.status, 404)
    assert.match((await missing.json()).error, /no todo 999/)

    const cleared = await post('api/todos/clear-done', '{}')
    assert.deepEqual(await cleared.json(), { cleared: 1 })
    assert.deepEqual(await (await fetch(new URL('api/todos', url))).json(), [])
  }))

test('web example: a todo added in one page appears in another without a reload', async () => {
  const browser = await launchChromium()
  try {
    await withApp(async ({ url }) => {
      const errors = []
      const open = async () => {
        const page = await browser.newPage({ viewport: { width: 800, height: 600 } })
        page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`))
        page.on('pageerror', (e) => errors.push(`page error: ${e.message}`))
        await page.goto(url)
        await page.waitForFunction(() => document.getElementById('status').textContent.endsWith('live'))
        return page
      }
      const writer = await open()
      const reader = await open()
      let reloads = 0
      reader.on('load', () => reloads++)

      await writer.fill('input[name=title]', 'buy oat milk')
      const started = performance.now()
      await writer.click('form#add button')
      await reader.waitForSelector('#todos li:has-text("buy oat milk")', { timeout: PUSH_BOUND_MS })
      const pushedMs = performance.now() - started
      assert.ok(pushedMs < PUSH_BOUND_MS, `took ${pushedMs} ms`)

      // A toggle in the other direction: the reader checks it, the writer's page crosses it out.
      await reader.click('#todos li:has-text("buy oat milk") input[type=checkbox]')
      await writer.waitForSelector('#todos li.done:has-text("buy oat milk")', { timeout: PUSH_BOUND_MS })

      assert.equal(reloads, 0)
      assert.equal(await reader.locator('#todos li').count(), 1)
      mkdirSync(join(ROOT, 'test-output'), { recursive: true })
      await reader.screenshot({ path: join(ROOT, 'test-output', 'web-example.png'), fullPage: true })
      assert.deepEqual(errors, [])
      await writer.close()
      await reader.close()
    })
  } finally {
    await browser.close()
  }
})
