// Runs the differential program (program.mjs) through one adapter and prints its outcomes as
// JSON: `node run.mjs better|resqlite <database file> <seed>`. test/prisma.test.mjs runs the
// better-sqlite3 side on the benchmark's Node 24 (which has better-sqlite3 built for it) and the
// resqlite side on the Node running the tests.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Database } from '../../dist/esm/index.mjs'
import { PrismaResqlite } from '../../dist/esm/prisma.mjs'
import { prismaClient, SCHEMA_SQL } from './client.mjs'
import { program } from './program.mjs'

/** How long a statement waits for another connection's lock before failing as busy. */
const BUSY_MS = 50

const [side, file, seed] = process.argv.slice(2)
// Both sides start from the same file, made by resqlite (so both run in WAL mode).
const setup = await Database.open(file)
await setup.execute(SCHEMA_SQL)
await setup.close()

const adapter =
  side === 'better'
    ? new (createRequire(new URL('../../bench/package.json', import.meta.url))(
        '@prisma/adapter-better-sqlite3',
      ).PrismaBetterSqlite3)({ url: `file:${file}`, timeout: BUSY_MS })
    : new PrismaResqlite({ url: `file:${file}`, busyTimeout: BUSY_MS })
const { PrismaClient, Prisma } = await import(prismaClient())
const prisma = new PrismaClient({ adapter })

/** Holds the write lock from another process (lock.mjs) until the function it resolves is
 * called. */
async function lock() {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./lock.mjs', import.meta.url)), file], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = once(child, 'exit')
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve)
    child.once('exit', () => reject(new Error('lock.mjs exited before it held the lock')))
  })
  return async () => {
    child.stdin.end()
    await exited
  }
}

const out = await program(prisma, { seed: Number(seed), Prisma, lock })
await prisma.$disconnect()
process.stdout.write(JSON.stringify(out))
