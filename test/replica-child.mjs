// The processes of the read-replica tests (not a test file itself): a child whose stdout lines
// are kept, for test/replicas.test.mjs (LiteFS) and test/replicas-litestream.test.mjs.
import { spawn } from 'node:child_process'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
/** Generous: a loaded 2-core machine, a replication engine reconnecting with its own backoff. */
export const CATCH_UP_MS = 60_000

/** A child process whose stdout lines are kept; `waitFor` polls them. */
export class Child {
  constructor(script, file, env = {}) {
    this.lines = []
    this.errors = ''
    this.process = spawn(process.execPath, [script, file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    })
    let partial = ''
    this.process.stdout.on('data', (d) => {
      const parts = (partial + d).split('\n')
      partial = parts.pop()
      this.lines.push(...parts)
    })
    this.process.stderr.on('data', (d) => (this.errors += d))
    this.exited = new Promise((resolve) => this.process.once('exit', resolve))
  }

  async waitFor(predicate, what, ms = CATCH_UP_MS) {
    const end = Date.now() + ms
    for (;;) {
      const found = predicate(this.lines)
      if (found) return found
      if (Date.now() > end) {
        throw new Error(
          `timed out waiting for ${what}; last lines: ${this.lines.slice(-5).join(' | ')}; stderr: ${this.errors}`,
        )
      }
      await sleep(20)
    }
  }

  async kill() {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL')
    await this.exited
  }
}
