// @photostructure/sqlite (a port of node:sqlite's DatabaseSync / StatementSync to an npm
// package with its own SQLite build; synchronous, on the JS thread): the node:sqlite driver
// over it, since its API is node:sqlite's (parameters as arguments, no array form).
//
// Its experimental DatabasePool (`@photostructure/sqlite/experimental`, libuv worker threads)
// is not a library here: it takes SQL text only (no prepared statements), has no interactive
// transactions (only `batch`), and its default authorizer rejects PRAGMA and transaction
// control, so most lanes (every transaction lane, the WAL setup) cannot run on it as they do
// on the others.
import { createRequire } from 'node:module'
import { DatabaseSync } from '@photostructure/sqlite'
import { openWith } from './node-sqlite.mjs'

const require = createRequire(import.meta.url)
const { version } = require('@photostructure/sqlite/package.json')

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export const open = (path, options) => openWith(DatabaseSync, version, path, options)
