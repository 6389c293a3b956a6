// The `attach` open option: databases attached on every connection (writer and readers), so
// reads and live queries on any reader see them.

import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

import { Database } from '../dist/esm/index.mjs'
import { tempDir } from './helpers.mjs'
import { collect } from './live-helpers.mjs'

test('attached databases are readable on every reader, in WAL mode, and live queries track them', async (t) => {
  const dir = tempDir(t)
  const aux = path.join(dir, 'aux.db')
  const db = await Database.open(path.join(dir, 'main.db'), { readers: 3, attach: { aux } })
  t.after(() => db.close())
  await db.execute(
    'CREATE TABLE aux.t (id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE main.t (id INTEGER PRIMARY KEY, v TEXT)',
  )
  await db.execute("INSERT INTO aux.t (v) VALUES ('a')")
  assert.ok(existsSync(`${aux}-wal`), 'the attached database is in WAL mode')
  // many reads at once spread over the readers: each must know aux
  const counts = await Promise.all(Array.from({ length: 24 }, () => db.selectOne('SELECT count(*) AS n FROM aux.t')))
  assert.deepEqual(new Set(counts.map((r) => r.n)), new Set([1]))

  const onAux = collect(db.stream('SELECT v FROM aux.t ORDER BY id'))
  const onMain = collect(db.stream('SELECT v FROM main.t ORDER BY id'))
  assert.deepEqual(await onAux.next(), [{ v: 'a' }])
  assert.deepEqual(await onMain.next(), [])
  await db.execute("INSERT INTO aux.t (v) VALUES ('b')")
  assert.deepEqual(await onAux.next(), [{ v: 'a' }, { v: 'b' }])
  // a write to main.t (same table name, other schema) does not touch the aux stream
  await db.execute("INSERT INTO main.t (v) VALUES ('m')")
  assert.deepEqual(await onMain.next(), [{ v: 'm' }])
  assert.equal(onAux.deliveries.length, 2)
})

test('attach: bad schema names and paths are refused before anything is opened', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'never.db')
  for (const [attach, code] of [
    [{ main: path.join(dir, 'x.db') }, 'ERR_INVALID_ARG_VALUE'],
    [{ TEMP: path.join(dir, 'x.db') }, 'ERR_INVALID_ARG_VALUE'],
    [{ aux: 42 }, 'ERR_INVALID_ARG_TYPE'],
    [{ aux: ':memory:' }, 'ERR_INVALID_PATH'],
    [['x.db'], 'ERR_INVALID_ARG_TYPE'],
  ]) {
    await assert.rejects(Database.open(file, { attach }), (e) => e.code === code, JSON.stringify(attach))
  }
  assert.equal(existsSync(file), false)
})

test('an attached file that cannot be opened fails the open with its path named', async (t) => {
  const dir = tempDir(t)
  const missingDir = path.join(dir, 'no', 'such', 'dir', 'aux.db')
  await assert.rejects(
    Database.open(path.join(dir, 'main.db'), { attach: { aux: missingDir } }),
    (e) => e.code === 'SQLITE_CANTOPEN' && e.message.includes(missingDir),
  )
})

test('rekey is refused on a database opened with attach (the attachments would stay on the old key)', async (t) => {
  const dir = tempDir(t)
  const db = await Database.open(path.join(dir, 'main.db'), { attach: { aux: path.join(dir, 'aux.db') } })
  t.after(() => db.close())
  await db.execute('CREATE TABLE aux.t (x)')
  await assert.rejects(db.rekey('a new key'), (e) => e.code === 'ERR_REKEY' && /attach/.test(e.message))
  // nothing changed: the database still works
  await db.execute('INSERT INTO aux.t VALUES (1)')
  assert.deepEqual(await db.select('SELECT x FROM aux.t'), [{ x: 1 }])
})
