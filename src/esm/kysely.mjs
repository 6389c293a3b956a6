// ESM entry of resqlite/kysely: the dialect as an ES module (dist/esm/lib/kysely.js), which
// imports kysely's ESM build (the copy an ES-module app imports) and the one resqlite core.
export { ResqliteDialect } from './lib/kysely.js'
