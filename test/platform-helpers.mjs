// Helpers for the tests that install resqlite from its packed tarballs and run the smoke
// (test/packed-smoke.cjs) in some runtime: test/runtimes.test.mjs (Deno, Bun) and the
// cross-build tests in test/platforms/ (run by .ci/platforms). Not a test file itself.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
export const LARGE = 50_000

/** What `smoke()` returns when everything worked. */
export const SMOKE_EXPECTED = {
  rows: [{ id: 1, title: 'packed' }],
  json: '[{"id":1,"title":"packed"}]',
  counts: [0, 1],
  inTransaction: LARGE,
  large: LARGE,
  largeJson: LARGE,
  iterated: LARGE,
  iterSum: (LARGE * (LARGE - 1)) / 2,
  functionSum: LARGE * (LARGE - 1),
  aggregate: (LARGE * (LARGE - 1)) / 2,
  written: '14',
  plainHeader: false,
  wrongKey: 'ERR_ENCRYPTION_KEY',
  reopened: [{ title: 'packed' }],
}

/** The entries that import resqlite the two ways and print what the smoke saw, as JSON. */
export const ENTRIES = {
  'esm.mjs': "import { Database } from 'resqlite'\nimport { smoke } from './smoke.cjs'\n",
  'cjs.cjs': "const { Database } = require('resqlite')\nconst { smoke } = require('./smoke.cjs')\n",
}

/** Runs a command; fails the test if it does not finish within `timeout` ms (a hang), exits
 * non-zero or is killed. Returns its stdout. */
export function runChecked(cmd, args, { cwd, env, timeout, stdoutFile, label = `${cmd} ${args.join(' ')}` }) {
  // stdoutFile: some runtimes (node.exe under wine) cannot write to a pipe.
  const out = stdoutFile ? fs.openSync(stdoutFile, 'w') : 'pipe'
  // Windows: npm is npm.cmd, which Node runs through a shell only.
  const shell = process.platform === 'win32' && cmd === 'npm'
  const r = spawnSync(cmd, args, {
    shell,
    cwd,
    env,
    timeout,
    encoding: 'utf8',
    stdio: ['ignore', out, 'pipe'],
    killSignal: 'SIGKILL',
  })
  if (stdoutFile) fs.closeSync(out)
  const stdout = stdoutFile ? fs.readFileSync(stdoutFile, 'utf8') : r.stdout
  assert.ok(
    r.error?.code !== 'ETIMEDOUT',
    `${label} did not finish within ${timeout} ms (hung):\n${stdout}\n${r.stderr}`,
  )
  assert.equal(r.error, undefined, `${label} could not run: ${r.error}`)
  assert.equal(r.signal, null, `${label} was killed by ${r.signal}:\n${stdout}\n${r.stderr}`)
  assert.equal(r.status, 0, `${label} exited with ${r.status}:\n${stdout}\n${r.stderr}`)
  return stdout
}

/** Lays out a platform package as the build scripts do (scripts/platforms/build.sh):
 * npm/<platform>/'s files plus the binary. */
export function platformPackageDir(dir, platform, binary) {
  const platformDir = path.join(dir, `platform-${platform}`)
  fs.cpSync(path.join(root, 'npm', platform), platformDir, { recursive: true })
  const { main } = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8'))
  fs.copyFileSync(binary, path.join(platformDir, main))
  return platformDir
}

/** Packs the main package and `platformDir` (a laid-out platform package), then installs
 * both (installTarballs). Returns the app directory and the packed tarballs. */
export function installPacked(dir, platformDir, { npmFlags = [], env = process.env } = {}) {
  const packs = path.join(dir, 'packs')
  fs.mkdirSync(packs, { recursive: true })
  const packed = [root, platformDir].map((pkg) => {
    const [p] = JSON.parse(npm(['pack', '--json', '--pack-destination', packs], pkg, env))
    return { name: p.name, file: path.join(packs, p.filename), size: p.size, files: p.files.map((f) => f.path) }
  })
  const { app } = installTarballs(
    dir,
    packed.map((p) => p.file),
    { npmFlags, env },
  )
  return { app, packed }
}

const npm = (args, cwd, env) => runChecked('npm', args, { cwd, env, timeout: 300_000 })

/** Installs tarballs (the main package and a platform package) offline into `<dir>/app` with
 * this machine's npm (`npmFlags`: --force for another CPU's package), and writes the smoke
 * and its two entries there. Returns the app directory. */
export function installTarballs(dir, tarballs, { npmFlags = [], env = process.env } = {}) {
  const app = path.join(dir, 'app')
  fs.mkdirSync(app, { recursive: true })
  fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n')
  npm(['install', '--offline', '--no-audit', '--no-fund', '--no-update-notifier', ...npmFlags, ...tarballs], app, env)
  fs.copyFileSync(path.join(root, 'test', 'packed-smoke.cjs'), path.join(app, 'smoke.cjs'))
  for (const [file, imports] of Object.entries(ENTRIES)) {
    const dbDir = path.join(dir, `db-${file}`) // runSmoke empties it before each run
    const call = `smoke(Database, ${JSON.stringify(dbDir)}).then((r) => console.log(JSON.stringify(r)))\n`
    fs.writeFileSync(path.join(app, file), imports + call)
  }
  return { app }
}

/** Runs one smoke entry with `cmd args... <entry>` on a fresh database directory and checks
 * what it printed. */
export function runSmoke(cmd, args, entry, { app, env, timeout = 120_000, stdoutFile, label }) {
  const dbDir = path.join(path.dirname(app), `db-${entry}`)
  fs.rmSync(dbDir, { recursive: true, force: true })
  fs.mkdirSync(dbDir)
  const stdout = runChecked(cmd, [...args, entry], { cwd: app, env, timeout, stdoutFile, label })
  const last = stdout.trim().split('\n').at(-1)
  assert.deepEqual(JSON.parse(last), SMOKE_EXPECTED, `${label ?? cmd}: ${entry}`)
}
