// ESM entry of resqlite/prisma: the CommonJS build's class (one core, one set of classes). The
// adapter imports no Prisma package at run time (src/prisma.ts), so it needs no ES module of
// its own, unlike resqlite/kysely and resqlite/drizzle.
import cjs from '../cjs/prisma.js'

export const { PrismaResqlite } = cjs
