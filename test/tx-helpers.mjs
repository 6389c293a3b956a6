// Helpers for the transaction tests (not a test file itself: npm test runs test/*.test.mjs).
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after } from 'node:test'
import { Database } from '../dist/esm/index.mjs'

/** Per-test limit: a transaction that never settles fails its test instead of hanging the run. */
export const T = { timeout: 30_000 }

// A transaction that never finishes keeps the engine (and so this test file's process) alive
// forever. When a close hangs, the test fails and, once the file's tests are done, the process is
// ended so `npm test` reports the failure instead of hanging.
const hung = []
after(() => {
  if (hung.length > 0) {
    console.error(`resqlite tests: close() hung after: ${hung.join(', ')}; ending the process`)
    setTimeout(() => process.exit(1), 500).unref()
  }
})

/** Opens a database in its own temp dir; closes it (with a deadline) and removes the dir after the test. */
export async function openTxDb(t, options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resqlite-tx-'))
  const file = path.join(dir, 'test.db')
  const db = await Database.open(file, options)
  t.after(async () => {
    let timer
    const closed = await Promise.race([
      db.close().then(() => true),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(false), 10_000)
      }),
    ])
    clearTimeout(timer)
    if (!closed) {
      hung.push(JSON.stringify(t.name))
      throw new Error(`db.close() did not finish within 10 s after "${t.name}": a transaction or write never finished`)
    }
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return { db, file, dir }
}

/** A promise with its resolve/reject exposed. */
export function deferred() {
  let resolve
  let reject
  const promise = new Promise((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Rejects if `promise` has not settled within `ms` (calling `onTimeout` first): a deadlock fails
 * the test instead of hanging it. */
export function withTimeout(promise, ms = 5000, label = 'operation', onTimeout) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.()
      reject(new Error(`${label} did not settle within ${ms} ms (deadlock?)`))
    }, ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * db.transaction(body) with a deadline: if it has not settled within `ms`, the transaction is
 * aborted (so the writer is freed and the database can close) and the returned promise rejects
 * with a "deadlock" error.
 */
export function transactionWithin(db, body, ms = 5000, label = 'transaction') {
  const ac = new AbortController()
  return withTimeout(db.transaction(body, { signal: ac.signal }), ms, label, () => ac.abort(new Error('test deadline')))
}

/** Tracks whether a promise has settled, without awaiting it (and without leaving a rejection unhandled). */
export function track(promise) {
  const state = { settled: false, rejected: false, value: undefined, error: undefined, promise }
  promise.then(
    (v) => {
      state.settled = true
      state.value = v
    },
    (e) => {
      state.settled = true
      state.rejected = true
      state.error = e
    },
  )
  return state
}

/**
 * Captures the caller's async context (call it outside any transaction body). `run(fn)` then
 * calls fn in that context, even when `run` itself is called from inside a transaction body:
 * db.* calls made by fn are not routed to the transaction.
 */
export function outsideContext() {
  const snapshot = AsyncLocalStorage.snapshot()
  return (fn) => snapshot(fn)
}

/** Yields to the event loop n times. */
export async function turns(n = 3) {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms))
}

/** Asserts `err` is a `Class` with the given code (string or RegExp) and message patterns. */
export function assertError(err, Class, code, ...patterns) {
  assert.ok(err instanceof Class, `expected ${Class.name}, got ${err?.constructor?.name}: ${err?.stack ?? err}`)
  if (code instanceof RegExp) assert.match(String(err.code), code, `unexpected code; message: ${err.message}`)
  else assert.equal(err.code, code, `unexpected code; message: ${err.message}`)
  for (const re of patterns) assert.match(String(err.message), re)
  return err
}

/** The rejection reason of `promise`; fails if it resolves. */
export async function rejectionOf(promise, label = 'the promise') {
  let value
  try {
    value = await promise
  } catch (e) {
    return e
  }
  assert.fail(`expected ${label} to reject, but it resolved with ${safeJson(value)}`)
}

function safeJson(v) {
  try {
    return JSON.stringify(v)
  } catch {
    return String(v)
  }
}

/** The tests' usual insert into `t`. */
export const INSERT = 'INSERT INTO t (v) VALUES (?)'

/** A database with `t (id INTEGER PRIMARY KEY, v)`. */
export async function tdb(t, options) {
  const { db } = await openTxDb(t, options)
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v)')
  return db
}

/** The number of rows in `table`. */
export async function count(db, table = 't') {
  return (await db.selectOne(`SELECT count(*) AS n FROM ${table}`)).n
}

/** Column `v` of every row of `table`, in rowid order. */
export async function values(db, table = 't') {
  return (await db.select(`SELECT v FROM ${table} ORDER BY rowid`)).map((r) => r.v)
}

export { prng } from './helpers.mjs'
