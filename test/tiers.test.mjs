// The suite's tiers (test/tiers.mjs) and npm test's pretest (scripts/test-prerequisites.mjs):
// every test file is in the core tier, the slow tier, or listed with what it needs, a core file uses none of
// the prerequisites, and where the pretest cannot install one it names each file it could not
// run, with the command that installs what it needs, and fails (checked in its dry run, which
// installs and runs nothing, with a PATH that hides sqlcipher and apt-get).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { tempDir } from './helpers.mjs'
import { CORE, NEEDS, PREREQUISITES, SLOW, testFiles } from './tiers.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const read = (name) => fs.readFileSync(path.join(ROOT, 'test', name), 'utf8')

test('every test file is in the core tier, the slow one, or listed with the prerequisites it needs: in one of them', () => {
  const listed = [...CORE, ...SLOW, ...Object.keys(NEEDS)]
  assert.deepEqual(
    testFiles().filter((f) => !listed.includes(f)),
    [],
    'test files in none of CORE, SLOW and NEEDS (test/tiers.mjs)',
  )
  assert.deepEqual(
    listed.filter((f) => !testFiles().includes(f)),
    [],
    'files test/tiers.mjs lists that are not in test/',
  )
  assert.deepEqual(
    listed.filter((f, i) => listed.indexOf(f) !== i),
    [],
    'in more than one of CORE, SLOW and NEEDS',
  )
  for (const [file, needs] of Object.entries(NEEDS)) {
    assert.ok(needs.length > 0, file)
    for (const p of needs) assert.ok(p in PREREQUISITES, `${file} needs '${p}', which PREREQUISITES does not describe`)
  }
})

// How a file shows that it uses a prerequisite (the helpers and paths each one comes through).
const USES = {
  sqlcipher: /execFile\w*\(\s*'sqlcipher'/,
  chromium: /from '\.\/chromium\.mjs'/,
  litestream: /from '\.\/litestream\.mjs'/,
  litefs: /from '\.\.\/examples\/replicas\/litefs\.mjs'/,
  'bench-peers': /bench\/node_modules/,
}

test('a file that uses a prerequisite is listed with it', () => {
  for (const file of testFiles()) {
    for (const [p, pattern] of Object.entries(USES)) {
      if (pattern.test(read(file))) assert.ok(NEEDS[file]?.includes(p), `${file} uses ${p}: list it in NEEDS`)
    }
  }
})

test("where npm test's pretest cannot install a prerequisite, it names each file it cannot run and the command, and fails", (t) => {
  // A PATH with node alone: no sqlcipher, fusermount3, litestream or litefs, and no apt-get.
  const bin = tempDir(t)
  fs.symlinkSync(process.execPath, path.join(bin, 'node'))
  const env = { ...process.env, PATH: bin, RESQLITE_PRETEST_DRY_RUN: '1' }
  for (const v of ['LITESTREAM', 'LITEFS', 'LITESTREAM_VFS']) delete env[v]
  const r = spawnSync(process.execPath, ['scripts/test-prerequisites.mjs'], { cwd: ROOT, env, encoding: 'utf8' })
  assert.equal(r.status, 1, r.stderr)
  assert.match(r.stderr, /^ {2}test\/encryption\.test\.mjs needs sqlcipher$/m)
  assert.match(r.stderr, /^ {4}sudo sh -c 'apt-get update && apt-get install -y sqlcipher'$/m)
  assert.match(r.stderr, /^ {2}test\/replication\.test\.mjs needs litestream$/m)
  assert.match(r.stderr, /go install github\.com\/benbjohnson\/litestream\/cmd\/litestream@v/)

  // It runs every other file (the core and slow tiers, and any whose prerequisites are here), one at a time.
  const run = r.stdout.match(/^dry run: would run (.+)$/m)?.[1].split(' ')
  assert.ok(run, r.stdout)
  assert.deepEqual(run.slice(1, 3), ['--test', '--test-concurrency=1'])
  const ran = run.slice(3).map((f) => path.basename(f))
  const named = [...r.stderr.matchAll(/^ {2}test\/(\S+) needs /gm)].map((m) => m[1])
  assert.deepEqual(
    [...CORE, ...SLOW].filter((f) => !ran.includes(f)),
    [],
    'core or slow files it did not run',
  )
  assert.ok(named.includes('encryption.test.mjs') && !ran.includes('encryption.test.mjs'))
  // Nothing in silence: every test file is run or named, none both.
  assert.deepEqual([...ran, ...named].sort(), testFiles())
})
