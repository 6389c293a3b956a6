// The program the Prisma differential test (test/prisma.test.mjs) runs through two adapters:
// every scalar type with random values (a seeded PRNG), relations, nested writes, createMany,
// upsert, updateMany, aggregates, groupBy, cursor pagination, both kinds of `$transaction`, raw
// queries with every parameter type, and the errors Prisma maps (unique, foreign key, NOT NULL,
// busy, not found). Each step's outcome is kept as plain JSON (`plain`), values tagged by type,
// errors by class, Prisma code, meta and message.
import { prng } from '../helpers.mjs'

/** What `prisma` gives for each step, in order: `[label, { value } | { error }]`. `lock()` holds
 * the database's write lock from another connection until the function it resolves is called. */
export async function program(prisma, { seed, Prisma, lock }) {
  const rand = prng(seed)
  const pick = (list) => list[Math.floor(rand() * list.length)]
  const maybe = (make) => (rand() < 0.2 ? null : make())
  const out = []
  const step = async (label, fn) => {
    try {
      out.push([label, { value: plain(await fn()) }])
    } catch (error) {
      out.push([label, { error: plainError(error) }])
    }
  }

  const int32 = () => pick([0, -1, 2 ** 31 - 1, -(2 ** 31), Math.floor((rand() - 0.5) * 2 ** 31)])
  const bigint = () =>
    pick([0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, BigInt(Math.floor((rand() - 0.5) * 2 ** 52))])
  const float = () => pick([0, 1.5, -1e300, 5e-324, 1 / 3, (rand() - 0.5) * 1e6, 2 ** 53])
  const decimal = () => new Prisma.Decimal(`${Math.floor((rand() - 0.5) * 1e6)}.${Math.floor(rand() * 1e4)}`)
  const string = () => {
    let s = ''
    for (let i = 1 + Math.floor(rand() * 6); i > 0; i--)
      s += pick(['a', 'é', '日本', '🎉', ' ', '"', "'", '\\', '%', '_'])
    return s
  }
  const date = () => new Date(Math.floor((rand() - 0.3) * 6e12))
  const json = (depth = 0) => {
    const r = rand()
    if (r < 0.1) return null
    if (r < 0.25) return Math.floor((rand() - 0.5) * 1e9) / 8
    if (r < 0.4) return string()
    if (r < 0.5) return rand() < 0.5
    if (depth > 2) return 0
    if (r < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => json(depth + 1))
    return Object.fromEntries(
      Array.from({ length: Math.floor(rand() * 4) }, (_, i) => [`k${i}${string()}`, json(depth + 1)]),
    )
  }
  const bytes = () => Buffer.from(Array.from({ length: Math.floor(rand() * 20) }, () => Math.floor(rand() * 256)))
  const role = () => pick(['USER', 'ADMIN', 'GUEST'])
  let serial = 0
  const user = () => ({
    email: `${string()}-${serial++}@example.com`,
    name: maybe(string),
    role: role(),
    age: maybe(int32),
    big: maybe(bigint),
    score: maybe(float),
    balance: maybe(decimal),
    active: rand() < 0.5,
    born: maybe(date),
    // Json's null is Prisma.JsonNull (a JSON null) or Prisma.DbNull (SQL NULL).
    profile: rand() < 0.2 ? Prisma.DbNull : (json() ?? Prisma.JsonNull),
    avatar: maybe(bytes),
  })
  const everything = { posts: { include: { tags: true }, orderBy: { id: 'asc' } }, manager: true, reports: true }

  // Writes: createMany, nested creates, relations of every kind.
  await step('createMany', () => prisma.user.createMany({ data: Array.from({ length: 25 }, user) }))
  for (let i = 0; i < 12; i++) {
    await step(`create nested ${i}`, () =>
      prisma.user.create({
        data: {
          ...user(),
          posts: {
            create: Array.from({ length: Math.floor(rand() * 3) }, () => ({
              title: string(),
              views: bigint(),
              tags: {
                connectOrCreate: Array.from({ length: Math.floor(rand() * 3) }, () => {
                  const name = pick(['red', 'green', 'blue', 'é', '日本'])
                  return { where: { name }, create: { name } }
                }),
              },
            })),
          },
        },
        include: everything,
      }),
    )
  }
  const ids = (await prisma.user.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map((u) => u.id)
  for (let i = 1; i < ids.length; i += 2) {
    const manager = ids[Math.floor(rand() * i)]
    await step(`connect manager ${i}`, () =>
      prisma.user.update({
        where: { id: ids[i] },
        data: { manager: { connect: { id: manager } } },
        include: everything,
      }),
    )
  }
  await step('nested update', () =>
    prisma.user.update({
      where: { id: ids[0] },
      data: {
        name: string(),
        posts: {
          create: { title: 'nested', tags: { create: { name: 'fresh' } } },
          updateMany: { where: {}, data: { views: 7n } },
        },
      },
      include: everything,
    }),
  )

  // Reads.
  await step('findMany all', () =>
    prisma.user.findMany({ orderBy: { id: 'asc' }, include: { ...everything, _count: true } }),
  )
  await step('tags with posts', () =>
    prisma.tag.findMany({ orderBy: { name: 'asc' }, include: { posts: { orderBy: { id: 'asc' } } } }),
  )
  for (let i = 0; i < 6; i++) {
    const [age, big, score, born, balance] = [int32(), bigint(), float(), date(), decimal()]
    await step(`filters ${i}`, () =>
      prisma.user.findMany({
        where: {
          OR: [
            { age: { gt: age } },
            { big: { lte: big } },
            { score: { gte: score } },
            { born: { lt: born } },
            { balance: { gt: balance } },
            { email: { contains: pick(['é', 'a', '%', '_', '日本']) } },
            { role: { in: [role(), role()] }, active: rand() < 0.5 },
            { avatar: { not: null }, name: null },
          ],
        },
        orderBy: [{ score: { sort: 'desc', nulls: 'last' } }, { id: 'asc' }],
        select: { id: true, email: true, age: true, big: true, score: true, born: true, balance: true },
      }),
    )
  }
  await step('findUnique', () => prisma.user.findUnique({ where: { id: ids[3] }, include: everything }))
  await step('findUnique by email', async () => {
    const { email } = await prisma.user.findUniqueOrThrow({ where: { id: ids[5] } })
    return prisma.user.findUnique({ where: { email } })
  })
  await step('findFirst', () => prisma.user.findFirst({ where: { role: 'ADMIN' }, orderBy: { big: 'desc' } }))
  await step('distinct', () =>
    prisma.post.findMany({ distinct: ['authorId'], orderBy: { authorId: 'asc' }, select: { authorId: true } }),
  )
  await step('count', () => prisma.user.count({ where: { active: true } }))
  await step('relation filter', () =>
    prisma.user.findMany({
      where: { posts: { some: { tags: { some: { name: 'red' } } } } },
      select: { id: true },
      orderBy: { id: 'asc' },
    }),
  )

  // Upsert, updateMany, deleteMany.
  await step('upsert existing', () =>
    prisma.user.upsert({ where: { id: ids[2] }, update: { score: float(), big: bigint() }, create: user() }),
  )
  await step('upsert new', () => prisma.user.upsert({ where: { id: 100000 }, update: {}, create: user() }))
  await step('updateMany', () =>
    prisma.user.updateMany({ where: { role: 'GUEST' }, data: { active: false, born: date() } }),
  )
  await step('updateMany increment', () =>
    prisma.post.updateMany({ where: { views: { gt: 0n, lt: 2n ** 40n } }, data: { views: { increment: 3n } } }),
  )
  await step('update decrement', () =>
    prisma.user.update({ where: { id: ids[1] }, data: { score: { multiply: 2 }, age: { set: 41 } } }),
  )

  // Aggregates and groupBy.
  await step('aggregate', () =>
    prisma.user.aggregate({
      _count: { _all: true, age: true, avatar: true },
      _sum: { age: true, score: true, balance: true },
      _avg: { age: true, score: true, balance: true },
      _min: { age: true, big: true, score: true, balance: true, born: true, email: true },
      _max: { age: true, big: true, score: true, balance: true, born: true, email: true },
    }),
  )
  // Summing int64 extremes may overflow: SQLite's error, compared as any other.
  await step('aggregate bigint sum', () => prisma.post.aggregate({ _sum: { views: true }, _count: { views: true } }))
  await step('groupBy', () =>
    prisma.user.groupBy({
      by: ['role', 'active'],
      _count: { _all: true },
      _avg: { score: true },
      _max: { born: true, big: true },
      orderBy: [{ role: 'asc' }, { active: 'asc' }],
    }),
  )
  await step('groupBy having', () =>
    prisma.post.groupBy({
      by: ['authorId'],
      _count: { id: true },
      having: { id: { _count: { gt: 1 } } },
      orderBy: { authorId: 'asc' },
    }),
  )

  // Cursor pagination.
  await step('cursor pages', async () => {
    const pages = []
    let cursor
    for (;;) {
      const page = await prisma.user.findMany({
        take: 7,
        ...(cursor === undefined ? {} : { skip: 1, cursor: { id: cursor } }),
        orderBy: { id: 'asc' },
        select: { id: true, email: true, big: true },
      })
      if (page.length === 0) break
      pages.push(page)
      cursor = page.at(-1).id
    }
    return pages
  })

  // Transactions: batch and interactive, committed and rolled back.
  await step('batch transaction', () =>
    prisma.$transaction([
      prisma.tag.create({ data: { name: 'batch' } }),
      prisma.user.update({ where: { id: ids[4] }, data: { profile: json() ?? Prisma.JsonNull } }),
      prisma.tag.count(),
    ]),
  )
  await step('batch transaction failing', () =>
    prisma.$transaction([
      prisma.tag.create({ data: { name: 'batch2' } }),
      prisma.tag.create({ data: { name: 'batch' } }),
    ]),
  )
  await step('after failed batch', () => prisma.tag.findMany({ where: { name: { startsWith: 'batch' } } }))
  await step('interactive commit', () =>
    prisma.$transaction(async (tx) => {
      const created = await tx.user.create({
        data: { ...user(), posts: { create: { title: 'in tx' } } },
        include: { posts: true },
      })
      const seen = await tx.user.count()
      await tx.post.updateMany({ where: { authorId: created.id }, data: { views: bigint() } })
      return { created, seen, posts: await tx.post.findMany({ where: { authorId: created.id } }) }
    }),
  )
  await step('interactive throw', () =>
    prisma.$transaction(async (tx) => {
      await tx.tag.create({ data: { name: 'thrown' } })
      await tx.user.deleteMany({ where: { role: 'ADMIN', posts: { none: {} } } })
      throw new Error('the body threw')
    }),
  )
  await step('interactive unique violation', () =>
    prisma.$transaction(async (tx) => {
      await tx.tag.create({ data: { name: 'inside' } })
      await tx.tag.create({ data: { name: 'inside' } })
    }),
  )
  await step('nested transactions', async () => {
    const inner = []
    await prisma.$transaction(async (tx) => {
      await tx.tag.create({ data: { name: 'outer' } })
      await tx.$transaction(async (t2) => t2.tag.create({ data: { name: 'inner kept' } }))
      inner.push(
        await tx
          .$transaction(async (t2) => {
            await t2.tag.create({ data: { name: 'inner thrown' } })
            throw new Error('the inner body threw')
          })
          .catch((error) => error.message),
      )
      inner.push(await tx.tag.count())
    })
    return {
      inner,
      tags: await prisma.tag.findMany({ where: { name: { in: ['outer', 'inner kept', 'inner thrown'] } } }),
    }
  })
  await step('after rolled back', () =>
    Promise.all([prisma.tag.count({ where: { name: { in: ['thrown', 'inside'] } } }), prisma.user.count()]),
  )

  // Raw queries, every parameter type.
  const params = [int32(), bigint(), float(), string(), true, false, date(), bytes(), null, decimal()]
  await step(
    'queryRaw params',
    () =>
      // A JS number is bound as REAL by better-sqlite3 and, when integral, as INTEGER by resqlite
      // (docs/integrations.md): selected bare, it reads back as a number there and a BigInt here.
      // Cast, the two agree.
      prisma.$queryRaw`SELECT CAST(${params[0]} AS INTEGER) AS i, ${params[1]} AS b, CAST(${params[2]} AS REAL) AS f, ${params[3]} AS s, CAST(${params[4]} AS INTEGER) AS t, CAST(${params[5]} AS INTEGER) AS fa, ${params[6]} AS d, length(${params[7]}) AS blen, hex(${params[7]}) AS bhex, ${params[8]} AS n, ${params[9]} AS dec`,
  )
  await step(
    'queryRaw typed columns',
    () => prisma.$queryRaw`SELECT * FROM "User" WHERE "id" IN (${ids[0]}, ${ids[1]}, ${ids[2]}) ORDER BY "id"`,
  )
  await step('queryRaw where bytes', async () => {
    const { avatar } = (await prisma.user.findFirst({ where: { avatar: { not: null } }, orderBy: { id: 'asc' } })) ?? {}
    return prisma.$queryRaw`SELECT "id" FROM "User" WHERE "avatar" = ${avatar ?? bytes()}`
  })
  await step(
    'queryRaw expressions',
    () =>
      prisma.$queryRaw`SELECT count(*) AS n, sum("score") AS s, avg("age") AS a, max("big") AS m, typeof("balance") AS tb, NULL AS nada, 1.0 * 3 AS r FROM "User"`,
  )
  await step(
    'queryRaw join',
    () =>
      prisma.$queryRaw`SELECT u."email", p."title", p."views", t."name" FROM "User" u JOIN "Post" p ON p."authorId" = u."id" LEFT JOIN "_PostToTag" pt ON pt."A" = p."id" LEFT JOIN "Tag" t ON t."id" = pt."B" ORDER BY p."id", t."name"`,
  )
  await step('queryRawUnsafe', () =>
    prisma.$queryRawUnsafe(
      'SELECT "id", "born", "active" FROM "User" WHERE "role" = ? ORDER BY "id" LIMIT ?',
      role(),
      5,
    ),
  )
  await step(
    'executeRaw',
    () => prisma.$executeRaw`UPDATE "User" SET "name" = ${string()}, "big" = ${bigint()} WHERE "id" <= ${ids[6]}`,
  )
  await step('DateTime stored as milliseconds', async () => {
    // What timestampFormat 'unixepoch-ms' writes: Prisma reads an integer DateTime as the instant.
    await prisma.$executeRawUnsafe('UPDATE "User" SET "born" = ? WHERE "id" = ?', date().getTime(), ids[8])
    return prisma.user.findUnique({ where: { id: ids[8] }, select: { born: true } })
  })
  await step('executeRawUnsafe', () => prisma.$executeRawUnsafe('DELETE FROM "Tag" WHERE "name" = ?', 'fresh'))

  // Errors.
  await step('unique violation', async () => {
    const { email } = await prisma.user.findUniqueOrThrow({ where: { id: ids[7] } })
    return prisma.user.create({ data: { email } })
  })
  await step('foreign key violation', () => prisma.post.create({ data: { title: 'orphan', authorId: 987654 } }))
  await step('restrict violation', async () => {
    const post = await prisma.post.findFirstOrThrow({ orderBy: { id: 'asc' } })
    return prisma.user.delete({ where: { id: post.authorId } })
  })
  await step('not null violation', () => prisma.$executeRawUnsafe('INSERT INTO "Tag" ("name") VALUES (NULL)'))
  await step('not found', () => prisma.user.update({ where: { id: 123456 }, data: { name: 'x' } }))
  await step('findUniqueOrThrow missing', () => prisma.tag.findUniqueOrThrow({ where: { name: 'missing' } }))
  await step('raw syntax error', () => prisma.$queryRawUnsafe('SELEC 1'))
  await step('raw no such table', () => prisma.$queryRawUnsafe('SELECT * FROM "Nope"'))
  await step('raw no such column', () => prisma.$queryRawUnsafe('SELECT "nope" FROM "User"'))
  await step('busy', async () => {
    const release = await lock()
    try {
      return await prisma.tag.create({ data: { name: 'while locked' } })
    } finally {
      await release()
    }
  })

  // Deletes, cascades, and the final state of every table.
  await step('delete cascade', () => prisma.tag.deleteMany({ where: { name: { in: ['red', 'blue'] } } }))
  await step('delete posts', () => prisma.post.deleteMany({ where: { title: { contains: 'é' } } }))
  // A Json value that is a number is stored as its text, which the JSONB column's NUMERIC
  // affinity makes a number: Prisma then fails to read the column raw (both adapters alike).
  await step('table User without Json', () =>
    prisma.$queryRawUnsafe(
      'SELECT "id", "email", "name", "role", "age", "big", "score", "balance", "active", "born", typeof("profile") AS "profileType", "avatar", "managerId" FROM "User" ORDER BY 1',
    ),
  )
  for (const table of ['User', 'Post', 'Tag', '_PostToTag']) {
    await step(`table ${table}`, () => prisma.$queryRawUnsafe(`SELECT * FROM "${table}" ORDER BY 1, 2`))
  }
  return out
}

/** `value` as JSON that keeps its type: bigints, Dates, bytes, Decimals, -0 and non-finite
 * numbers tagged; objects with their keys in order. */
export function plain(value) {
  if (value === undefined) return { $undefined: true }
  if (typeof value === 'bigint') return { $bigint: value.toString() }
  if (typeof value === 'number') {
    return Object.is(value, -0) || !Number.isFinite(value)
      ? { $number: String(Object.is(value, -0) ? '-0' : value) }
      : value
  }
  if (value === null || typeof value !== 'object') return value
  if (value instanceof Date) return { $date: Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString() }
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString('hex') }
  if (value.constructor?.name === 'Decimal' && typeof value.toFixed === 'function')
    return { $decimal: value.toString() }
  if (value instanceof Error) return plainError(value)
  if (Array.isArray(value)) return value.map(plain)
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
}

/** An error as its class, Prisma code, meta (the driver adapter error by its mapped fields, not
 * its stack) and message. */
function plainError(error) {
  const meta = error.meta && { ...error.meta }
  if (meta?.driverAdapterError) {
    meta.driverAdapterError = {
      name: meta.driverAdapterError.name,
      message: meta.driverAdapterError.message,
      cause: meta.driverAdapterError.cause,
    }
  }
  return { $error: error.constructor?.name, code: error.code, meta: plain(meta), message: error.message }
}
