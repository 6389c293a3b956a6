// The processes of the read-replica tests (not a test file itself): a child whose stdout lines
// are kept, for test/replicas.test.mjs (LiteFS) and test/replicas-litestream.test.mjs.
import assert from 'node:assert/strict'
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

/** The replica example's live-query emissions in a child's lines: the commit each showed, and
 * whether it held part of a transaction. */
export function emissions(lines) {
  return lines
    .map((l) => /^replica: tx (\d+), (\d+) rows( torn)?/.exec(l))
    .filter(Boolean)
    .map((m) => ({ tx: Number(m[1]), torn: m[3] !== undefined }))
}

/**
 * The primary's machine lost in the middle of a transaction: kills the primary's process `p`
 * and its replication engine (`engine.stop('SIGKILL')`) while a transaction is under way,
 * restarts both, and waits for the replica to catch up. On a loaded machine the kill may land
 * after the commit instead: then it goes again (at most 5 tries). Returns the new primary.
 */
export async function killPrimaryInTransaction(p, { engine, startPrimary, lastAck, caughtUp, what }) {
  for (let attempt = 1; ; attempt++) {
    const from = p.lines.length
    const mid = await p.waitFor(
      (lines) => lines.slice(from).find((l) => l.startsWith('mid ')),
      'a transaction under way',
    )
    await sleep(Math.random() * 150)
    await p.kill()
    await engine.stop('SIGKILL')
    const before = lastAck()
    const landed = Number(mid.slice(4)) > before
    assert.ok(landed || attempt < 5, `no kill landed inside a transaction in ${attempt} tries`)
    await sleep(200 + Math.random() * 600)
    await engine.start()
    p = startPrimary()
    await p.waitFor(() => lastAck() > before + 1, 'commits from the restarted primary')
    await caughtUp(lastAck(), what)
    if (landed) return p
  }
}
