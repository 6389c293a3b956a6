// Prisma 7 (issue 44): what a Prisma app gets from resqlite's adapter (resqlite/prisma) against
// Prisma's own better-sqlite3 adapter, on the suite's database through bench/prisma/schema.prisma:
//   prisma.find-unique  findUnique by id on t, awaited one at a time
//   prisma.create       create on t, awaited one at a time
//   prisma.tx           interactive transactions ($transaction(async (tx) => …)): read a row,
//                       update it, create one, awaited one at a time
// Each lane opens its own PrismaClient on the lane's database file (drivers/prisma.mjs); the
// suite's driver only counts. Work check: each sample returns the rows it read or wrote.
import { NARROW_ROWS } from '../data.mjs'
import { measure } from '../measure.mjs'
import { hash, makeCase } from './common.mjs'

const FINDS = 200
const CREATES = 100
const TRANSACTIONS = 20

// Loaded when a lane runs: the test suite imports every lane module without Prisma's packages
// being generated or the bench's installed.
const openPrisma = async (cfg) => (await import('../drivers/prisma.mjs')).openPrisma(cfg.lib, cfg.db)

/** A Prisma lane: `run(prisma, sample)` returns the sample's rows; `count` checks them. */
const prismaLane = (id, title, n, run) => async (d, cfg) => {
  if (!cfg.lib || !cfg.db) throw new Error('the Prisma lanes need cfg.lib and cfg.db (child.mjs passes them)')
  const prisma = await openPrisma(cfg)
  try {
    let sample = 0
    const check = hash(JSON.stringify(await run(prisma, -1), (_, v) => (typeof v === 'bigint' ? `${v}n` : v)))
    // Prisma's calls are async whichever library is under them.
    const m = await measure({ ...d, sync: false }, () => run(prisma, sample++), cfg, {
      expect: { rows: n },
      count: (rows) => ({ rows: rows.filter((r) => r != null).length }),
    })
    return [makeCase('prisma', id, title, check, m, { perSample: [n, 'calls'] })]
  } finally {
    await prisma.$disconnect()
  }
}

// Ids spread over the table, the same for every library.
const idAt = (sample, i) => 1 + (((sample * FINDS + i) * 7919 + 13) % NARROW_ROWS)

async function findUnique(prisma, sample) {
  const rows = []
  for (let i = 0; i < FINDS; i++) rows.push(await prisma.row.findUnique({ where: { id: idAt(sample + 1, i) } }))
  return rows
}

async function create(prisma, sample) {
  const rows = []
  for (let i = 0; i < CREATES; i++) {
    const { name, value } = await prisma.row.create({ data: { name: `prisma ${sample} ${i}`, value: i / 7 } })
    rows.push({ name, value }) // (ids differ by sample: the check leaves them out)
  }
  return rows
}

async function interactive(prisma, sample) {
  const rows = []
  for (let i = 0; i < TRANSACTIONS; i++) {
    rows.push(
      await prisma.$transaction(async (tx) => {
        const id = idAt(sample + 1, i)
        const row = await tx.row.findUnique({ where: { id } })
        await tx.row.update({ where: { id }, data: { value: (row?.value ?? 0) + 1 } })
        const { name } = await tx.row.create({ data: { name: `tx ${sample} ${i}`, value: id } })
        return { id, name }
      }),
    )
  }
  return rows
}

export const PRISMA_LANES = {
  'prisma-find-unique': prismaLane(
    'prisma.find-unique',
    `${FINDS} findUnique by id, awaited one at a time`,
    FINDS,
    findUnique,
  ),
  'prisma-create': prismaLane('prisma.create', `${CREATES} create, awaited one at a time`, CREATES, create),
  'prisma-tx': prismaLane(
    'prisma.tx',
    `${TRANSACTIONS} interactive transactions (findUnique, update, create), awaited one at a time`,
    TRANSACTIONS,
    interactive,
  ),
}
export const PRISMA_LANE_LIBRARIES = Object.fromEntries(
  Object.keys(PRISMA_LANES).map((lane) => [lane, ['resqlite', 'better-sqlite3']]),
)
