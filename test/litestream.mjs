// Litestream for the replication tests (not a test file itself): finding the pinned binary, a
// config replicating one database to a local file:// replica, and the commands the tests run.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

/** The version the tests pin; npm test's pretest step (scripts/test-prerequisites.mjs) installs it. */
export const LITESTREAM_VERSION = 'v0.5.18'
export const LITESTREAM_INSTALL = `GOBIN=/usr/local/bin go install github.com/benbjohnson/litestream/cmd/litestream@${LITESTREAM_VERSION}`
const INSTALL = LITESTREAM_INSTALL

/** Litestream's VFS read-replica extension, built from the same module version (the file name
 * gives SQLite its entry point, sqlite3_litestreamvfs_init); npm test's
 * pretest step builds it there (root; or $LITESTREAM_VFS names one built elsewhere). */
export const LITESTREAM_VFS = `/usr/local/lib/litestream-${LITESTREAM_VERSION}/litestream-vfs.so`
export const LITESTREAM_VFS_BUILD = `bash scripts/build-litestream-vfs.sh ${LITESTREAM_VERSION} ${LITESTREAM_VFS}`

/** The VFS extension's path ($LITESTREAM_VFS, else the pinned build); throws with the build
 * command when it is missing. */
export function findLitestreamVfs() {
  const so = process.env.LITESTREAM_VFS || LITESTREAM_VFS
  if (!fs.existsSync(so)) {
    throw new Error(`Litestream's VFS extension is not built (no '${so}'); build it with: ${LITESTREAM_VFS_BUILD}`)
  }
  return so
}

/** The litestream binary ($LITESTREAM, else the one on PATH), checked to be the pinned version;
 * throws with the install command when it is missing or another version. */
export function findLitestream() {
  const bin = process.env.LITESTREAM || 'litestream'
  let version
  try {
    version = execFileSync(bin, ['version'], { encoding: 'utf8' }).trim()
  } catch {
    throw new Error(`litestream ${LITESTREAM_VERSION} is not installed (no '${bin}'); install it with: ${INSTALL}`)
  }
  if (version !== LITESTREAM_VERSION) {
    throw new Error(`'${bin}' is litestream ${version}, the tests need ${LITESTREAM_VERSION}: ${INSTALL}`)
  }
  return bin
}

/** One database replicated to `<dir>/replica` with a 100 ms sync interval (or `syncInterval`,
 * and Litestream's `monitorInterval` if given), controlled through a socket in `dir`. */
export class Replication {
  /** `t`: the test, after which a Litestream still running is killed (a failed test must not
   * leave it keeping the process alive). */
  constructor(t, bin, dir, db, { syncInterval = '100ms', monitorInterval } = {}) {
    t.after(() => this.stop('SIGKILL'))
    this.bin = bin
    this.db = db
    this.replica = `file://${path.join(dir, 'replica')}`
    this.socket = path.join(dir, 'litestream.sock')
    this.config = path.join(dir, 'litestream.yml')
    this.log = path.join(dir, 'litestream.log')
    fs.writeFileSync(
      this.config,
      `socket:\n  enabled: true\n  path: ${this.socket}\ndbs:\n  - path: ${db}\n` +
        `    replica:\n      url: ${this.replica}\n      sync-interval: ${syncInterval}\n` +
        (monitorInterval ? `    monitor-interval: ${monitorInterval}\n` : ''),
    )
  }

  /** Starts `litestream replicate` (debug log appended to this.log); resolves once its control
   * socket exists. */
  async start() {
    const out = fs.openSync(this.log, 'a')
    this.process = spawn(this.bin, ['replicate', '-config', this.config, '-log-level', 'debug'], {
      stdio: ['ignore', out, out],
    })
    fs.closeSync(out)
    this.exited = new Promise((resolve) => this.process.once('exit', resolve)).then(() => {
      this.process = undefined
    })
    for (let i = 0; !fs.existsSync(this.socket); i++) {
      if (i === 200 || this.process === undefined) throw new Error(`litestream did not start: ${this.logText()}`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }

  /** `litestream sync -wait`: resolves with the replica's TXID once the replica holds every
   * transaction the WAL held when the request arrived. */
  async sync() {
    const out = await run(this.bin, ['sync', '-wait', '-json', '-socket', this.socket, this.db])
    return JSON.parse(out).replica_txid
  }

  /** SIGKILL (the machine is lost) or SIGTERM (a clean stop); resolves once it exited. */
  async stop(signal) {
    this.process?.kill(signal)
    await this.exited
    fs.rmSync(this.socket, { force: true })
  }

  /** `litestream restore` of the replica's latest state into `out`. */
  restore(out) {
    return run(this.bin, ['restore', '-o', out, this.replica])
  }

  logText() {
    return fs.existsSync(this.log) ? fs.readFileSync(this.log, 'utf8') : ''
  }
}

function run(bin, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`litestream ${args[0]} exited ${code}: ${err}${out}`)),
    )
  })
}
