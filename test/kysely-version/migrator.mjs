// Kysely's Migrator, from where the installed release exports it: the package root up to 0.28,
// `kysely/migration` from 0.29 (whose root no longer exports it).
import * as kysely from 'kysely'

export const { Migrator } = 'Migrator' in kysely ? kysely : await import('kysely/migration')
