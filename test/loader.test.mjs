// The loader (src/load-binding.ts) picks the platform package from process.platform, arch and
// the C library the process reports, and names it in its error when it is missing. Each case
// runs in a child process whose platform, arch and report are faked, loading a copy of the
// loader where no local build (native/resqlite.node) sits beside it.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { tempDir } from './helpers.mjs'
import { root } from './platform-helpers.mjs'

const published = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).optionalDependencies

const GLIBC = '2.31'
const cases = [
  // platform, arch, glibc reported (linux only), triple, published?
  ['linux', 'x64', GLIBC, 'linux-x64-gnu', true],
  ['linux', 'arm64', GLIBC, 'linux-arm64-gnu', true],
  ['linux', 'x64', undefined, 'linux-x64-musl', true],
  ['linux', 'arm64', undefined, 'linux-arm64-musl', true],
  ['darwin', 'x64', undefined, 'darwin-x64', true],
  ['darwin', 'arm64', undefined, 'darwin-arm64', true],
  ['win32', 'x64', undefined, 'win32-x64-gnu', true],
  ['win32', 'arm64', undefined, 'win32-arm64-gnu', false],
  ['linux', 'arm', GLIBC, 'linux-arm-gnu', false],
  ['freebsd', 'x64', undefined, 'freebsd-x64', false],
]

function loadAs(t, platform, arch, glibc) {
  // dist/cjs/load-binding.js copied to <tmp>/dist/cjs/: its local build path, <tmp>/native/, is empty.
  const dir = tempDir(t)
  fs.mkdirSync(path.join(dir, 'dist', 'cjs'), { recursive: true })
  const loader = path.join(dir, 'dist', 'cjs', 'load-binding.js')
  fs.copyFileSync(path.join(root, 'dist', 'cjs', 'load-binding.js'), loader)
  const script = `
    Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} })
    Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} })
    const real = process.report.getReport.bind(process.report)
    process.report.getReport = () => {
      const report = real()
      delete report.header.glibcVersionRuntime
      ${glibc ? `report.header.glibcVersionRuntime = ${JSON.stringify(glibc)}` : ''}
      return report
    }
    const { platformTriple, loadBinding } = require(${JSON.stringify(loader)})
    let error
    try { loadBinding() } catch (e) { error = e.message }
    console.log(JSON.stringify({ triple: platformTriple(), error }))
  `
  const r = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', timeout: 30_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

for (const [platform, arch, glibc, triple, isPublished] of cases) {
  const libc = platform === 'linux' ? (glibc ? ` glibc ${glibc}` : ' musl') : ''
  test(`${platform} ${arch}${libc}: resqlite-${triple}`, { timeout: 30_000 }, (t) => {
    const seen = loadAs(t, platform, arch, glibc)
    assert.equal(seen.triple, triple)
    const name = `resqlite-${triple}`
    assert.equal(name in published, isPublished, `package.json optionalDependencies and ${name}`)
    assert.equal(fs.existsSync(path.join(root, 'npm', triple, 'package.json')), isPublished, `npm/${triple}`)
    assert.ok(seen.error, 'loading must fail: no such package is installed and there is no local build')
    assert.ok(seen.error.includes(`(${triple})`), seen.error)
    assert.ok(seen.error.includes('npm run build'), seen.error)
    if (isPublished) {
      assert.ok(seen.error.includes(`the package ${name} is not installed`), seen.error)
      assert.ok(seen.error.includes(`npm install ${name}`), seen.error)
    } else {
      assert.ok(seen.error.includes(`no package ${name} is published`), seen.error)
    }
  })
}

test('each npm/<platform>/ package states what it runs on', { timeout: 10_000 }, () => {
  for (const name of Object.keys(published)) {
    const triple = name.slice('resqlite-'.length)
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'npm', triple, 'package.json'), 'utf8'))
    assert.equal(pkg.name, name)
    assert.equal(pkg.main, `resqlite.${triple}.node`)
    const [os, cpu, libc] = triple.split('-')
    assert.deepEqual(pkg.os, [os])
    assert.deepEqual(pkg.cpu, [cpu])
    if (os === 'linux') assert.deepEqual(pkg.libc, [libc === 'gnu' ? 'glibc' : 'musl'])
    assert.match(pkg.description, /needs /, `${name}'s description states its floor`)
  }
})
