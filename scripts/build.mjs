// Builds the native engine (cargo) and the TypeScript (tsc), and lays out the package:
//   native/resqlite.node   the addon
//   dist/cjs/              CommonJS build + .d.ts
//   dist/esm/              the ESM entry, re-exporting the CommonJS build
// `--debug` builds the engine without optimizations (fast to compile, for development).
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const debug = process.argv.includes('--debug')
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' })

run('cargo', ['build', '-p', 'resqlite-engine', ...(debug ? [] : ['--release'])])
const lib =
  { darwin: 'libresqlite_engine.dylib', win32: 'resqlite_engine.dll' }[process.platform] ?? 'libresqlite_engine.so'
mkdirSync(join(root, 'native'), { recursive: true })
copyFileSync(join(root, 'target', debug ? 'debug' : 'release', lib), join(root, 'native', 'resqlite.node'))

rmSync(join(root, 'dist'), { recursive: true, force: true })
run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'])
mkdirSync(join(root, 'dist', 'esm'), { recursive: true })
for (const f of ['index.mjs', 'index.d.mts']) copyFileSync(join(root, 'src', 'esm', f), join(root, 'dist', 'esm', f))
