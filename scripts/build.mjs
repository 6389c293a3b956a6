// Builds the native engine (napi-rs CLI, which runs cargo) and the TypeScript (tsc), and lays
// out the package:
//   native/resqlite.node   the addon: the local development build, which the loader
//                          (src/load-binding.ts) takes before any platform package
//   dist/cjs/              CommonJS build + .d.ts
//   dist/esm/              the ESM entries: the package itself re-exports the CommonJS build
//                          (one core, one set of classes); resqlite/kysely and resqlite/drizzle
//                          are ES modules of their own (dist/esm/lib/), so that they import
//                          kysely and drizzle-orm through ESM, the copy an ES-module app imports,
//                          and reach the core through its CommonJS build (dist/esm/lib/errors.js)
// `--debug` builds the engine without optimizations (fast to compile, for development);
// `--ts-only` skips the engine (TypeScript changes only, with native/resqlite.node in place).
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const debug = process.argv.includes('--debug')
const tsOnly = process.argv.includes('--ts-only')
const run = (script, args) =>
  execFileSync(process.execPath, [join(root, 'node_modules', script), ...args], { cwd: root, stdio: 'inherit' })

if (!tsOnly) {
  run('@napi-rs/cli/dist/cli.js', [
    'build',
    '-p',
    'resqlite-engine',
    '--output-dir',
    'native',
    ...(debug ? [] : ['--release']),
  ])
}

rmSync(join(root, 'dist'), { recursive: true, force: true })
run('typescript/bin/tsc', ['-p', 'tsconfig.json'])
// The ESM entries and dist/esm/lib's hand-written files (its package.json, which makes its .js
// files ES modules, and errors.js, the core's classes from the CommonJS build).
cpSync(join(root, 'src', 'esm'), join(root, 'dist', 'esm'), { recursive: true })

// The adapters as ES modules, from the same sources tsc type-checked and built as CommonJS
// above. Their value imports may reach only each other and errors.js: a relative import of any
// other core module would load a second copy of the core.
const lib = join(root, 'dist', 'esm', 'lib')
// In dependency order: a module's imports are checked against the ones written before it.
const adapters = ['builder-support', 'kysely', 'drizzle', 'drizzle-migrator']
for (const name of adapters) {
  const file = join(root, 'src', `${name}.ts`)
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, removeComments: false },
  })
  for (const [, specifier] of outputText.matchAll(/(?:from|import)\s*'(\.[^']*)'/g)) {
    if (!existsSync(join(lib, specifier))) {
      throw new Error(`src/${name}.ts: its ESM build imports ${specifier}, which dist/esm/lib does not hold`)
    }
  }
  writeFileSync(join(lib, `${name}.js`), outputText)
  // Its declarations beside it: tsc's, with the core's types still taken from the CommonJS
  // build (one set of classes) but 'kysely' and 'drizzle-orm' resolved as this ES module
  // resolves them, so an ES-module app's Kysely and Drizzle types are the ones it takes.
  const declarations = readFileSync(join(root, 'dist', 'cjs', `${name}.d.ts`), 'utf8').replace(
    /(from\s*')\.\/([^']*)\.js'/g,
    (line, from, module) => (adapters.includes(module) ? line : `${from}../../cjs/${module}.js'`),
  )
  writeFileSync(join(lib, `${name}.d.ts`), declarations)
}
