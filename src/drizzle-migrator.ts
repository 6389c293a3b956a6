// `resqlite/drizzle/migrator` (docs/integrations.md "Drizzle"): `migrate(db, { migrationsFolder })`
// as Drizzle's own drivers' migrators, for a database made by resqlite/drizzle's `drizzle()`.
// The migrations folder is read by Drizzle (`readMigrationFiles`, drizzle-kit's layout), and the
// migration steps are Drizzle's, run in one transaction (the session's `migrate`, drizzle.ts).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { is } from 'drizzle-orm'
import { type MigrationConfig, type MigrationMeta, readMigrationFiles } from 'drizzle-orm/migrator'
import { ResqliteDrizzleDatabase } from './drizzle.js'
import { typeError } from './errors.js'

type Migrating = { session: { migrate(migrations: MigrationMeta[], config: MigrationConfig): Promise<void> } }

/** Applies the migrations of `config.migrationsFolder` that `db` has not had yet, in order, in
 * one transaction: all of them, or (when one fails) none, which rejects with its error. */
export async function migrate<TSchema extends Record<string, unknown>>(
  db: ResqliteDrizzleDatabase<TSchema>,
  config: MigrationConfig,
): Promise<void> {
  if (!is(db, ResqliteDrizzleDatabase))
    throw typeError("migrate() needs a database made by resqlite/drizzle's drizzle()")
  if (typeof config?.migrationsFolder !== 'string') throw typeError('migrate() needs { migrationsFolder: string }')
  if (!existsSync(join(config.migrationsFolder, 'meta', '_journal.json'))) {
    throw typeError(
      "migrate(): migrationsFolder has no meta/_journal.json (it must be drizzle-kit's migrations folder)",
      'ERR_INVALID_ARG_VALUE',
    )
  }
  await (db as unknown as Migrating).session.migrate(readMigrationFiles(config), config)
}
