// SQL functions written in JavaScript: `db.function` and `db.aggregate` (docs/api.md
// "Functions"). The engine calls the callers made here, always on the JS thread, whichever
// thread runs the statement (crates/engine/src/functions/, experiments/054). A caller never
// throws: what the user's function throws, or returns that cannot be stored, comes back as a
// `Failure`, whose message the statement fails with.
import { checkOptionsObject } from './arguments'
import { describe, failureToken, ResqliteError, rangeError, typeError } from './errors'
import type { NativeDatabase } from './native'

/** Options of `db.function` (docs/api.md "Functions"). */
export interface FunctionOptions {
  /** The same arguments always give the same result: SQLite may then use the function in
   * indexes and generated columns (a CHECK constraint takes it either way), and call it once for
   * constant arguments.
   * Default false. */
  deterministic?: boolean
  /** Any number of arguments (the function receives them all); otherwise exactly `fn.length`.
   * Default false. */
  varargs?: boolean
  /** Refused in triggers, views, CHECK constraints and generated columns: only SQL the
   * application runs itself may call it (SQLITE_DIRECTONLY). Default false. */
  directOnly?: boolean
}

/** A SQL function's JavaScript body: it takes the SQL arguments (docs/api.md "Functions" says
 * which JavaScript value each SQL value arrives as) and returns its result. Its parameters are
 * `any` so that a callback written as users write one, `(s) => s.toLowerCase()` or
 * `(s: string) => …`, type-checks under `strict`: what SQL passes is known only at run time. */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type SqlFunction = (...args: any[]) => unknown

/** `db.aggregate`'s definition: an aggregate, and a window function too when `inverse` is given. */
export interface AggregateOptions<A = unknown> extends FunctionOptions {
  /** The accumulator's first value, or a function called for each group to make it. Default null. */
  start?: A | (() => A)
  /** Called for each row with the accumulator and the row's arguments; returns the next
   * accumulator (`undefined` keeps it as it is). */
  // biome-ignore lint/suspicious/noExplicitAny: as SqlFunction's
  step: (accumulator: A, ...args: any[]) => A | undefined
  /** A window function's: undoes `step` for a row leaving the window. */
  // biome-ignore lint/suspicious/noExplicitAny: as SqlFunction's
  inverse?: (accumulator: A, ...args: any[]) => A | undefined
  /** Turns the accumulator into the result. Default: the accumulator is the result. */
  result?: (accumulator: A) => unknown
}

/** The most arguments SQLite lets a function take (SQLITE_MAX_FUNCTION_ARG). */
const MAX_ARGS = 127
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** What a caller returns when the function failed: the engine fails the statement with `message`. */
class Failure {
  constructor(readonly message: string) {}
}

/** User functions running now (on this thread): a database call made from inside one is refused. */
let running = 0

/** True while a user function runs: the library refuses calls made from inside it. */
export function inFunction(): boolean {
  return running > 0
}

/** The error a database call made from inside a function rejects with; the function's
 * statement fails with the first of them too. */
export function callInFunctionError(): ResqliteError {
  const error = new ResqliteError(
    'ERR_CALL_IN_FUNCTION',
    'a database call was made from inside a SQL function written in JavaScript; a function must compute its result from its arguments alone',
  )
  refusedCall ??= error
  return error
}

/** A call's rejection. One refused inside a function is also the function's failure (its
 * statement reports it), so it is marked handled: a function that ignores the promise does not
 * end the process with an unhandled rejection. */
export function rejected(error: unknown): Promise<never> {
  const promise = Promise.reject(error)
  if ((error as ResqliteError | undefined)?.code === 'ERR_CALL_IN_FUNCTION') promise.catch(() => {})
  return promise
}

function threw(name: string, value: unknown): Failure {
  return new Failure(`${name}() threw: ${thrownMessage(value)}${failureToken('ERR_FUNCTION_THREW', value)}`)
}

/** What was thrown, as the statement's message says it. A value whose getters (or a Proxy's
 * traps) throw is named as such: the failure keeps its code and the value as `cause`. */
function thrownMessage(value: unknown): string {
  try {
    return value instanceof Error ? String(value.message) : describe(value)
  } catch {
    return 'a value that could not be described (reading it threw)'
  }
}

function refused(name: string, what: string): Failure {
  return new Failure(`${name}() ${what}${failureToken('ERR_FUNCTION_RESULT', undefined)}`)
}

/** The first database call refused while a function ran (`callInFunctionError`): the function
 * fails with it once it returns, even if it caught or ignored it. */
let refusedCall: ResqliteError | undefined

/** Runs a user function as a caller does: counted as running, and what it throws, or a
 * database call refused while it ran, made a Failure. */
function run<T>(name: string, body: () => T): T | Failure {
  running++
  try {
    const result = body()
    if (refusedCall !== undefined && running === 1) return threw(name, refusedCall)
    return result
  } catch (e) {
    return threw(name, e)
  } finally {
    if (--running === 0) refusedCall = undefined
  }
}

/** A returned value as the engine takes it (functions/values.rs): as a parameter binds, with
 * `undefined` as NULL; what cannot be stored, a Failure. */
function storable(name: string, r: unknown): unknown {
  switch (typeof r) {
    case 'number':
      return !Number.isNaN(r) ? r : refused(name, 'returned NaN, which SQLite would store as NULL')
    case 'string':
      return r.isWellFormed() ? r : refused(name, 'returned a string holding a lone surrogate')
    case 'undefined':
      return null
    case 'bigint':
      return r >= INT64_MIN && r <= INT64_MAX ? r : refused(name, 'returned a bigint outside the 64-bit integer range')
    case 'object':
      if (r === null || r instanceof Uint8Array) return r
      if (ArrayBuffer.isView(r)) return new Uint8Array(r.buffer, r.byteOffset, r.byteLength)
      if (isThenable(r)) return refusedPromise(name, r)
  }
  return refused(
    name,
    `returned ${describe(r)}, which cannot be stored; return null, a number, a bigint, a string or a Uint8Array`,
  )
}

/** One definition's current implementation: replacing a function of the same kind and
 * options only swaps it here. */
interface Slot {
  kind: 0 | 1 | 2
  flags: string
  /** The engine calls through it already: redefining only swaps its implementation. */
  defined: boolean
  fn: (...args: unknown[]) => unknown
  aggregate?: Required<Pick<AggregateOptions, 'step' | 'result'>> & {
    start: () => unknown
    inverse?: AggregateOptions['inverse']
  }
}

/** The functions of one database. */
export class Functions {
  readonly #native: NativeDatabase
  readonly #slots = new Map<string, Slot>()
  /** Serves calls handed over from engine threads on a later turn of the loop. */
  readonly #later = () => setImmediate(this.#serve)
  readonly #serve = () => {
    if (this.#native.serveFunctionCalls()) setImmediate(this.#serve)
  }

  constructor(native: NativeDatabase) {
    this.#native = native
  }

  /** Some function is defined: a select may call one (then it may run in slices: placement.ts
   * `readRunsSliced`). */
  get defined(): boolean {
    return this.#slots.size > 0
  }

  defineScalar(name: unknown, fn: unknown, options: unknown): void {
    const checkedName = checkName(name, 'function')
    if (typeof fn !== 'function') {
      throw typeError(`db.function(name, fn, options): fn must be a function, got ${describe(fn)}`)
    }
    const opts = checkOptions(options, 'function', ['deterministic', 'varargs', 'directOnly'])
    const nArg = opts.varargs ? -1 : arity(fn.length, 0, 'fn')
    const slot = this.#slot(checkedName, nArg, 0, opts)
    slot.fn = fn as Slot['fn']
    if (slot.defined) return
    this.#define(checkedName, nArg, slot, opts, [scalarCaller(checkedName, slot, nArg)])
  }

  defineAggregate(name: unknown, definition: unknown): void {
    const checkedName = checkName(name, 'aggregate')
    checkOptionsObject(definition, 'db.aggregate(name, definition): definition')
    const opts = checkOptions(definition, 'aggregate', [
      'deterministic',
      'varargs',
      'directOnly',
      'start',
      'step',
      'inverse',
      'result',
    ])
    const def = definition as AggregateOptions
    for (const key of ['step', 'inverse', 'result'] as const) {
      if (def[key] !== undefined && typeof def[key] !== 'function') {
        throw typeError(`db.aggregate: definition.${key} must be a function, got ${describe(def[key])}`)
      }
    }
    if (def.step === undefined) throw typeError('db.aggregate: definition.step is required (a function)')
    const nArg = opts.varargs ? -1 : arity(def.step.length, 1, 'step')
    const kind = def.inverse === undefined ? 1 : 2
    const slot = this.#slot(checkedName, nArg, kind, opts)
    const start = def.start
    slot.aggregate = {
      start: typeof start === 'function' ? (start as () => unknown) : () => (start === undefined ? null : start),
      step: def.step,
      inverse: def.inverse,
      result: def.result ?? ((accumulator) => accumulator),
    }
    if (slot.defined) return
    const states = new Map<number, unknown>()
    const agg = () => slot.aggregate as NonNullable<Slot['aggregate']>
    const result = (instance: number, final: boolean): unknown =>
      run(checkedName, () => {
        const { start, result } = agg()
        const accumulator = states.has(instance) ? states.get(instance) : start()
        if (final) states.delete(instance)
        return storable(checkedName, result(accumulator))
      })
    // Steps in order (an engine thread keeps them and hands them over together:
    // crates/engine/src/functions/callbacks.rs): `inverse[i]` says which, their arguments
    // `argc` at a time in `args`.
    const steps = (instance: number, inverse: boolean[], args: unknown[], argc: number): unknown => {
      const outcome = run(checkedName, () => {
        const { start, step, inverse: undo } = agg()
        let accumulator = states.has(instance) ? states.get(instance) : start()
        for (let i = 0, at = 0; i < inverse.length; i++, at += argc) {
          const fn = (inverse[i] ? undo : step) as Slot['fn']
          const next = argc === 1 ? fn(accumulator, args[at]) : fn(accumulator, ...args.slice(at, at + argc))
          if (isThenable(next)) return refusedPromise(`${checkedName} (${inverse[i] ? 'inverse' : 'step'})`, next)
          if (next !== undefined) accumulator = next
        }
        states.set(instance, accumulator)
        return undefined
      })
      // A failed step fails the statement: no result is asked for, so the accumulator goes now.
      if (outcome instanceof Failure) states.delete(instance)
      return outcome
    }
    // One step, as a statement on the JS thread calls it.
    const stepper =
      (inverse: boolean) =>
      (instance: number, ...args: unknown[]): unknown =>
        steps(instance, [inverse], args, args.length)
    const callers = kind === 1 ? [stepper(false), result, steps] : [stepper(false), stepper(true), result, steps]
    this.#define(checkedName, nArg, slot, opts, callers)
  }

  /** The slot for (name, argument count): SQLite keys functions the same way. A slot whose
   * kind or options change is replaced (the engine defines it anew). */
  #slot(name: string, nArg: number, kind: Slot['kind'], opts: FunctionOptions): Slot {
    const key = `${asciiLowerCase(name)}/${nArg}`
    const flags = `${!!opts.deterministic}/${!!opts.directOnly}`
    const existing = this.#slots.get(key)
    if (existing !== undefined && existing.kind === kind && existing.flags === flags) return existing
    const slot: Slot = { kind, flags, defined: false, fn: () => null }
    this.#slots.set(key, slot)
    return slot
  }

  #define(name: string, nArg: number, slot: Slot, opts: FunctionOptions, callers: unknown[]): void {
    this.#native.defineFunction(name, nArg, slot.kind, !!opts.deterministic, !!opts.directOnly, callers, this.#later)
    slot.defined = true
  }
}

/** The caller of a scalar function. One of one argument, the usual kind, is called per row
 * without a rest array or a closure per call (`run`'s steps, inlined). */
function scalarCaller(name: string, slot: Slot, nArg: number): (...args: unknown[]) => unknown {
  if (nArg !== 1) return (...args) => run(name, () => storable(name, Reflect.apply(slot.fn, undefined, args)))
  return (a: unknown) => {
    running++
    try {
      const f = slot.fn // called without `this`, as the others are
      const result = f(a)
      return refusedCall !== undefined && running === 1 ? threw(name, refusedCall) : storable(name, result)
    } catch (e) {
      return threw(name, e)
    } finally {
      if (--running === 0) refusedCall = undefined
    }
  }
}

function isThenable(r: unknown): r is PromiseLike<unknown> {
  return typeof (r as { then?: unknown } | null)?.then === 'function'
}

/** A Promise returned is refused and never awaited; its rejection, if any, is handled here so
 * it does not also end the process as unhandled. */
function refusedPromise(name: string, r: PromiseLike<unknown>): Failure {
  Promise.resolve(r).catch(() => {})
  return refused(name, 'returned a Promise: SQL functions run synchronously, and nothing is awaited')
}

/** SQLite folds the case of function names in ASCII only (`sqlite3StrICmp`): `É` and `é`, or
 * the Kelvin sign and `k`, are different functions to it, so to the slots too. */
function asciiLowerCase(name: string): string {
  return name.replace(/[A-Z]+/g, (upper) => upper.toLowerCase())
}

function checkName(name: unknown, method: string): string {
  if (typeof name !== 'string') throw typeError(`db.${method}: name must be a string, got ${describe(name)}`)
  if (name.length === 0 || Buffer.byteLength(name) > 255 || name.includes('\0') || !name.isWellFormed()) {
    throw typeError(
      `db.${method}: name must be 1 to 255 bytes of UTF-8 without a NUL character or a lone surrogate`,
      'ERR_INVALID_ARG_VALUE',
    )
  }
  return name
}

function checkOptions(options: unknown, method: string, known: readonly string[]): FunctionOptions {
  if (options === undefined) return {}
  checkOptionsObject(options, `db.${method}: options`)
  for (const key of Object.keys(options)) {
    if (!known.includes(key))
      throw typeError(
        `db.${method}: unknown option ${JSON.stringify(key)}: it takes ${known.slice(0, -1).join(', ')} and ${known.at(-1)}`,
        'ERR_INVALID_ARG_VALUE',
      )
  }
  for (const key of ['deterministic', 'varargs', 'directOnly'] as const) {
    const v = (options as FunctionOptions)[key]
    if (v !== undefined && typeof v !== 'boolean') {
      throw typeError(`db.${method}: options.${key} must be a boolean, got ${describe(v)}`)
    }
  }
  return options as FunctionOptions
}

/** The argument count of a function whose `length` is `length` and whose first `skip`
 * parameters are not SQL arguments (an aggregate's accumulator). A `length` redefined to
 * something that is not a count is refused: SQLite would refuse to register it. */
function arity(length: unknown, skip: number, what: string): number {
  if (typeof length !== 'number') throw typeError(`${what}.length must be a number, got ${describe(length)}`)
  if (!Number.isInteger(length) || length < 0) {
    throw rangeError(`${what}.length must be a whole number of arguments, 0 or more; use varargs for any number`)
  }
  const n = Math.max(length - skip, 0)
  if (n > MAX_ARGS) throw rangeError(`${what} takes ${n} arguments; SQLite allows at most ${MAX_ARGS}`)
  return n
}
