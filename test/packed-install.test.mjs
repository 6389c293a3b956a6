// A user installs resqlite with no compiler: the main package and this platform's package are
// packed with `npm pack`, installed offline into a fresh directory whose PATH holds node and npm
// only, and used through ESM and CommonJS (test/packed-smoke.cjs). Without the platform package
// the loader's error says what is missing. Needs the build (`npm run build`): the platform
// package gets native/resqlite.node, as the release workflow gives it the build for its target.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { platformTriple } from '../dist/cjs/load-binding.js'
import { tempDir } from './helpers.mjs'
import { SMOKE_EXPECTED } from './platform-helpers.mjs'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const triple = platformTriple()
const platformPackage = `resqlite-${triple}`
const commandPath = (cmd) => execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim()

test('the packed packages install and run with no Rust or C toolchain on PATH', { timeout: 120_000 }, (t) => {
  const dir = tempDir(t)
  const packs = path.join(dir, 'packs')
  const app = path.join(dir, 'app')
  const bin = path.join(dir, 'bin')
  for (const d of [packs, app, bin, path.join(dir, 'home')]) fs.mkdirSync(d)

  // A PATH with node and npm alone, checked with `which`.
  fs.symlinkSync(process.execPath, path.join(bin, 'node'))
  fs.symlinkSync(fs.realpathSync(commandPath('npm')), path.join(bin, 'npm'))
  const env = { PATH: bin, HOME: path.join(dir, 'home'), npm_config_cache: path.join(dir, 'npm-cache') }
  const which = commandPath('which')
  for (const tool of ['cargo', 'rustc', 'cc', 'gcc']) {
    assert.notEqual(spawnSync(which, [tool], { env }).status, 0, `${tool} must not be on the install's PATH`)
  }
  const run = (cmd, args, cwd) => {
    const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8' })
    assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`)
    return r.stdout
  }

  // The platform package as the release workflow fills it: npm/<triple>/ plus its binary.
  const platformDir = path.join(dir, 'platform')
  fs.cpSync(path.join(root, 'npm', triple), platformDir, { recursive: true })
  const { main } = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8'))
  fs.copyFileSync(path.join(root, 'native', 'resqlite.node'), path.join(platformDir, main))
  const [mainPack, platformPack] = [root, platformDir].map((pkg) => {
    const [packed] = JSON.parse(run(path.join(bin, 'npm'), ['pack', '--json', '--pack-destination', packs], pkg))
    t.diagnostic(`${packed.filename}: ${(packed.size / 1024).toFixed(0)} KiB packed, ${packed.files.length} files`)
    return packed
  })
  const binaries = (packed) => packed.files.map((f) => f.path).filter((p) => p.endsWith('.node'))
  assert.deepEqual(binaries(mainPack), [], 'the main package carries no binary')
  assert.deepEqual(binaries(platformPack), [main], 'the platform package carries its binary')
  const tarballs = [mainPack, platformPack].map((packed) => path.join(packs, packed.filename))

  // One offline install of both tarballs: the main package's optionalDependency on the platform
  // package resolves to the tarball beside it; the other platforms' packages are skipped.
  fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n')
  const started = performance.now()
  run(
    path.join(bin, 'npm'),
    ['install', '--offline', '--no-audit', '--no-fund', '--no-update-notifier', ...tarballs],
    app,
  )
  t.diagnostic(`npm install of both tarballs: ${((performance.now() - started) / 1000).toFixed(2)} s`)
  const installed = fs.readdirSync(path.join(app, 'node_modules')).filter((n) => !n.startsWith('.'))
  assert.deepEqual(installed, ['resqlite', platformPackage].sort(), 'exactly the two packages are installed')
  assert.ok(!fs.existsSync(path.join(app, 'node_modules', 'resqlite', 'native')), 'no local build inside the package')

  // ESM and CommonJS, each in its own process.
  fs.copyFileSync(path.join(root, 'test', 'packed-smoke.cjs'), path.join(app, 'smoke.cjs'))
  const entries = {
    'esm.mjs': "import { Database } from 'resqlite'\nimport { smoke } from './smoke.cjs'\n",
    'cjs.cjs': "const { Database } = require('resqlite')\nconst { smoke } = require('./smoke.cjs')\n",
  }
  for (const [file, imports] of Object.entries(entries)) {
    const dbDir = path.join(dir, file)
    fs.mkdirSync(dbDir)
    const call = `smoke(Database, ${JSON.stringify(dbDir)}).then((r) => console.log(JSON.stringify(r)))\n`
    fs.writeFileSync(path.join(app, file), imports + call)
    const seen = JSON.parse(run(path.join(bin, 'node'), [file], app))
    assert.deepEqual(seen, SMOKE_EXPECTED, file)
  }

  // Without the platform package: an error naming the platform, the package and the way out.
  fs.rmSync(path.join(app, 'node_modules', platformPackage), { recursive: true })
  const r = spawnSync(path.join(bin, 'node'), ['cjs.cjs'], { cwd: app, env, encoding: 'utf8' })
  assert.notEqual(r.status, 0)
  for (const expected of [`(${triple})`, `the package ${platformPackage} is not installed`, 'npm run build']) {
    assert.ok(r.stderr.includes(expected), `the loader's error must say ${expected}; it was:\n${r.stderr}`)
  }
})
