// Installs a platform package's tarball with the main package's, offline, into a fresh
// directory, and runs the smoke (test/packed-smoke.cjs: ESM and CommonJS) with this Node:
//   node scripts/platforms/smoke.mjs <resqlite-x.y.z.tgz> <resqlite-<platform>-x.y.z.tgz>
// The release workflow runs it on each platform's own runner; .ci/platforms runs it here on
// the linux-x64-gnu package. Exits non-zero if the install, a run or its result fails.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { installTarballs, runSmoke } from '../../test/platform-helpers.mjs'

const tarballs = process.argv.slice(2).map((t) => path.resolve(t))
if (tarballs.length !== 2 || !tarballs.every((t) => fs.existsSync(t))) {
  console.error('usage: node scripts/platforms/smoke.mjs <main tarball> <platform tarball>')
  process.exit(2)
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-smoke-'))
try {
  const { app } = installTarballs(dir, tarballs)
  const installed = fs.readdirSync(path.join(app, 'node_modules')).filter((n) => !n.startsWith('.'))
  console.log(`installed: ${installed.join(', ')}`)
  for (const entry of ['esm.mjs', 'cjs.cjs']) {
    runSmoke(process.execPath, [], entry, { app, label: `node ${process.version} ${entry}` })
    console.log(`smoke ${entry}: ok (${process.platform}-${process.arch}, Node ${process.version})`)
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
