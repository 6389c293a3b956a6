// Every error a call rejects with names the frames of the code that awaits it, whichever thread
// ran it (docs/values-and-errors.md): a reader, the writer, a write group on the JS thread after
// the call returned, a write queued behind a transaction, an iteration's page, a backup, open.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'
import { fileURLToPath } from 'node:url'
import { Database, ResqliteError } from '../dist/esm/index.mjs'
import { openDb, tempDir } from './helpers.mjs'

/** The rejection of `call()`, awaited from a function whose name the stack must show. */
async function rejectionOf(call) {
  async function applicationFrame() {
    await call()
  }
  try {
    await applicationFrame()
  } catch (error) {
    return error
  }
  assert.fail('expected a rejection')
}

/** The built library's folder: its frames are left out of the stacks (values-and-errors.md). */
const LIBRARY_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist') + path.sep

function assertNamesCaller(error, code) {
  assert.ok(error instanceof Error, `not an Error: ${error}`)
  if (code) assert.equal(error.code, code)
  assert.match(error.stack, /applicationFrame/, `the stack does not name the caller:\n${error.stack}`)
  assert.ok(error.stack.startsWith(`${error.name}: ${error.message}`), error.stack)
  assert.ok(!error.stack.includes(LIBRARY_DIR), `the library's own frames are left in the stack:\n${error.stack}`)
}

async function setUp(t, options) {
  const db = await openDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v NOT NULL)')
  await db.execute('INSERT INTO t VALUES (1, 1)')
  await db.execute('CREATE TABLE big (x)')
  await db.execute(
    'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) INSERT INTO big SELECT i FROM n',
  )
  return db
}

// A runtime error (raised as the statement steps, not as it compiles).
const FAILING_READ = 'SELECT abs(-9223372036854775807 - 1) FROM t'

test('a read that fails on a reader thread names its caller', async (t) => {
  const db = await setUp(t, { inlineBudget: 0 })
  for (const read of [
    () => db.select(FAILING_READ),
    () => db.selectOne(FAILING_READ),
    () => db.selectBytes(FAILING_READ),
    () => db.select('SELECT * FROM missing'),
  ]) {
    assertNamesCaller(await rejectionOf(read))
  }
})

test('a read that fails on the JS thread names its caller', async (t) => {
  const db = await setUp(t)
  assertNamesCaller(await rejectionOf(() => db.select(FAILING_READ)))
})

test('a write that fails on the writer thread names its caller', async (t) => {
  const db = await setUp(t, { inlineBudget: 0 })
  assertNamesCaller(await rejectionOf(() => db.execute('INSERT INTO t VALUES (1, 2)')), 'SQLITE_CONSTRAINT_PRIMARYKEY')
  assertNamesCaller(
    await rejectionOf(() =>
      db.executeBatch('INSERT INTO t VALUES (?, ?)', [
        [5, 1],
        [6, null],
      ]),
    ),
    'SQLITE_CONSTRAINT_NOTNULL',
  )
  // Not bounded: the writer thread even with the JS thread allowed.
  const db2 = await setUp(t)
  assertNamesCaller(
    await rejectionOf(() => db2.execute('INSERT INTO t SELECT 1, x FROM big WHERE x = 3')),
    'SQLITE_CONSTRAINT_PRIMARYKEY',
  )
})

test('a write that fails in a write group names its caller', async (t) => {
  const db = await setUp(t)
  const writes = [
    db.execute('INSERT INTO t VALUES (10, 1)'),
    db.execute('INSERT INTO t VALUES (11, 1)'),
    db.execute('INSERT INTO t VALUES (12, 1)'),
  ]
  const failing = rejectionOf(() => db.execute('INSERT INTO t VALUES (10, 2)'))
  await Promise.all(writes)
  assertNamesCaller(await failing, 'SQLITE_CONSTRAINT_PRIMARYKEY')
})

test('a statement of a transaction, and one queued behind it, name their callers', async (t) => {
  const db = await setUp(t, { inlineBudget: 0 })
  let inBody
  const tx = db.transaction(async (tx) => {
    inBody = await rejectionOf(() => tx.execute('INSERT INTO t VALUES (1, 3)'))
    await new Promise((r) => setTimeout(r, 10))
  })
  const queued = await rejectionOf(() => db.execute('INSERT INTO t VALUES (1, 4)'))
  await tx
  assertNamesCaller(inBody, 'SQLITE_CONSTRAINT_PRIMARYKEY')
  assertNamesCaller(queued, 'SQLITE_CONSTRAINT_PRIMARYKEY')
})

test("an iteration's failing page, a failed backup and a failed open name their callers", async (t) => {
  const db = await setUp(t)
  assertNamesCaller(
    await rejectionOf(async () => {
      for await (const _ of db.iterate('SELECT abs(-9223372036854775807 - x) FROM big', [], { pageRows: 10 }));
    }),
  )
  const dir = tempDir(t)
  assertNamesCaller(await rejectionOf(() => db.backup(path.join(dir, 'no', 'such', 'dir', 'copy.db'))))
  const file = path.join(dir, 'secret.db')
  const encrypted = await Database.open(file, { encryptionKey: 'right' })
  await encrypted.close()
  assert.ok(fs.existsSync(file))
  assertNamesCaller(await rejectionOf(() => Database.open(file, { encryptionKey: 'wrong' })), 'ERR_ENCRYPTION_KEY')
})

test('an aborted read on a reader names its caller', async (t) => {
  const db = await setUp(t, { inlineBudget: 0 })
  const controller = new AbortController()
  const read = rejectionOf(() =>
    db.select('SELECT count(*) FROM big a, big b, big c', [], { signal: controller.signal }),
  )
  setTimeout(() => controller.abort(), 20)
  const error = await read
  assertNamesCaller(error, 'ABORT_ERR')
  assert.ok(!(error instanceof ResqliteError) || error.code === 'ABORT_ERR')
})

test("a read that fails on the JS thread inside a transaction names its caller within V8's default 10 frames", async (t) => {
  assert.equal(Error.stackTraceLimit, 10)
  const db = await setUp(t)
  const error = await rejectionOf(() =>
    db.transaction(async (tx) => {
      await tx.select('SELECT * FROM missing WHERE id IN -1')
    }),
  )
  assertNamesCaller(error)
  assert.doesNotMatch(error.stack, /dist[/\\](cjs|esm)[/\\]/, "the library's own frames are left out")
})
