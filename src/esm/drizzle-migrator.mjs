// ESM entry of resqlite/drizzle/migrator: the migrator as an ES module (dist/esm/lib), on
// drizzle-orm's ESM build, like resqlite/drizzle's ESM entry.
export { migrate } from './lib/drizzle-migrator.js'
