// linux-x64-musl against a real musl (Debian's musl 1.2.3): its dynamic loader maps the
// addon, resolves its libc to musl and every C library symbol it needs; what it leaves
// unresolved must be only what the host runtime provides (N-API and libuv). No musl
// JavaScript runtime runs here: npm has no musl Node, and Bun's musl build
// (@oven/bun-linux-x64-musl) needs Alpine's libstdc++ and libgcc_s, which Debian does not
// package (docs/install.md).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { test } from 'node:test'
import { built } from './helpers.mjs'

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
