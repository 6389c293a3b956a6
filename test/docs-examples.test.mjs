// Every ```ts and ```js example of README.md and docs/*.md type-checks under `tsc --strict`
// against the built declarations, as a user's project sees the package: each example is a
// module of a scratch project whose node_modules/resqlite links to this package, so `resqlite`,
// `resqlite/kysely`, … resolve through package.json "exports" to dist/esm/*.d.mts.
//
// The convention for the examples (CONTRIBUTING.md "Docs"):
// - An example is one ES module (top-level await works; a ```js one is checked as JavaScript
//   with `// @ts-check`, as an editor checks it).
// - The names an example uses without defining them are the reader's: PRELUDE below declares
//   them globally (`db` is an open `Database`, `Database` the class, `render`, `schema`, …), so
//   an example that defines or imports the name itself uses its own.
// - ```ts continues: the example goes on from the one before it in the same file: it is
//   checked after that one's code (in a block, so it may declare a name again).
// - `// @ts-expect-error` in an example marks an error the docs show on purpose.
// - ```ts no-check <reason>: not checked; the test lists each with its reason. Use sparingly.
// One tsc program checks them all; a failure names the doc file and line of each error.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = fileURLToPath(new URL('..', import.meta.url))

// What the docs leave to the reader, declared once, globally.
const PRELUDE = `
type Database = import('resqlite').Database
declare const Database: typeof import('resqlite').Database
type Row = import('resqlite').Row
declare const db: Database
declare function render(rows: Row[]): void
declare function report(done: number, total: number): void
declare function send(row: Row): Promise<void>
declare function writeCsv(rows: Row[]): Promise<void>
declare function loadKeyBytes(): Promise<Buffer>
declare const query: Buffer
declare const day: string
declare const signal: AbortSignal
/** Kysely's database interface: the tables the Kysely examples use. */
interface DB {
  person: { id: import('kysely').Generated<number>; name: string }
}
declare const schema: typeof import('./schema.js')
declare const PrismaClient: typeof import('./generated/prisma/client.js').PrismaClient
declare const Sequelize: typeof import('sequelize').Sequelize
declare const DataSource: typeof import('typeorm').DataSource
declare const entities: Function[]
declare const tracerProvider: import('@opentelemetry/api').TracerProvider
`

// The files of the reader's project that the examples import.
const FIXTURES = {
  // the Drizzle schema of docs/integrations.md's examples
  'schema.ts': `import { relations } from 'drizzle-orm'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
export const users = sqliteTable('users', { id: integer('id').primaryKey(), name: text('name').notNull() })
export const posts = sqliteTable('posts', {
  id: integer('id').primaryKey(),
  userId: integer('user_id').notNull(),
  title: text('title').notNull(),
})
export const usersRelations = relations(users, ({ many }) => ({ posts: many(posts) }))
export const postsRelations = relations(posts, ({ one }) => ({
  user: one(users, { fields: [posts.userId], references: [users.id] }),
}))
`,
  // what \`prisma generate\` writes, reduced to the constructor the examples call
  'generated/prisma/client.ts': `import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils'
export declare class PrismaClient {
  constructor(options: { adapter: SqlDriverAdapterFactory })
}
`,
  // docs/tracing.md imports examples/tracing/otel.mjs as './otel.mjs'
  'otel.mjs': `export * from ${JSON.stringify(join(root, 'examples/tracing/otel.mjs'))}\n`,
}

const FENCE = /^```(ts|typescript|js|javascript)(?:[ \t]+(.*))?$/

/** The checked examples of `docs` ({ file, text }[]): { file, line, js, code, continues, skip }. */
function extractExamples(docs) {
  const examples = []
  for (const { file, text } of docs) {
    const lines = text.split('\n')
    for (let i = 0; i < lines.length; i++) {
      const open = lines[i].match(FENCE)
      if (!open) continue
      let end = i + 1
      while (end < lines.length && lines[end].trim() !== '```') end++
      const info = (open[2] ?? '').trim()
      const skip = info.match(/^no-check\b\s*(.*)$/)
      examples.push({
        file,
        line: i + 2, // the first line of code
        js: open[1] === 'js' || open[1] === 'javascript',
        code: lines.slice(i + 1, end),
        continues: info === 'continues',
        skip: skip ? skip[1] || '(no reason given)' : undefined,
      })
      i = end
    }
  }
  return examples
}

// An import statement, complete (it may span several lines).
const IMPORT = /^import\s[\s\S]*?\sfrom\s+['"][^'"]+['"]|^import\s+['"][^'"]+['"]/

// A JavaScript example that loads the package with require() is CommonJS, as it is for the user.
const commonJs = (chain) =>
  chain.at(-1).js &&
  chain.every((e) => !e.code.some((l) => /^import\s/.test(l)) && e.code.some((l) => /\brequire\(/.test(l)))
const extension = (chain) => (commonJs(chain) ? '.cjs' : chain.at(-1).js ? '.mjs' : '.mts')

/** The module of the last example of `chain` (the examples it continues first, each in a block
 * inside the one before): imports hoisted to the top, as ES modules allow them anywhere at the
 * top level. Each line with the doc file and line it came from. */
function moduleOf(chain) {
  const imports = []
  const body = []
  for (const [depth, example] of chain.entries()) {
    if (depth > 0) body.push({ text: '{' })
    const { code } = example
    for (let j = 0; j < code.length; ) {
      const isImport = /^import\s/.test(code[j])
      let end = j + 1
      if (isImport) while (end < code.length && !IMPORT.test(code.slice(j, end).join('\n'))) end++
      for (; j < end; j++)
        (isImport ? imports : body).push({ text: code[j], from: { file: example.file, line: example.line + j } })
    }
  }
  for (let depth = 1; depth < chain.length; depth++) body.push({ text: '}' })
  const lines = [...imports, ...body]
  if (!commonJs(chain)) lines.push({ text: 'export {}' })
  if (chain.at(-1).js) lines.unshift({ text: '// @ts-check' })
  return lines
}

/** Type-checks the examples of `docs` in one program: { checked, skipped, errors } with errors as 'file:line: message'. */
function checkExamples(docs) {
  const examples = extractExamples(docs)
  const dir = mkdtempSync(join(tmpdir(), 'resqlite-docs-examples-'))
  try {
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n')
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(root, join(dir, 'node_modules/resqlite'), 'dir')
    for (const name of readdirSync(join(root, 'node_modules'))) {
      if (!name.startsWith('.')) symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
    }
    writeFileSync(join(dir, 'prelude.d.ts'), PRELUDE)
    for (const [name, text] of Object.entries(FIXTURES)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true })
      writeFileSync(join(dir, name), text)
    }
    const files = [join(dir, 'prelude.d.ts')]
    const origins = new Map()
    const skipped = []
    let checked = 0
    let chain = []
    for (const [n, example] of examples.entries()) {
      if (example.skip !== undefined) {
        skipped.push(`${example.file}:${example.line}: ${example.skip}`)
        chain = []
        continue
      }
      if (example.continues && chain.length === 0) {
        throw new Error(`${example.file}:${example.line}: \`continues\` with no checked example before it in the file`)
      }
      chain = example.continues && chain.at(-1).file === example.file ? [...chain, example] : [example]
      const lines = moduleOf(chain)
      const name = join(dir, `example-${n}${extension(chain)}`)
      writeFileSync(name, `${lines.map((l) => l.text).join('\n')}\n`)
      origins.set(name, lines)
      files.push(name)
      checked++
    }
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowJs: true,
      types: ['node'],
      skipLibCheck: true,
    })
    const errors = []
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
      const line = d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0).line : 0
      const from = d.file && origins.get(d.file.fileName)?.[line]?.from
      // an error outside the examples' lines (the prelude, a fixture) names the scratch file
      errors.push(from ? `${from.file}:${from.line}: ${message}` : `${d.file?.fileName ?? ''}:${line + 1}: ${message}`)
    }
    // a continued chain reports its earlier examples' errors once per module: keep one of each
    return { checked, skipped, errors: [...new Set(errors)] }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const DOCS = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

test('every ts/js example in README.md and docs/*.md type-checks under strict against the built declarations', (t) => {
  const { checked, skipped, errors } = checkExamples(
    DOCS.map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') })),
  )
  t.diagnostic(`${checked} examples checked, ${skipped.length} not checked (no-check)`)
  for (const s of skipped) t.diagnostic(`no-check: ${s}`)
  assert.ok(checked >= 40, `${checked} examples found`)
  assert.deepEqual(errors, [], 'type errors in the docs examples')
})

test('a wrong example fails the check, named by its file and line', () => {
  const text = [
    '# planted',
    '```ts',
    "const row = await db.selectOne('SELECT 1 AS n')",
    'console.log(row.n)',
    '```',
    '```js',
    "db.function('f', (s) => s.toLowerCase())",
    "db.functon('g', () => 1)",
    '```',
    '```ts no-check shows a deliberate mistake',
    'db.nothing()',
    '```',
  ].join('\n')
  const { checked, skipped, errors } = checkExamples([{ file: 'planted.md', text }])
  assert.equal(checked, 2)
  assert.deepEqual(skipped, ['planted.md:11: shows a deliberate mistake'])
  assert.equal(errors.length, 2, errors.join('\n'))
  assert.match(errors[0], /^planted\.md:4: 'row' is possibly 'undefined'/)
  assert.match(errors[1], /^planted\.md:8: Property 'functon' does not exist/)
})
