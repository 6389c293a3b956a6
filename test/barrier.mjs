// Builds test/barrier/barrier.c (not a test file itself), a SQLite extension whose barrier(n, ms)
// shows that n statements ran at the same time without timing them. It compiles with `cc`
// against the sqlite3ext.h of the SQLite source the engine is built from (the sqlite3mc-src
// crate, found through `cargo metadata`), as test/power-loss.test.mjs compiles its shim.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = path.dirname(fileURLToPath(import.meta.url))

/** The sqlite3ext.h directory of the crate the engine compiles SQLite from. */
function sqliteInclude() {
  const meta = JSON.parse(
    execFileSync('cargo', ['metadata', '--format-version', '1', '--offline'], {
      cwd: path.join(HERE, '..'),
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    }),
  )
  const src = meta.packages.find((p) => p.name === 'sqlite3mc-src')
  if (!src) throw new Error('cargo metadata lists no sqlite3mc-src package')
  return path.join(path.dirname(src.manifest_path), 'sqlite3mc')
}

let built
/** The extension's path (barrier.so in a temporary directory, removed at exit), built once. */
export function barrierExtension() {
  if (built) return built
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-barrier-'))
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  const out = path.join(dir, 'barrier.so')
  const args = ['-shared', '-fPIC', '-O2', `-I${sqliteInclude()}`, '-o', out, path.join(HERE, 'barrier', 'barrier.c')]
  execFileSync('cc', [...args, '-lpthread'], { stdio: 'pipe' })
  built = out
  return built
}
