// Deno and Bun (their npm packages, pinned devDependencies) run the packed smoke
// (test/packed-smoke.cjs): resqlite installed from its tarballs with this machine's build,
// through ESM and CommonJS. Each run has a deadline, so a runtime that hangs fails here: Deno
// hung on the first write while the engine relied on a libuv idle handle to take completions
// (crates/engine/src/handoff/poller.rs).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { platformTriple } from '../dist/cjs/load-binding.js'
import { installPacked, platformPackageDir, root, runChecked, runSmoke } from './platform-helpers.mjs'

const bin = (name) => path.join(root, 'node_modules', '.bin', name)
const RUN_TIMEOUT = 60_000

describe('other runtimes run the packed smoke', { timeout: 600_000 }, () => {
  let app
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-runtimes-'))
  after(() => fs.rmSync(dir, { recursive: true, force: true }))
  before(() => {
    const triple = platformTriple()
    const platformDir = platformPackageDir(dir, triple, path.join(root, 'native', 'resqlite.node'))
    ;({ app } = installPacked(dir, platformDir))
  })
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }

  for (const [runtime, args] of [
    ['deno', ['run', '--allow-all']],
    ['bun', []],
  ]) {
    for (const entry of ['esm.mjs', 'cjs.cjs']) {
      test(`${runtime} ${entry}`, { timeout: RUN_TIMEOUT + 10_000 }, () => {
        const version = runChecked(bin(runtime), ['--version'], { env, timeout: 30_000 }).trim().split('\n')[0]
        assert.ok(fs.existsSync(path.join(app, 'node_modules', 'resqlite')))
        runSmoke(bin(runtime), args, entry, { app, env, timeout: RUN_TIMEOUT, label: version })
      })
    }
  }
})
