// LiteFS nodes on this machine, for the read-replica example, its test and the lag experiment
// (docs/replication.md): each node is a `litefs mount` process with its own data directory and
// FUSE mount, and the nodes share nothing but LiteFS's HTTP stream on loopback. The primary
// holds a static lease; replicas connect to it. Needs the pinned litefs on PATH (or $LITEFS)
// and fusermount3 (Debian's fuse3); scripts/test-prerequisites.mjs installs both.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'

export const LITEFS_VERSION = 'v0.5.14'
export const LITEFS_INSTALL = `GOBIN=/usr/local/bin go install github.com/superfly/litefs/cmd/litefs@${LITEFS_VERSION}`

/** The litefs binary ($LITEFS, else the one on PATH); throws with the install command when it
 * is missing. (A `go install`ed litefs reports "development build"; `go version -m` tells its
 * module version, checked when Go is there.) */
export function findLitefs() {
  const bin = process.env.LITEFS || 'litefs'
  try {
    execFileSync(bin, ['version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  } catch {
    throw new Error(`litefs ${LITEFS_VERSION} is not installed (no '${bin}'); install it with: ${LITEFS_INSTALL}`)
  }
  const version = litefsModuleVersion(bin)
  if (version !== undefined && version !== LITEFS_VERSION) {
    throw new Error(`'${bin}' is litefs ${version}, this needs ${LITEFS_VERSION}: ${LITEFS_INSTALL}`)
  }
  return bin
}

/** The module version a Go-built litefs records (`go version -m`), or undefined without Go. */
export function litefsModuleVersion(bin = process.env.LITEFS || 'litefs') {
  const where = execFileSync('/bin/sh', ['-c', `command -v ${bin} || true`], { encoding: 'utf8' }).trim()
  for (const go of ['go', '/usr/local/go/bin/go']) {
    try {
      const out = execFileSync(go, ['version', '-m', where || bin], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
      return /\bmod\s+github\.com\/superfly\/litefs\s+(\S+)/.exec(out)?.[1]
    } catch {}
  }
  return undefined
}

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** One LiteFS node: `dir/data` (LiteFS's own files) and `dir/mnt` (the FUSE mount the
 * application opens). `primaryPort` is the primary's HTTP port; `port` this node's. */
export class LiteFSNode {
  constructor({ bin = findLitefs(), dir, port, primaryPort, primary }) {
    this.bin = bin
    this.dir = dir
    this.primary = primary
    this.mount = path.join(dir, 'mnt')
    this.config = path.join(dir, 'litefs.yml')
    this.log = path.join(dir, 'litefs.log')
    fs.mkdirSync(this.mount, { recursive: true })
    fs.mkdirSync(path.join(dir, 'data'), { recursive: true })
    fs.writeFileSync(
      this.config,
      `fuse:\n  dir: ${this.mount}\ndata:\n  dir: ${path.join(dir, 'data')}\n` +
        `lease:\n  type: static\n  advertise-url: http://127.0.0.1:${primaryPort}\n  candidate: ${primary}\n` +
        `http:\n  addr: 127.0.0.1:${port}\n`,
    )
  }

  /** The path of database `name` inside this node's mount. */
  file(name) {
    return path.join(this.mount, name)
  }

  /** Starts `litefs mount`; resolves once the node is mounted and part of the cluster (a
   * replica: connected to the primary; `waitForPrimary: false` returns once mounted). */
  async start({ waitForPrimary = true } = {}) {
    unmount(this.mount) // a mount left behind by a killed node
    const out = fs.openSync(this.log, 'a')
    const from = fs.fstatSync(out).size
    this.process = spawn(this.bin, ['mount', '-config', this.config], { stdio: ['ignore', out, out] })
    fs.closeSync(out)
    const child = this.process
    this.exited = new Promise((resolve) => child.once('exit', resolve)).then(() => {
      if (this.process === child) this.process = undefined
    })
    const ready = this.primary || !waitForPrimary ? 'LiteFS mounted to' : 'connected to cluster, ready'
    for (let i = 0; ; i++) {
      const log = this.logText().slice(from)
      if (log.includes(ready) && (this.primary || !waitForPrimary || log.includes('LiteFS mounted to'))) break
      if (this.process !== child) throw new Error(`litefs (${this.dir}) exited: ${log}`)
      if (i === 600) throw new Error(`litefs (${this.dir}) did not start within 30 s: ${log}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  /** SIGKILL (the machine is lost) or SIGTERM (a clean stop); resolves once it exited, with the
   * mount gone. */
  async stop(signal = 'SIGTERM') {
    this.process?.kill(signal)
    await this.exited
    unmount(this.mount)
  }

  logText() {
    return fs.existsSync(this.log) ? fs.readFileSync(this.log, 'utf8') : ''
  }
}

/** A primary and `replicas` replicas under `dir` (`dir/primary`, `dir/replica1`, …), on free
 * loopback ports. Call start() on each node. */
export async function cluster(dir, replicas = 1) {
  const bin = findLitefs()
  const primaryPort = await freePort()
  const primary = new LiteFSNode({ bin, dir: path.join(dir, 'primary'), port: primaryPort, primaryPort, primary: true })
  const others = []
  for (let i = 1; i <= replicas; i++) {
    const port = await freePort()
    others.push(new LiteFSNode({ bin, dir: path.join(dir, `replica${i}`), port, primaryPort, primary: false }))
  }
  return { primary, replicas: others }
}

/** Lazily unmounts `mount` if something is mounted there (fusermount3 -u -z); no error if not. */
function unmount(mount) {
  try {
    execFileSync('fusermount3', ['-u', '-z', mount], { stdio: 'ignore' })
  } catch {}
}
