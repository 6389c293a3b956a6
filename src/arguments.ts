// Argument checks for the public API: each throws a TypeError / RangeError / ResqliteError
// that names the argument and, for a wrong type, its type (never its value).
import * as os from 'node:os'

import { CIPHERS, DEFAULT_CIPHER } from './cipher'
import type { CheckedCipher, Encryption, EngineOptions } from './engine'
import { abortError, describe, ResqliteError, rangeError, typeError } from './errors'
import { callInFunctionError, inFunction } from './functions'
import { DEFAULT_INLINE_BUDGET } from './js-thread/placement'
import type { NativeExtension } from './native'
import { copyPacked, type Packed } from './params'
import type {
  BackupOptions,
  Extension,
  IterateOptions,
  OpenOptions,
  QueryOptions,
  RekeyOptions,
  TransactionMode,
  TransactionOptions,
} from './types'

const OPTION_KEYS = new Set([
  'readers',
  'busyTimeout',
  'readonly',
  'replica',
  'safeIntegers',
  'watchExternalChanges',
  'encryptionKey',
  'cipher',
  'attach',
  'inlineBudget',
  'extensions',
  'checkpoints',
  'invalidUtf8',
  'idleTimeout',
  'vfs',
  'synchronous',
])
/** Milliseconds a reader connection stays open unused: reopening one costs about 0.25 ms, or
 * an encrypted database's key derivation (tens of milliseconds), so an encrypted database's
 * readers stay open (NEVER) unless asked (experiments/057). */
const DEFAULT_IDLE_TIMEOUT = 10_000
/** `idleTimeout: Infinity`, as the engine reads it (crates/engine/src/napi/database.rs). */
const NEVER = 2 ** 32 - 1
/** The default reader count, read once: os.availableParallelism() reads cgroup files each call,
 * which was a tenth of opening's JS-thread time (experiments/058). */
let defaultReaders: number | undefined
const readersByDefault = (): number => (defaultReaders ??= Math.min(4, Math.max(2, os.availableParallelism() - 1)))
const REKEY_OPTION_KEYS = new Set(['cipher'])
const BACKUP_OPTION_KEYS = new Set(['signal', 'progress'])
const TRANSACTION_OPTION_KEYS = new Set(['mode', 'signal'])
const MODES = new Set(['deferred', 'immediate', 'exclusive'])

/** Which options a statement call takes: a read's (`signal`, `rowMode`), selectBytes' (`signal`:
 * its JSON always holds objects), execute's (`rowMode`: a write runs to its end) or
 * executeBatch's (none: it runs to its end and returns no rows). */
export type CallKind = 'read' | 'bytes' | 'write' | 'batch'

/** The option keys each kind of call takes, how its errors name the call, and why it refuses
 * the query options it does not take (checked in this order, before unknown keys). */
const CALL_OPTIONS: Record<
  CallKind | 'iterate',
  { keys: ReadonlySet<string>; takes: string; refused?: Record<string, string> }
> = {
  read: { keys: new Set(['signal', 'rowMode']), takes: 'select and selectOne take signal and rowMode' },
  bytes: {
    keys: new Set(['signal']),
    takes: 'selectBytes takes signal',
    refused: { rowMode: 'selectBytes takes no rowMode: its JSON always holds objects' },
  },
  write: {
    keys: new Set(['rowMode']),
    takes: 'execute takes rowMode',
    refused: { signal: 'execute takes no signal: a write runs to its end' },
  },
  batch: {
    keys: new Set(),
    takes: 'executeBatch takes no options',
    refused: {
      signal: 'executeBatch takes no signal: a write runs to its end',
      rowMode: 'executeBatch takes no rowMode: it returns no rows',
    },
  },
  iterate: { keys: new Set(['signal', 'rowMode', 'pageRows']), takes: 'iterate takes signal, rowMode and pageRows' },
}

/** Options are a plain object (`{ … }`): an array, a class instance (an `AbortSignal` passed
 * where `{ signal }` belongs) or a primitive would have every key ignored. */
export function checkOptionsObject(options: unknown, what = 'options'): asserts options is object {
  if (typeof options !== 'object' || options === null || Array.isArray(options) || !isPlainObject(options)) {
    throw typeError(`${what} must be an object ({ … }), got ${describe(options)}`)
  }
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v)
  if (proto === null || proto === Object.prototype) return true
  // An object literal from another realm (node:vm).
  return Object.getPrototypeOf(proto) === null && proto.constructor?.name === 'Object'
}

/** Every per-query option name: one a call does not take may still be given as `undefined`
 * (code that passes `{ signal: options.signal }` along), as if not given. */
const QUERY_OPTION_KEYS = CALL_OPTIONS.iterate.keys

/** Refuses keys a call does not take (a query option of another method, saying why; a typo),
 * naming the key. */
function checkOptionKeys(options: object, call: CallKind | 'iterate'): void {
  const { keys, takes, refused } = CALL_OPTIONS[call]
  for (const key in refused) {
    if ((options as Record<string, unknown>)[key] !== undefined) throw typeError(refused[key]!, 'ERR_INVALID_ARG_VALUE')
  }
  for (const key of Object.keys(options)) {
    if (keys.has(key)) continue
    if (QUERY_OPTION_KEYS.has(key) && (options as Record<string, unknown>)[key] === undefined) continue
    throw typeError(`unknown option '${key}': ${takes}`, 'ERR_INVALID_ARG_VALUE')
  }
}

/** An unknown option's error: `what` names it, and the options `method` takes follow, as
 * `checkOptionKeys` lists a statement call's. */
function unknownOption(what: string, method: string, keys: ReadonlySet<string>): TypeError {
  const list = [...keys]
  const takes = list.length === 1 ? list[0] : `${list.slice(0, -1).join(', ')} and ${list.at(-1)}`
  return typeError(`${what}: ${method} takes ${takes}`, 'ERR_INVALID_ARG_VALUE')
}

/** A statement call's checked arguments: its packed parameters, signal and row mode. */
export interface PreparedCall {
  packed: Packed
  signal: AbortSignal | undefined
  arrays: boolean
}

/** The checks every statement call makes, in order: the SQL, the options, the parameters
 * (`params`, packed by `pack`: a function of the module, not a closure made per call), then a
 * signal already aborted. */
export function prepareCall(
  sql: unknown,
  options: unknown,
  pack: (params: unknown) => Packed,
  params: unknown,
  call: CallKind = 'read',
): PreparedCall {
  if (inFunction()) throw callInFunctionError()
  checkSql(sql)
  const signal = checkQueryOptions(options)
  if (options !== undefined) checkOptionKeys(options as object, call)
  const arrays = checkRowMode(options)
  const packed = pack(params)
  if (signal?.aborted) throw abortError(signal, sql)
  return { packed, signal, arrays }
}

/** `options.rowMode` (options already checked to be an object or undefined): true for
 * `'array'`. */
function checkRowMode(options: unknown): boolean {
  const rowMode = (options as QueryOptions | undefined)?.rowMode
  if (rowMode === undefined || rowMode === 'object') return false
  if (rowMode === 'array') return true
  throw typeError(`options.rowMode must be 'object' or 'array'${notString(rowMode)}`, 'ERR_INVALID_ARG_VALUE')
}

/** Rows per page of an iteration, by default (types.ts IterateOptions). */
const PAGE_ROWS = 1_000

/** An iteration's arguments: its parameters (copied: the query starts later), signal and page size. */
export function prepareIterate(
  sql: unknown,
  options: unknown,
  pack: () => Packed,
): { packed: Packed; signal: AbortSignal | undefined; pageRows: number; arrays: boolean } {
  if (inFunction()) throw callInFunctionError()
  checkSql(sql)
  const signal = checkQueryOptions(options)
  if (options !== undefined) checkOptionKeys(options as object, 'iterate')
  const arrays = checkRowMode(options)
  const pageRows = integerOption(
    'options.pageRows',
    (options as IterateOptions | undefined)?.pageRows,
    1,
    1_000_000,
    PAGE_ROWS,
  )
  return { packed: copyPacked(pack()), signal, pageRows, arrays }
}

export function checkBody(body: unknown): void {
  if (typeof body !== 'function') throw typeError(`the transaction body must be a function, got ${describe(body)}`)
}

export function checkMode(mode: unknown): TransactionMode {
  if (mode === undefined) return 'deferred'
  if (typeof mode !== 'string' || !MODES.has(mode)) {
    throw typeError(`mode must be 'deferred', 'immediate' or 'exclusive'${notString(mode)}`, 'ERR_INVALID_ARG_VALUE')
  }
  return mode as TransactionMode
}

export function checkNestedOptions(options: unknown): void {
  if (options === undefined) return
  checkOptionsObject(options)
  for (const key of Object.keys(options)) {
    throw typeError(
      `a nested transaction takes no '${key}' option: mode and signal belong to the outermost transaction`,
      'ERR_INVALID_ARG_VALUE',
    )
  }
}

export function checkSql(sql: unknown): asserts sql is string {
  if (typeof sql !== 'string') throw typeError(`sql must be a string, got ${describe(sql)}`)
  // UTF-8 has no lone surrogate: the engine would replace it with U+FFFD and run other SQL
  // than the caller's, so it is refused here, as in a parameter (params.ts).
  if (!sql.isWellFormed()) {
    throw typeError(
      'sql holds a lone surrogate, which is not valid Unicode and cannot be passed to SQLite as UTF-8',
      'ERR_INVALID_ARG_VALUE',
    )
  }
}

export function checkQueryOptions(options: unknown): AbortSignal | undefined {
  if (options === undefined) return undefined
  checkOptionsObject(options)
  const signal = (options as QueryOptions).signal
  if (signal === undefined) return undefined
  if (!(signal instanceof AbortSignal))
    throw typeError(`options.signal must be an AbortSignal, got ${describe(signal)}`)
  return signal
}

export function checkPath(path: unknown, options: unknown): string {
  if (typeof path !== 'string') throw typeError(`path must be a string, got ${describe(path)}`)
  const o = options as OpenOptions | undefined
  if (path === ':memory:' && (o?.readonly === true || o?.replica === true)) {
    throw new ResqliteError('ERR_INVALID_PATH', `':memory:' starts empty: it cannot be opened readonly`)
  }
  if (path === '') {
    throw new ResqliteError(
      'ERR_INVALID_PATH',
      `'' would give every connection its own private database; use a file, or ':memory:'`,
    )
  }
  if (path.includes('\0')) throw new ResqliteError('ERR_INVALID_PATH', 'the path contains a NUL character')
  return path
}

export function checkOptions(options: unknown): EngineOptions {
  checkOptionsObject(options)
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw unknownOption(`unknown option '${key}'`, 'open', OPTION_KEYS)
  }
  const o = options as OpenOptions
  return {
    readers: integerOption('readers', o.readers, 1, 64, readersByDefault()),
    busyTimeout: integerOption('busyTimeout', o.busyTimeout, 0, 2 ** 31 - 1, 5000),
    readonly: booleanOption('readonly', o.readonly) || checkReplica(o),
    safeIntegers: booleanOption('safeIntegers', o.safeIntegers),
    encryption: checkEncryption(o.encryptionKey, o.cipher),
    attach: checkAttach(o.attach),
    inlineBudgetMicros: Math.round(numberOption('inlineBudget', o.inlineBudget, 0, 10, DEFAULT_INLINE_BUDGET) * 1000),
    extensions: checkExtensions(o.extensions),
    externalCheckpoints: checkCheckpoints(o.checkpoints),
    replaceInvalidUtf8: checkInvalidUtf8(o.invalidUtf8),
    idleTimeout: checkIdleTimeout(o),
    vfs: checkVfs(o.vfs, o.encryptionKey),
    synchronous: checkSynchronous(o.synchronous),
  }
}

/** `synchronous`: 'normal' (the default) or 'full' (docs/api.md "Durability"). */
function checkSynchronous(value: unknown): 'normal' | 'full' {
  if (value === undefined || value === 'normal') return 'normal'
  if (value === 'full') return 'full'
  throw typeError(`synchronous must be 'normal' or 'full'${notString(value)}`, 'ERR_INVALID_ARG_VALUE')
}

/** `vfs`: a VFS name (whether one is registered by it is the engine's check, at open). */
function checkVfs(vfs: unknown, key: unknown): string | undefined {
  if (vfs === undefined) return undefined
  if (typeof vfs !== 'string') throw typeError(`vfs must be a VFS name, got ${describe(vfs)}`)
  if (vfs === '' || vfs.includes('\0'))
    throw typeError('vfs is empty or holds a NUL character', 'ERR_INVALID_ARG_VALUE')
  if (key !== undefined) {
    throw typeError(
      "vfs cannot be combined with encryptionKey: the encryption lives in SQLite3 Multiple Ciphers' default VFS",
      'ERR_INVALID_ARG_VALUE',
    )
  }
  return vfs
}

/** `Database.loadExtension`'s argument: a library path, or `{ path, entryPoint }`. */
export function checkExtension(extension: unknown): NativeExtension {
  return checkOneExtension(extension, 'extension')
}

/** `extensions`: library paths, or `{ path, entryPoint }`; loaded in order on every connection. */
function checkExtensions(extensions: unknown): NativeExtension[] {
  if (extensions === undefined) return []
  if (!Array.isArray(extensions)) throw typeError(`extensions must be an array, got ${describe(extensions)}`)
  return extensions.map((e, i) => checkOneExtension(e, `extensions[${i}]`))
}

/** One extension, named `what` in errors: a library path, or `{ path, entryPoint }`. */
function checkOneExtension(e: unknown, what: string): NativeExtension {
  if (typeof e === 'string') e = { path: e }
  if (typeof e !== 'object' || e === null || Array.isArray(e)) {
    throw typeError(`${what} must be a path or { path, entryPoint }, got ${describe(e)}`)
  }
  for (const key of Object.keys(e)) {
    if (key !== 'path' && key !== 'entryPoint')
      throw typeError(`unknown ${what} option '${key}'`, 'ERR_INVALID_ARG_VALUE')
  }
  const { path, entryPoint } = e as Extension
  if (typeof path !== 'string') throw typeError(`${what}.path must be a string, got ${describe(path)}`)
  if (path === '' || path.includes('\0'))
    throw typeError(`${what}.path is empty or holds a NUL character`, 'ERR_INVALID_ARG_VALUE')
  if (entryPoint !== undefined && (typeof entryPoint !== 'string' || entryPoint === '' || entryPoint.includes('\0')))
    throw typeError(`${what}.entryPoint must be a non-empty function name, got ${describe(entryPoint)}`)
  return { path, entryPoint }
}

/** `invalidUtf8`: 'error' (the default) or 'replace'; true for 'replace'. The value is not
 * echoed: only its type is named. */
function checkInvalidUtf8(value: unknown): boolean {
  if (value === undefined || value === 'error') return false
  if (value === 'replace') return true
  if (typeof value === 'string') throw typeError(`invalidUtf8 must be 'error' or 'replace'`, 'ERR_INVALID_ARG_VALUE')
  throw typeError(`invalidUtf8 must be 'error' or 'replace', got ${describe(value)}`)
}

/** `checkpoints`: 'auto' (the default) or 'external'; true for 'external'. */
function checkCheckpoints(value: unknown): boolean {
  if (value === undefined || value === 'auto') return false
  if (value === 'external') return true
  throw typeError(`checkpoints must be 'auto' or 'external'${notString(value)}`, 'ERR_INVALID_ARG_VALUE')
}

/** `attach`: schema name → file path. The names SQLite reserves and paths that would give each
 * connection its own private database are refused. */
function checkAttach(attach: unknown): [string, string][] {
  if (attach === undefined) return []
  if (typeof attach !== 'object' || attach === null || Array.isArray(attach) || !isPlainObject(attach)) {
    throw typeError(`attach must be an object of schema name → file path, got ${describe(attach)}`)
  }
  return Object.entries(attach).map(([name, file]): [string, string] => {
    if (name === '' || name.includes('\0') || ['main', 'temp'].includes(name.toLowerCase())) {
      throw typeError(
        "attach: a schema name cannot be 'main' or 'temp' (any case), empty, or hold a NUL character",
        'ERR_INVALID_ARG_VALUE',
      )
    }
    if (typeof file !== 'string') throw typeError(`attach.${name} must be a file path, got ${describe(file)}`)
    if (file === '' || file === ':memory:' || file.includes('\0')) {
      throw new ResqliteError(
        'ERR_INVALID_PATH',
        `attach.${name} is not a database file path ('', ':memory:' and paths holding a NUL character are refused)`,
      )
    }
    return [name, file]
  })
}

/** `replica: true`: a read replica (docs/replication.md), opened readonly. `readonly: false`
 * beside it is a contradiction, refused. */
export function checkReplica(options: OpenOptions): boolean {
  const replica = booleanOption('replica', options.replica)
  if (replica && options.readonly === false) {
    throw typeError(
      'replica: true opens the database read-only; readonly: false contradicts it',
      'ERR_INVALID_ARG_VALUE',
    )
  }
  return replica
}

/** How often a replica checks for the replication engine's commits unless told otherwise: a
 * small job every 10 ms while a live query exists (experiments/052). */
export const REPLICA_WATCH_INTERVAL = 10

/** `watchExternalChanges` as an interval in ms, or 0 for off. */
export function checkWatchOption(options: OpenOptions): number {
  const watch = options.watchExternalChanges
  if (watch === undefined) return checkReplica(options) ? REPLICA_WATCH_INTERVAL : 0
  if (watch === false) return 0
  if (watch === true) return 1000
  if (typeof watch !== 'object' || watch === null || Array.isArray(watch) || !isPlainObject(watch)) {
    throw typeError(`watchExternalChanges must be a boolean or { interval }, got ${describe(watch)}`)
  }
  for (const key of Object.keys(watch)) {
    if (key !== 'interval') throw typeError(`unknown watchExternalChanges option '${key}'`, 'ERR_INVALID_ARG_VALUE')
  }
  return integerOption('watchExternalChanges.interval', watch.interval, 10, 2 ** 31 - 1, 1000)
}

/** The key and cipher of `Database.open`; undefined when the database is not encrypted. */
function checkEncryption(key: unknown, cipher: unknown): Encryption | undefined {
  if (key === undefined) {
    if (cipher !== undefined) throw typeError('cipher is given without encryptionKey', 'ERR_INVALID_ARG_VALUE')
    return undefined
  }
  const checked = checkCipher(cipher, 'cipher')
  return { cipher: checked, key: encodeKey(key, checked, 'encryptionKey') }
}

/** `db.rekey(newKey, options)`: undefined decrypts. Without a cipher the database keeps
 * `current` (the default cipher when it is plaintext now). */
export function checkRekey(
  newKey: unknown,
  options: unknown,
  current: CheckedCipher | undefined,
): Encryption | undefined {
  if (options !== undefined) {
    checkOptionsObject(options)
    for (const key of Object.keys(options)) {
      if (!REKEY_OPTION_KEYS.has(key)) throw unknownOption(`unknown rekey option '${key}'`, 'rekey', REKEY_OPTION_KEYS)
    }
  }
  const cipher = (options as RekeyOptions | undefined)?.cipher
  if (newKey === null) {
    if (cipher !== undefined)
      throw typeError(
        'a cipher was given to decrypt (newKey null): give a key to change the cipher',
        'ERR_INVALID_ARG_VALUE',
      )
    return undefined
  }
  if (newKey === undefined) throw typeError('rekey needs a new key, or null to decrypt')
  const checked = cipher === undefined && current ? current : checkCipher(cipher, 'options.cipher')
  return { cipher: checked, key: encodeKey(newKey, checked, 'newKey') }
}

/** A cipher name or a cipher object, checked against cipher.ts: unknown ciphers, unknown
 * parameters and out-of-range values are errors here, before any file is opened. */
function checkCipher(cipher: unknown, what: string): CheckedCipher {
  let name: unknown = cipher ?? DEFAULT_CIPHER
  let given: Record<string, unknown> = {}
  if (typeof cipher === 'object' && cipher !== null && !Array.isArray(cipher)) {
    given = cipher as Record<string, unknown>
    name = given.name
  } else if (cipher !== undefined && typeof cipher !== 'string') {
    throw typeError(`${what} must be a cipher name or a cipher object, got ${describe(cipher)}`)
  }
  if (typeof name !== 'string' || !Object.hasOwn(CIPHERS, name)) {
    const label = typeof cipher === 'object' && cipher !== null ? `${what}.name` : what
    throw typeError(
      `unknown ${label}${notString(name)}: one of ${Object.keys(CIPHERS).join(', ')}`,
      'ERR_INVALID_ARG_VALUE',
    )
  }
  const spec = CIPHERS[name]
  for (const key of Object.keys(given)) {
    if (key !== 'name' && !Object.hasOwn(spec.params, key)) {
      const known = Object.keys(spec.params)
      throw typeError(
        `cipher '${name}' has no parameter '${key}'${known.length ? ` (it takes ${known.join(', ')})` : ''}`,
        'ERR_INVALID_ARG_VALUE',
      )
    }
  }
  const checked: CheckedCipher = { name, names: [], values: [] }
  for (const [param, p] of Object.entries(spec.params)) {
    const value = given[param]
    if (value === undefined) continue
    const label = `${what}.${param}`
    let n: number
    if (p.kind === 'bool') {
      if (typeof value !== 'boolean') throw typeError(`${label} must be a boolean, got ${describe(value)}`)
      n = value ? 1 : 0
    } else if (p.kind === 'enum') {
      if (typeof value !== 'string' || !Object.hasOwn(p.values, value)) {
        throw typeError(
          `${label} must be one of ${Object.keys(p.values)
            .map((v) => `'${v}'`)
            .join(', ')}`,
          'ERR_INVALID_ARG_VALUE',
        )
      }
      n = p.values[value]
    } else {
      n = integerOption(label, value, p.min, p.max, 0)
      if (p.pageSize && n !== 0 && (n < 512 || (n & (n - 1)) !== 0))
        throw rangeError(`${label} must be 0 or a power of two from 512 to ${p.max}`)
    }
    checked.names.push(p.native)
    checked.values.push(n)
  }
  return checked
}

const RAW_PREFIX = new TextEncoder().encode('raw:')
const SALT_LENGTH = 16

/** The key bytes for the engine: a passphrase's UTF-8, or `raw:` + raw key bytes (sqlite3mc's
 * raw-key form). Messages name the key's type and length, never its content. */
function encodeKey(key: unknown, cipher: CheckedCipher, what: string): Uint8Array {
  if (typeof key === 'string') {
    if (key.length === 0) throw typeError(`${what} must not be empty`, 'ERR_INVALID_ARG_VALUE')
    if (key.startsWith('raw:')) {
      throw typeError(
        `${what}: a passphrase may not start with 'raw:' (SQLite3 Multiple Ciphers would read it as raw key bytes); pass a raw key as a Uint8Array`,
        'ERR_INVALID_ARG_VALUE',
      )
    }
    const plaintextHeader = cipher.names.indexOf('plaintext_header_size')
    if (plaintextHeader >= 0 && cipher.values[plaintextHeader] > 0) {
      throw typeError(
        `${what}: plaintextHeaderSize needs raw key bytes (a Uint8Array): the salt a passphrase needs is kept where the header now is`,
        'ERR_INVALID_ARG_VALUE',
      )
    }
    return new TextEncoder().encode(key)
  }
  if (key instanceof Uint8Array) {
    const spec = CIPHERS[cipher.name]
    if (!spec.rawKeyLength)
      throw typeError(
        `${what}: cipher '${cipher.name}' takes a passphrase string, not raw key bytes`,
        'ERR_INVALID_ARG_VALUE',
      )
    const params: Record<string, number> = {}
    for (const [param, p] of Object.entries(spec.params)) {
      const i = cipher.names.indexOf(p.native)
      if (i >= 0) params[param] = cipher.values[i]
    }
    const n = spec.rawKeyLength(params)
    if (key.length !== n && key.length !== n + SALT_LENGTH) {
      throw rangeError(
        `${what}: cipher '${cipher.name}' takes a raw key of ${n} bytes (or ${n + SALT_LENGTH} with the salt), got ${key.length} bytes`,
      )
    }
    const out = new Uint8Array(RAW_PREFIX.length + key.length)
    out.set(RAW_PREFIX)
    out.set(key, RAW_PREFIX.length)
    return out
  }
  throw typeError(`${what} must be a string or a Uint8Array, got ${describe(key)}`)
}

/** `db.backup(destination, options)`: a new file's path, and its options. */
export function checkBackup(destination: unknown, options: unknown): BackupOptions {
  if (typeof destination !== 'string') throw typeError(`destination must be a string, got ${describe(destination)}`)
  if (destination === '' || destination === ':memory:' || destination.includes('\0')) {
    throw new ResqliteError(
      'ERR_INVALID_PATH',
      "backup: destination is not a file path ('', ':memory:' and paths holding a NUL character are refused)",
    )
  }
  if (options === undefined) return {}
  checkOptionsObject(options)
  for (const key of Object.keys(options)) {
    if (!BACKUP_OPTION_KEYS.has(key))
      throw unknownOption(`unknown backup option '${key}'`, 'backup', BACKUP_OPTION_KEYS)
  }
  const { progress } = options as BackupOptions
  if (progress !== undefined && typeof progress !== 'function')
    throw typeError(`options.progress must be a function, got ${describe(progress)}`)
  return { progress, signal: checkQueryOptions(options) }
}

export function checkTransactionOptions(options: unknown): { mode: string; signal: AbortSignal | undefined } {
  if (options === undefined) return { mode: 'deferred', signal: undefined }
  checkOptionsObject(options)
  for (const key of Object.keys(options)) {
    if (!TRANSACTION_OPTION_KEYS.has(key))
      throw unknownOption(`unknown transaction option '${key}'`, 'transaction', TRANSACTION_OPTION_KEYS)
  }
  const o = options as TransactionOptions
  return { mode: checkMode(o.mode), signal: checkQueryOptions({ signal: o.signal }) }
}

function checkIdleTimeout(o: OpenOptions): number {
  if (o.idleTimeout === Number.POSITIVE_INFINITY) return NEVER
  const encrypted = o.encryptionKey !== undefined && o.encryptionKey.length > 0
  return integerOption('idleTimeout', o.idleTimeout, 0, 2 ** 31 - 1, encrypted ? NEVER : DEFAULT_IDLE_TIMEOUT)
}

function integerOption(name: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw typeError(`${name} must be an integer, got ${describe(value)}`)
  if (value < min || value > max) throw rangeError(`${name} must be between ${min} and ${max}`)
  return value
}

function numberOption(name: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || Number.isNaN(value))
    throw typeError(`${name} must be a number, got ${describe(value)}`)
  if (value < min || value > max) throw rangeError(`${name} must be between ${min} and ${max}`)
  return value
}

/** For an enumerated option given a wrong value: its type when it is not a string; a wrong
 * string is not echoed (it may be a secret typed in the wrong place), the message lists the
 * allowed ones. */
function notString(value: unknown): string {
  return typeof value === 'string' ? '' : `, got ${describe(value)}`
}

function booleanOption(name: string, value: unknown): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw typeError(`${name} must be a boolean, got ${describe(value)}`)
  return value
}
