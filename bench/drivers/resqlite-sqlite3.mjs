// resqlite/sqlite3: the sqlite3 driver's program (drivers/sqlite3.mjs), the module swapped for
// resqlite's sqlite3 API (this repository's build, or RESQLITE_ROOT's), as a sqlite3 user
// switches with one line.
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openWith } from './sqlite3.mjs'

const root = process.env.RESQLITE_ROOT
  ? resolve(process.env.RESQLITE_ROOT)
  : fileURLToPath(new URL('../..', import.meta.url))
const require = createRequire(import.meta.url)
const sqlite3 = require(join(root, 'dist/cjs/sqlite3.js'))
const { version } = require(join(root, 'package.json'))

export function open(path, options) {
  return openWith(sqlite3, `resqlite ${version}`, path, options)
}
