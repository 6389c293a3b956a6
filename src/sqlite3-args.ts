// What resqlite/sqlite3's Database and Statement share: sqlite3's arguments (parameters, then
// callbacks) as resqlite takes them, callbacks called as sqlite3 calls them, and call sites.
import type { Params, Value } from './params'
import { OPEN_FLAGS, refusal } from './sqlite3-errors'

export const ignore = (): void => {}
export const DONE = Promise.resolve()

export type Callback = (this: unknown, err: Error | null, ...results: unknown[]) => void
/** A call's work: its promise settles once the call's callback has run; it never rejects. */
export type Work = () => Promise<void>

export const DEFAULT_MODE = OPEN_FLAGS.OPEN_READWRITE | OPEN_FLAGS.OPEN_CREATE | OPEN_FLAGS.OPEN_FULLMUTEX
/** Flags resqlite has no use for: it keeps its connections thread-safe and private itself. */
export const KNOWN_FLAGS = DEFAULT_MODE | OPEN_FLAGS.OPEN_READONLY | OPEN_FLAGS.OPEN_URI | OPEN_FLAGS.OPEN_PRIVATECACHE

/** Calls a user's callback; what it throws surfaces as an uncaught exception (as from sqlite3's
 * native callbacks), not inside the queue, which goes on. */
export function call(callback: Callback | undefined, self: unknown, ...args: unknown[]): void {
  if (callback === undefined) return
  try {
    callback.apply(self, args as [Error | null, ...unknown[]])
  } catch (error) {
    process.nextTick(() => {
      throw error
    })
  }
}

/** Runs `deliver` (a call's callbacks) in a tick of its own, as sqlite3's arrive from libuv:
 * resolves after it ran. Callbacks delivered in the microtask that settled the read would keep
 * the next read in resqlite's turn, where reads in a row open a shared snapshot that closes
 * again after one idle microtask round, before a callback's promise lets the caller go on:
 * each read then paid a BEGIN and a COMMIT (experiments/061's rule). */
export function inTick(deliver: () => void): Promise<void> {
  return new Promise((resolve) =>
    process.nextTick(() => {
      deliver()
      resolve()
    }),
  )
}

/** sqlite3's parameters after the SQL: an array (by position), an object (by name: `$a`, `:a`,
 * `@a` or an index), or the values themselves; a function last is the callback. */
export function parseArgs(args: readonly unknown[], callbacks = 1): { params: Params | undefined; fns: Callback[] } {
  let end = args.length
  const fns: Callback[] = []
  while (fns.length < callbacks && end > 0 && typeof args[end - 1] === 'function') fns.unshift(args[--end] as Callback)
  if (end === 0) return { params: undefined, fns }
  const first = args[0]
  if (Array.isArray(first)) return { params: first.map(bindValue), fns }
  if (first === null || typeof first !== 'object' || first instanceof Date || first instanceof RegExp) {
    return { params: args.slice(0, end).map(bindValue), fns }
  }
  if (ArrayBuffer.isView(first)) return { params: args.slice(0, end).map(bindValue), fns }
  const named: Record<string, Value> = {}
  const positional: Value[] = []
  for (const [key, value] of Object.entries(first)) {
    if (/^[1-9][0-9]*$/.test(key)) positional[Number(key) - 1] = bindValue(value)
    else named[/^[$:@]/.test(key) ? key.slice(1) : key] = bindValue(value)
  }
  if (positional.length === 0) return { params: named, fns }
  if (Object.keys(named).length > 0) {
    throw refusal('ERR_INVALID_ARG_VALUE', 'parameters by index and by name in one object', 'RANGE')
  }
  return { params: Array.from(positional, (v) => v ?? null), fns }
}

/** A value as sqlite3 binds it, where resqlite's own binding would refuse it: `undefined` is
 * NULL, a boolean 1 or 0, a `Date` its milliseconds, a `RegExp` its text. Anything else goes to
 * resqlite as it is (so `NaN` and plain objects are refused, not stored as NULL or text). */
export function bindValue(value: unknown): Value {
  // Kept undefined until the statement's parameters are known (see unboundAsNull).
  if (value === undefined) return value as unknown as Value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof Date) return value.getTime()
  if (value instanceof RegExp) return String(value)
  return value as Value
}

/** sqlite3 leaves a parameter it was given no value for NULL (resqlite refuses the call):
 * positional values are padded, named ones the object lacks are given as null, and an
 * `undefined` is NULL (one past the statement's parameters is not bound at all, as in sqlite3). */
export function unboundAsNull(
  params: Params | undefined,
  parameters: { readonly count: number; readonly names: readonly string[] } | undefined,
): Params | undefined {
  const count = parameters?.count ?? 0
  if (params === undefined || Array.isArray(params)) {
    const given = (params ?? []) as (Value | undefined)[]
    if (given.length === count && !given.includes(undefined)) return params
    const values = given.filter((value, at) => at < count || value !== undefined).map((value) => value ?? null)
    while (values.length < count) values.push(null)
    return values
  }
  const filled: Record<string, Value> = {}
  for (const name of parameters?.names ?? []) filled[name] = null
  for (const [name, value] of Object.entries(params as Record<string, Value | undefined>)) filled[name] = value ?? null
  return filled
}

/** Set by {@link verbose}: errors then carry the stack of the call that queued their work. */
let verbosity = false

/** Turns call-site stacks on (`verbose()`). */
export function beVerbose(): void {
  verbosity = true
}
const NO_SITE: { stack?: string } = {}

/** The stack of the application's call, to give the error of the work it queued; taken in
 * verbose mode only, as sqlite3 does: it costs more than a small read (about 30 µs under
 * async hooks, measured with bench/lanes point-awaited). */
// biome-ignore lint/complexity/noBannedTypes: any function or class, as Error.captureStackTrace takes
export function site(fn: Function): { stack?: string } {
  if (!verbosity) return NO_SITE
  const holder: { stack?: string } = {}
  Error.captureStackTrace(holder, fn)
  return holder
}
