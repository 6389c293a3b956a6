// Builds the native engine (napi-rs CLI, which runs cargo) and the TypeScript (tsc), and lays
// out the package:
//   native/resqlite.node   the addon: the local development build, which the loader
//                          (src/load-binding.ts) takes before any platform package
//   dist/cjs/              CommonJS build + .d.ts
//   dist/esm/              the ESM entries (the package, resqlite/kysely, resqlite/drizzle),
//                          re-exporting the CommonJS build
// `--debug` builds the engine without optimizations (fast to compile, for development).
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const debug = process.argv.includes('--debug')
const run = (script, args) =>
  execFileSync(process.execPath, [join(root, 'node_modules', script), ...args], { cwd: root, stdio: 'inherit' })

run('@napi-rs/cli/dist/cli.js', [
  'build',
  '-p',
  'resqlite-engine',
  '--output-dir',
  'native',
  ...(debug ? [] : ['--release']),
])

rmSync(join(root, 'dist'), { recursive: true, force: true })
run('typescript/bin/tsc', ['-p', 'tsconfig.json'])
mkdirSync(join(root, 'dist', 'esm'), { recursive: true })
// One ESM file pair per entry: index (the package), kysely and drizzle (its subpath exports).
for (const f of readdirSync(join(root, 'src', 'esm')))
  copyFileSync(join(root, 'src', 'esm', f), join(root, 'dist', 'esm', f))
