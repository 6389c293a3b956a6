// A Prisma client generated offline from a schema (test/prisma/schema.prisma for the tests,
// bench/prisma/schema.prisma for the benchmark's Prisma lanes): `prisma generate` needs no
// engine (PRISMA_SCHEMA_ENGINE_BINARY stands in for the schema engine it would otherwise
// download and never runs), and its TypeScript output is transpiled to ES modules beside it.
// Generated once per schema into node_modules/.cache (never committed), where the client
// resolves @prisma/client from the repository's node_modules. The schema's generator writes to
// "./client", as an ES module importing ".js" files.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The path of the entry (client.js) of the client generated from `schemaFile`, generating it
 * first if needed. */
export function prismaClient(schemaFile) {
  const schema = readFileSync(schemaFile)
  const hash = createHash('sha256').update(schema).digest('hex').slice(0, 12)
  const dir = join(ROOT, 'node_modules', '.cache', 'resqlite-prisma-test', hash)
  const entry = join(dir, 'client', 'client.js')
  if (existsSync(entry)) return entry
  const work = `${dir}.${process.pid}`
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  copyFileSync(schemaFile, join(work, 'schema.prisma'))
  const env = {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  }
  const cli = join(ROOT, 'node_modules', 'prisma', 'build', 'index.js')
  execFileSync(process.execPath, [cli, 'generate', '--schema', join(work, 'schema.prisma')], {
    cwd: work,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  transpile(join(work, 'client'))
  rmSync(dir, { recursive: true, force: true })
  renameSync(work, dir)
  return entry
}

function transpile(dir) {
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n')
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name)
    if (entry.isDirectory()) transpile(file)
    else if (entry.name.endsWith('.ts')) {
      const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
        fileName: file,
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      })
      writeFileSync(file.replace(/\.ts$/, '.js'), outputText)
    }
  }
}
