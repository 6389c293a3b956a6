// Each Linux platform package packs to at most 1.5 MB, holds exactly its binary, package.json
// and README, and its binary is for its CPU and C library (readelf: machine, interpreter-free
// shared object, the libc it links).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { built } from './helpers.mjs'

const MAX_BYTES = 1_500_000
const MACHINE = { x64: 'Advanced Micro Devices X86-64', arm64: 'AArch64' }
const LIBC = {
  gnu: /^libc\.so\.6$/,
  musl: /^libc\.so$|^libc\.musl-(x86_64|aarch64)\.so\.1$/,
}

for (const platform of ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl']) {
  test(`${platform}: at most 1.5 MB packed, its own CPU and libc`, { timeout: 60_000 }, (t) => {
    const { dir, binary } = built(platform)
    const [, arch, libc] = platform.split('-')
    const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-pack-'))
    t.after(() => fs.rmSync(dest, { recursive: true, force: true }))
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', dest], { cwd: dir, encoding: 'utf8' }),
    )
    t.diagnostic(`${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`)
    assert.ok(packed.size <= MAX_BYTES, `${packed.filename} is ${packed.size} bytes`)
    assert.deepEqual(
      packed.files.map((f) => f.path).sort(),
      ['README.md', path.basename(binary), 'package.json'].sort(),
    )

    const header = execFileSync('readelf', ['-h', binary], { encoding: 'utf8' })
    assert.match(header, /Type:\s+DYN/)
    assert.ok(header.includes(MACHINE[arch]), `${platform} is not ${MACHINE[arch]}:\n${header}`)
    const needed = [
      ...execFileSync('readelf', ['-d', binary], { encoding: 'utf8' }).matchAll(
        /\(NEEDED\)\s+Shared library: \[(.+)\]/g,
      ),
    ].map((m) => m[1])
    t.diagnostic(`links ${needed.join(', ')}`)
    assert.ok(
      needed.some((lib) => LIBC[libc].test(lib)),
      `${platform} must link its libc; it links ${needed.join(', ')}`,
    )
  })
}

test('win32-x64-gnu: at most 1.5 MB packed, an x86-64 DLL importing N-API from node.exe', { timeout: 60_000 }, (t) => {
  const { dir, binary } = built('win32-x64-gnu')
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-pack-'))
  t.after(() => fs.rmSync(dest, { recursive: true, force: true }))
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', dest], { cwd: dir, encoding: 'utf8' }),
  )
  t.diagnostic(`${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`)
  assert.ok(packed.size <= MAX_BYTES, `${packed.filename} is ${packed.size} bytes`)
  assert.deepEqual(packed.files.map((f) => f.path).sort(), ['README.md', path.basename(binary), 'package.json'].sort())
  const headers = execFileSync('objdump', ['-p', binary], { encoding: 'utf8', maxBuffer: 64 << 20 })
  assert.match(headers, /file format pei-x86-64/)
  const dlls = [...headers.matchAll(/DLL Name: (\S+)/g)].map((m) => m[1])
  t.diagnostic(`imports ${dlls.join(', ')}`)
  assert.ok(dlls.includes('node.exe'), 'N-API comes from node.exe')
})
