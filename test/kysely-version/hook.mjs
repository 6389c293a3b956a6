// Loaded with `node --import`: every import of `kysely` (and its subpaths) in the process,
// from the tests and from resqlite/kysely's ESM build alike, resolves to the package named by
// $KYSELY_PACKAGE instead (a devDependency alias such as `kysely-0.29`), so the dialect's own
// tests run against that Kysely release (test/kysely-versions.test.mjs).
import { register } from 'node:module'

register('./resolve.mjs', import.meta.url, { data: process.env.KYSELY_PACKAGE })
