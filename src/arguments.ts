// Argument checks for the public API: each throws a TypeError / RangeError / ResqliteError
// that names the argument and, for a wrong type, its type (never its value).
import * as os from 'node:os'

import type { EngineOptions } from './engine'
import { ResqliteError, abortError, describe, rangeError, typeError } from './errors'
import type { Packed } from './params'
import type { OpenOptions, QueryOptions, TransactionMode, TransactionOptions } from './types'

const OPTION_KEYS = new Set(['readers', 'busyTimeout', 'readonly', 'safeIntegers', 'watchExternalChanges'])
const TRANSACTION_OPTION_KEYS = new Set(['mode', 'signal'])
const MODES = new Set(['deferred', 'immediate', 'exclusive'])

/** The checks every statement call makes, in order: the SQL, the options, the parameters
 * (packed by `pack`), then a signal already aborted. */
export function prepareCall(sql: unknown, options: unknown, pack: () => Packed): { packed: Packed; signal: AbortSignal | undefined } {
  checkSql(sql)
  const signal = checkQueryOptions(options)
  const packed = pack()
  if (signal?.aborted) throw abortError(signal, sql)
  return { packed, signal }
}

export function checkBody(body: unknown): void {
  if (typeof body !== 'function') throw typeError(`the transaction body must be a function, got ${describe(body)}`)
}

export function checkMode(mode: unknown): TransactionMode {
  if (mode === undefined) return 'deferred'
  if (typeof mode !== 'string' || !MODES.has(mode)) {
    throw typeError(`mode must be 'deferred', 'immediate' or 'exclusive', got ${typeof mode === 'string' ? `'${mode}'` : describe(mode)}`, 'ERR_INVALID_ARG_VALUE')
  }
  return mode as TransactionMode
}

export function checkNestedOptions(options: unknown): void {
  if (options === undefined) return
  if (typeof options !== 'object' || options === null) throw typeError(`options must be an object, got ${describe(options)}`)
  for (const key of Object.keys(options)) {
    throw typeError(`a nested transaction takes no '${key}' option: mode and signal belong to the outermost transaction`, 'ERR_INVALID_ARG_VALUE')
  }
}

export function checkSql(sql: unknown): asserts sql is string {
  if (typeof sql !== 'string') throw typeError(`sql must be a string, got ${describe(sql)}`)
}

export function checkQueryOptions(options: unknown): AbortSignal | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null) throw typeError(`options must be an object, got ${describe(options)}`)
  const signal = (options as QueryOptions).signal
  if (signal === undefined) return undefined
  if (!(signal instanceof AbortSignal)) throw typeError(`options.signal must be an AbortSignal, got ${describe(signal)}`)
  return signal
}

export function checkPath(path: unknown): string {
  if (typeof path !== 'string') throw typeError(`path must be a string, got ${describe(path)}`)
  if (path === '' || path === ':memory:') {
    throw new ResqliteError(
      'ERR_INVALID_PATH',
      `'${path}' would give every connection its own private database; use a file (a temporary one for scratch data)`,
    )
  }
  if (path.includes('\0')) throw new ResqliteError('ERR_INVALID_PATH', 'the path contains a NUL character')
  return path
}

export function checkOptions(options: unknown): EngineOptions {
  if (typeof options !== 'object' || options === null) throw typeError(`options must be an object, got ${describe(options)}`)
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw typeError(`unknown option '${key}'`, 'ERR_INVALID_ARG_VALUE')
  }
  const o = options as OpenOptions
  return {
    readers: integerOption('readers', o.readers, 1, 64, Math.min(4, Math.max(2, os.availableParallelism() - 1))),
    busyTimeout: integerOption('busyTimeout', o.busyTimeout, 0, 2 ** 31 - 1, 5000),
    readonly: booleanOption('readonly', o.readonly),
    safeIntegers: booleanOption('safeIntegers', o.safeIntegers),
  }
}

/** `watchExternalChanges` as an interval in ms, or 0 for off. */
export function checkWatchOption(options: OpenOptions): number {
  const watch = options.watchExternalChanges
  if (watch === undefined || watch === false) return 0
  if (watch === true) return 1000
  if (typeof watch !== 'object' || watch === null) {
    throw typeError(`watchExternalChanges must be a boolean or { interval }, got ${describe(watch)}`)
  }
  for (const key of Object.keys(watch)) {
    if (key !== 'interval') throw typeError(`unknown watchExternalChanges option '${key}'`, 'ERR_INVALID_ARG_VALUE')
  }
  return integerOption('watchExternalChanges.interval', watch.interval, 10, 2 ** 31 - 1, 1000)
}

export function checkTransactionOptions(options: unknown): { mode: string; signal: AbortSignal | undefined } {
  if (options === undefined) return { mode: 'deferred', signal: undefined }
  if (typeof options !== 'object' || options === null) throw typeError(`options must be an object, got ${describe(options)}`)
  for (const key of Object.keys(options)) {
    if (!TRANSACTION_OPTION_KEYS.has(key)) throw typeError(`unknown transaction option '${key}'`, 'ERR_INVALID_ARG_VALUE')
  }
  const o = options as TransactionOptions
  return { mode: checkMode(o.mode), signal: checkQueryOptions({ signal: o.signal }) }
}

function integerOption(name: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value)) throw typeError(`${name} must be an integer, got ${describe(value)}`)
  if (value < min || value > max) throw rangeError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

function booleanOption(name: string, value: unknown): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw typeError(`${name} must be a boolean, got ${describe(value)}`)
  return value
}
