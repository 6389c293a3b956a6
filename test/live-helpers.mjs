// Helpers shared by the live-query test files (not a test file itself).
import assert from 'node:assert/strict'

/** Generous: the machine running the tests may be a loaded 2-core box. */
export const TIMEOUT = 10_000
/** How long a negative check ("nothing is delivered") waits. */
export const QUIET_MS = 300

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The live-query counters. */
export async function counters(db) {
  return (await db.diagnostics()).streams
}

/**
 * Subscribes to `live` with an observer object and records everything it receives, in order.
 * `events` interleaves { next | error | complete } so tests can check ordering.
 */
export function collect(live) {
  const c = {
    deliveries: [],
    errors: [],
    completed: 0,
    events: [],
    waiters: [],
    stop: undefined,
    get last() {
      return this.deliveries.at(-1)
    },
    notify() {
      for (const w of [...this.waiters]) w()
    },
    /** Resolves once `predicate(c)` holds (checked now and after every event); rejects after `timeoutMs`. */
    waitFor(predicate, what = 'a condition', timeoutMs = TIMEOUT) {
      if (predicate(c)) return Promise.resolve(c)
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(c)) return
          done()
          resolve(c)
        }
        const timer = setTimeout(() => {
          done()
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${what}; got ${c.deliveries.length} deliveries ` +
                `(last: ${JSON.stringify(c.last)}), ${c.errors.length} errors ` +
                `(${c.errors.map((e) => `${e?.code}: ${e?.message}`).join('; ')}), ${c.completed} completes`,
            ),
          )
        }, timeoutMs)
        const done = () => {
          clearTimeout(timer)
          c.waiters.splice(c.waiters.indexOf(check), 1)
        }
        c.waiters.push(check)
      })
    },
    /** How many deliveries `next()` has handed out. */
    cursor: 0,
    /** The first delivery not yet handed out by `next()` (waiting for it if needed). */
    async next(timeoutMs = TIMEOUT) {
      const n = this.cursor
      await this.waitFor((x) => x.deliveries.length > n, `delivery #${n + 1}`, timeoutMs)
      this.cursor = n + 1
      return this.deliveries[n]
    },
    /** The first error not yet handed out by `nextError()` (waiting for it if needed). */
    errorCursor: 0,
    async nextError(timeoutMs = TIMEOUT) {
      const n = this.errorCursor
      await this.waitFor((x) => x.errors.length > n, `error #${n + 1}`, timeoutMs)
      this.errorCursor = n + 1
      return this.errors[n]
    },
    /** Waits until the last delivered rows deep-equal `expected`. */
    async until(expected, timeoutMs = TIMEOUT) {
      await this.waitFor((x) => isDeepEqual(x.last, expected), `rows ${JSON.stringify(expected)}`, timeoutMs)
      return this.last
    },
  }
  c.stop = live.subscribe({
    next(rows) {
      c.deliveries.push(rows)
      c.events.push('next')
      c.notify()
    },
    error(e) {
      c.errors.push(e)
      c.events.push('error')
      c.notify()
    },
    complete() {
      c.completed++
      c.events.push('complete')
      c.notify()
    },
  })
  return c
}

function isDeepEqual(a, b) {
  try {
    assert.deepStrictEqual(a, b)
    return true
  } catch {
    return false
  }
}

/** Asserts that `c` receives nothing more (no rows, no error, no complete) for `ms`. */
export async function assertQuiet(c, ms = QUIET_MS, what = 'the stream') {
  const before = c.events.length
  await sleep(ms)
  assert.deepStrictEqual(
    c.events.slice(before),
    [],
    `${what} must receive nothing, got ${c.events.slice(before).join(', ')}`,
  )
}

/**
 * Exact idleness for a set of streams: resolves when every run the engine queued has finished
 * and reached JS. Each collector must be the only subscriber of its own distinct query, and all
 * must have been subscribed after `baseline` (the counters taken with `counters(db)`), with no
 * other stream on `db` subscribed since. Runs queued = first runs + requeries; runs finished =
 * deliveries + errors seen in JS + runs suppressed as unchanged (which never reach JS).
 */
export async function settle(db, collectors, baseline, timeoutMs = TIMEOUT) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    // What JS has received, read in the same synchronous step as the native counters
    // (diagnostics() reads them before its first await): no delivery can arrive in between.
    const received = collectors.reduce((n, c) => n + c.deliveries.length + c.errors.length, 0)
    const s = await counters(db)
    const queued = collectors.length + (s.requeries - baseline.requeries)
    const finished = received + (s.unchangedSuppressed - baseline.unchangedSuppressed)
    if (finished === queued) return s
    assert.ok(
      finished < queued,
      `more runs finished (${finished}) than were queued (${queued}): the counters are inconsistent`,
    )
    if (Date.now() > deadline)
      assert.fail(`streams did not settle within ${timeoutMs} ms: ${finished} of ${queued} runs finished`)
    await sleep(5)
  }
}

/** Polls the counters until `predicate(streams)` holds; fails after `timeoutMs`. */
export async function waitCounters(db, predicate, what, timeoutMs = TIMEOUT) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const s = await counters(db)
    if (predicate(s)) return s
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; counters: ${JSON.stringify(s)}`)
    await sleep(5)
  }
}

/** Polls `predicate()` until it holds; fails after `timeoutMs`. */
export async function waitUntil(predicate, what, timeoutMs = TIMEOUT) {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await sleep(5)
  }
}
