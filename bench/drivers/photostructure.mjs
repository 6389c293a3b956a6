// @photostructure/sqlite (a port of node:sqlite's DatabaseSync / StatementSync to an npm
// package with its own SQLite build; synchronous, on the JS thread): the node:sqlite driver
// over it, since its API is node:sqlite's (parameters as arguments, no array form).
// Its experimental DatabasePool (worker threads) is drivers/photostructure-pool.mjs.
import { createRequire } from 'node:module'
import { DatabaseSync } from '@photostructure/sqlite'
import { openWith } from './node-sqlite.mjs'

const require = createRequire(import.meta.url)
export const { version } = require('@photostructure/sqlite/package.json')

// { versions: false }: no version query (lanes/tenants.mjs times the open of many databases).
export const open = (path, options) => openWith(DatabaseSync, version, path, options)
