// @tursodatabase/database's `compat` API (`@tursodatabase/database/compat`): Turso's
// synchronous, better-sqlite3-style Database, on the JS thread. Faster per call than its promise
// API (drivers/turso.mjs) on a point read: the lanes run both. Its statements take node:sqlite's
// call forms (parameters as arguments; prepare/get/all/run/iterate) and its db.transaction()
// does not nest (BEGIN/COMMIT through exec), so this is the node:sqlite driver over it: control
// statements prepared once, inner levels as SAVEPOINTs.
import { Database } from '@tursodatabase/database/compat'
import { openWith } from './node-sqlite.mjs'
import { version } from './turso.mjs'

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export const open = (path, options) => openWith(Database, version, path, options)
