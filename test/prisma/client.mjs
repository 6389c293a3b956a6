// The Prisma client of schema.prisma (generated offline: scripts/prisma-client.mjs) and the SQL
// of its tables.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { prismaClient as generated } from '../../scripts/prisma-client.mjs'

export const SCHEMA_SQL = readFileSync(new URL('./schema.sql', import.meta.url), 'utf8')
export const prismaClient = () => generated(fileURLToPath(new URL('./schema.prisma', import.meta.url)))
