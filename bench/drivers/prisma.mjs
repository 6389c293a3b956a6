// Prisma 7 over a library (lanes/prisma.mjs): a PrismaClient of bench/prisma/schema.prisma
// with resqlite's adapter (resqlite/prisma, this repository's build or RESQLITE_ROOT's) or
// Prisma's own better-sqlite3 adapter, each opening the lane's database file itself. Loaded
// only when a Prisma lane runs.
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = process.env.RESQLITE_ROOT
  ? resolve(process.env.RESQLITE_ROOT)
  : fileURLToPath(new URL('../..', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const require = createRequire(import.meta.url)

/** A connected PrismaClient over `lib`'s adapter on the database at `path`. */
export async function openPrisma(lib, path) {
  const { prismaClient } = await import(pathToFileURL(join(ROOT, 'scripts/prisma-client.mjs')).href)
  const { PrismaClient } = await import(prismaClient(join(ROOT, 'bench/prisma/schema.prisma')))
  let adapter
  if (lib === 'resqlite') {
    const { PrismaResqlite } = await import(pathToFileURL(join(root, 'dist/esm/prisma.mjs')).href)
    adapter = new PrismaResqlite({ url: path })
  } else if (lib === 'better-sqlite3') {
    adapter = new (require('@prisma/adapter-better-sqlite3').PrismaBetterSqlite3)({ url: path })
  } else {
    throw new Error(`no Prisma adapter for ${lib}`)
  }
  const prisma = new PrismaClient({ adapter })
  // As every connection of the suite: WAL (the file is in WAL mode already) and
  // synchronous=NORMAL (resqlite's default; better-sqlite3's adapter has one connection).
  if (lib === 'better-sqlite3') await prisma.$executeRawUnsafe('PRAGMA synchronous = NORMAL')
  await prisma.$connect()
  return prisma
}
