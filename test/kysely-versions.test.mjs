// resqlite/kysely across the Kysely releases the peer range names (package.json
// `peerDependencies`): the dialect's own tests (kysely*.test.mjs) run here against the
// installed `kysely` (0.28), and again in a child whose `kysely` imports all resolve to the
// `kysely-0.29` devDependency (test/kysely-version/hook.mjs). Kysely 0.29 needs Node 22 or
// later, so that part runs on the Node 22 and 24 passes of CI.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { promisify } from 'node:util'

const run = promisify(execFile)
const HOOK = new URL('./kysely-version/hook.mjs', import.meta.url).pathname
const FILES = ['kysely.test.mjs', 'kysely-esm.test.mjs', 'kysely-migrations-log.test.mjs'].map(
  (name) => new URL(name, import.meta.url).pathname,
)
const major = Number(process.versions.node.split('.')[0])
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

test('the peer range admits Kysely 0.28 and 0.29', () => {
  assert.equal(pkg.peerDependencies.kysely, '^0.28.0 || ^0.29.0')
  assert.equal(pkg.devDependencies['kysely-0.29'], 'npm:kysely@0.29.9')
})

test("the Kysely dialect's tests pass with Kysely 0.29", {
  skip: major < 22 && 'Kysely 0.29 needs Node 22 or later (run on the Node 22 and 24 passes)',
}, async () => {
  // Without NODE_TEST_CONTEXT, which makes a test runner started by one report to it, not print.
  const { NODE_TEST_CONTEXT, ...inherited } = process.env
  const env = { ...inherited, KYSELY_PACKAGE: 'kysely-0.29' }
  // The hook is in effect: `kysely/migration` exists from 0.29 only.
  const { stdout: version } = await run(
    process.execPath,
    [
      '--import',
      HOOK,
      '--input-type=module',
      '-e',
      "await import('kysely/migration'); console.log(import.meta.resolve('kysely'))",
    ],
    { env },
  )
  assert.match(version, /node_modules\/kysely-0\.29\//)
  const { stdout } = await run(
    process.execPath,
    ['--import', HOOK, '--test', '--test-reporter=tap', '--test-timeout=60000', ...FILES],
    { env, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error) => assert.fail(`the Kysely tests failed under 0.29:\n${error.stdout}\n${error.stderr}`))
  const count = (name) => Number(stdout.match(new RegExp(`^# ${name} (\\d+)$`, 'm'))?.[1])
  assert.ok(count('tests') >= 13, stdout)
  assert.equal(count('pass'), count('tests'), stdout)
  assert.equal(count('fail'), 0)
})
