// watchExternalChanges on a database opened readonly: another process's commits re-run live
// queries, as on a read-write database (issue 30 item 17).

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'
import { collect } from './live-helpers.mjs'

const TIMEOUT = { timeout: 60_000 }

const INDEX = fileURLToPath(new URL('../dist/esm/index.mjs', import.meta.url))

/** Runs `code` (an ES module body with `Database` imported) in another Node process. */
function inChild(code, env) {
  const source = `import { Database } from ${JSON.stringify(INDEX)}\n${code}`
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', source],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`child failed: ${error.message}\n${stderr}`)) : resolve(stdout),
    )
  })
}

/** Opens `file` in another Node process, runs `statements` (code using `db`) and closes it. */
function commitInChild(file, statements) {
  return inChild(`const db = await Database.open(process.env.FILE)\n${statements}\nawait db.close()`, { FILE: file })
}

test('readonly with watchExternalChanges: another process committing re-runs the live query', TIMEOUT, async (t) => {
  const file = path.join(tempDir(t), 'dashboard.db')
  const setup = await Database.open(file)
  await setup.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  await setup.executeBatch(
    'INSERT INTO t (v) VALUES (?)',
    Array.from({ length: 40 }, (_, i) => [`row ${i}`]),
  )
  await setup.close()

  const ro = await Database.open(file, { readonly: true, watchExternalChanges: { interval: 50 } })
  t.after(() => ro.close())
  const live = collect(ro.stream('SELECT count(*) AS n FROM t'))
  assert.deepStrictEqual(await live.next(), [{ n: 40 }])
  await commitInChild(
    file,
    "await db.executeBatch('INSERT INTO t (v) VALUES (?)', Array.from({ length: 20 }, (_, i) => ['more ' + i]))",
  )
  await live.waitFor((c) => c.last?.[0]?.n === 60, 'the count after the other process committed', 10_000)
  assert.deepStrictEqual(live.errors, [])
  // and again, while the other process stays open
  await commitInChild(file, 'await db.execute("DELETE FROM t WHERE id <= 10")')
  await live.waitFor((c) => c.last?.[0]?.n === 50, 'the count after a second commit', 10_000)
  live.stop()
})

test(
  'readonly with watchExternalChanges: a commit made while the readers were closed for idling still re-runs the live query',
  TIMEOUT,
  async (t) => {
    const file = path.join(tempDir(t), 'idle.db')
    const setup = await Database.open(file)
    await setup.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
    await setup.execute("INSERT INTO t (v) VALUES ('a')")
    await setup.close()

    // idleTimeout 0: every connection no read holds closes at the next sweep (about every
    // 500 ms), so the first check, 2 s in, runs on a connection opened after the commit below.
    const ro = await Database.open(file, { readonly: true, idleTimeout: 0, watchExternalChanges: { interval: 2000 } })
    t.after(() => ro.close())
    const live = collect(ro.stream('SELECT count(*) AS n FROM t'))
    assert.deepStrictEqual(await live.next(), [{ n: 1 }])
    await commitInChild(file, `await db.execute("INSERT INTO t (v) VALUES ('b')")`)
    await live.waitFor((c) => c.last?.[0]?.n === 2, 'the count after the other process committed', 15_000)
    assert.deepStrictEqual(live.errors, [])
    live.stop()
  },
)
