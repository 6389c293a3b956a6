// Packs a call's parameters into one reused scratch buffer (the layout is documented in
// crates/engine/src/sqlite/params.rs). One buffer per call, no per-value objects crossing to native
// (the Dart original's experiment 109, whose journal is not in this repo: packing text and blob
// bytes into its one reused buffer, one allocation per call instead of one per value, took 10–16 %
// off bind-heavy inserts). Every value is type-checked here; nothing is sent, bound or run when
// one is wrong.
import { describe, rangeError, typeError } from './errors'
import { ParamSet, ParamTag } from './native'

/** A value to bind to a parameter (docs/values-and-errors.md "Values"): `null` → NULL; a
 * `number` → INTEGER when integral and within 64 bits, else REAL (`NaN` is refused: SQLite would
 * store NULL); a `bigint` → INTEGER (outside 64 bits, a `RangeError`); a `string` → TEXT (a lone
 * surrogate is refused); an `ArrayBufferView` (`Uint8Array`, `Buffer`, …) → BLOB of its bytes.
 * `undefined`, booleans, `Date`s and other objects are a `TypeError`: nothing is bound and
 * nothing runs. */
export type Value = null | number | bigint | string | ArrayBufferView

/** A statement's parameters: an array binds by position (`?`, `?NNN`, or named parameters in
 * their order), a plain object by name (`{ id: 1 }` binds `:id`, `@id` or `$id`). Every
 * parameter of the statement must be given (`ERR_PARAMETER_COUNT`, `ERR_PARAMETER_NAME`). */
export type Params = readonly Value[] | { readonly [name: string]: Value }

const INITIAL = 64 * 1024
/** A scratch buffer grown past this for one large call is dropped afterwards. */
const KEEP_MAX = 1024 * 1024
const TWO_32 = 4294967296
const TWO_63 = 2 ** 63
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

let buf = Buffer.allocUnsafe(INITIAL)
let view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
let pos = 0
/** Packings under way: more than one when a parameter's getter (or a Proxy's trap) calls the
 * library while its own call is being packed. A nested packing writes to a buffer of its own,
 * so neither overwrites the other; the common path only counts. */
let depth = 0

function ensure(extra: number): void {
  if (pos + extra <= buf.length) return
  const next = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + extra))
  buf.copy(next, 0, 0, pos)
  buf = next
  view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
}

/** The packed bytes of the last `encode*` call: valid until the next call. */
export interface Packed {
  bytes: Buffer
  length: number
}

function finish(): Packed {
  const packed = { bytes: buf, length: pos }
  if (buf.length > KEEP_MAX) {
    // The native side copies the bytes synchronously; the next call starts small again.
    buf = Buffer.allocUnsafe(INITIAL)
    view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  }
  return packed
}

/** A private copy of packed bytes, for a call that waits its turn before it is sent (the
 * scratch buffer is reused by the next call). */
export function copyPacked(packed: Packed): Packed {
  return { bytes: Buffer.from(packed.bytes.subarray(0, packed.length)), length: packed.length }
}

/** No parameters, for the SQL the library sends itself (BEGIN, SAVEPOINT, COMMIT, …). */
export const NO_PARAMS: Packed = { bytes: Buffer.from([ParamSet.None]), length: 1 }

/** NO_PARAMS, as a packer (arguments.ts `prepareCall`) for calls that take none. */
export function noParams(): Packed {
  return NO_PARAMS
}

/** Packs one call's parameters. `undefined` and `[]` mean none. */
export function encodeParams(params: unknown): Packed {
  if (depth > 0) return nested(params, false)
  depth++
  try {
    pos = 0
    writeSet(params, 'params')
    return finish()
  } finally {
    depth--
  }
}

/** Packs executeBatch's parameter sets: u32 count, then each set. */
export function encodeBatch(paramSets: unknown): Packed {
  if (!Array.isArray(paramSets)) {
    throw typeError(`paramSets must be an array of parameter arrays or objects, got ${describe(paramSets)}`)
  }
  if (depth > 0) return nested(paramSets, true)
  depth++
  try {
    pos = 0
    // The length is read once: the sets written are the count written, even if a getter of
    // one of them (or a Proxy) changes the array meanwhile.
    const count = paramSets.length
    ensure(4)
    view.setUint32(0, count, true)
    pos = 4
    for (let i = 0; i < count; i++) writeSet(paramSets[i], `paramSets[${i}]`)
    return finish()
  } finally {
    depth--
  }
}

/** A packing started while another is under way (a getter of its parameters called the
 * library): packed into a fresh buffer, the outer packing's state put back afterwards. */
function nested(params: unknown, batch: boolean): Packed {
  const outer = { buf, view, pos }
  buf = Buffer.allocUnsafe(INITIAL)
  view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  depth--
  try {
    return batch ? encodeBatch(params) : encodeParams(params)
  } finally {
    depth++
    ;({ buf, view, pos } = outer)
  }
}

function writeSet(params: unknown, what: string): void {
  if (params === undefined) {
    ensure(1)
    buf[pos++] = ParamSet.None
    return
  }
  if (Array.isArray(params)) {
    const count = params.length // read once, as encodeBatch's
    ensure(5)
    buf[pos] = ParamSet.Positional
    view.setUint32(pos + 1, count, true)
    pos += 5
    for (let i = 0; i < count; i++) writeValue(params[i], i + 1)
    return
  }
  if (isPlainObject(params)) {
    const keys = Object.keys(params)
    ensure(5)
    buf[pos] = ParamSet.Named
    view.setUint32(pos + 1, keys.length, true)
    pos += 5
    for (const key of keys) {
      writeText(key)
      writeValue((params as Record<string, unknown>)[key], key)
    }
    return
  }
  throw typeError(`${what} must be an array (positional) or a plain object (named), got ${describe(params)}`)
}

function writeText(s: string): void {
  ensure(4 + s.length * 3)
  const n = s.length <= SHORT_TEXT ? writeShort(s, pos + 4) : buf.write(s, pos + 4, 'utf8')
  view.setUint32(pos, n, true)
  pos += 4 + n
}

/** Texts up to this long are copied by `writeShort`: `Buffer.write` is a native call, about 1,300
 * instructions for a short string, several times the loop's (experiments/077). */
const SHORT_TEXT = 64

/** Writes `s` at `at` as UTF-8, its length in bytes: ASCII (its char codes are its UTF-8 bytes)
 * by a loop, anything else as `writeText` does. */
function writeShort(s: string, at: number): number {
  const n = s.length
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c > 0x7f) return buf.write(s, at, 'utf8')
    buf[at + i] = c
  }
  return n
}

/** What an error calls parameter `which`: a position (1-based) or a name. Made only on error:
 * formatting it for every value was measurable on small writes. */
function parameterName(which: number | string): string {
  return typeof which === 'number' ? `parameter ${which}` : `parameter '${which}'`
}

function writeValue(v: unknown, which: number | string): void {
  switch (typeof v) {
    case 'number':
      ensure(9)
      if (Number.isInteger(v) && v >= -TWO_63 && v < TWO_63 && !Object.is(v, -0)) {
        buf[pos] = ParamTag.Int64
        const hi = Math.floor(v / TWO_32)
        view.setUint32(pos + 1, v - hi * TWO_32, true)
        view.setInt32(pos + 5, hi, true)
      } else if (Number.isNaN(v)) {
        throw typeError(
          `${parameterName(which)} is NaN, which SQLite would store as NULL; pass null for NULL`,
          'ERR_INVALID_ARG_VALUE',
        )
      } else {
        buf[pos] = ParamTag.Float64
        view.setFloat64(pos + 1, v, true)
      }
      pos += 9
      return
    case 'string':
      if (!v.isWellFormed()) {
        throw typeError(
          `${parameterName(which)} is a string with a lone surrogate, which is not valid Unicode and cannot be stored as UTF-8 text`,
          'ERR_INVALID_ARG_VALUE',
        )
      }
      ensure(1)
      buf[pos++] = ParamTag.Text
      writeText(v)
      return
    case 'bigint':
      if (v < INT64_MIN || v > INT64_MAX)
        throw rangeError(`${parameterName(which)} is a bigint outside the 64-bit integer range`)
      ensure(9)
      buf[pos] = ParamTag.Int64
      view.setBigInt64(pos + 1, v, true)
      pos += 9
      return
    case 'object':
      if (v === null) {
        ensure(1)
        buf[pos++] = ParamTag.Null
        return
      }
      if (ArrayBuffer.isView(v)) {
        if (isDetached(v)) {
          throw typeError(
            `${parameterName(which)} is a view of a detached (transferred) ArrayBuffer: it has no bytes to bind`,
            'ERR_INVALID_ARG_VALUE',
          )
        }
        const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
        ensure(5 + bytes.length)
        buf[pos] = ParamTag.Blob
        view.setUint32(pos + 1, bytes.length, true)
        buf.set(bytes, pos + 5)
        pos += 5 + bytes.length
        return
      }
  }
  throw typeError(
    v === undefined
      ? `${parameterName(which)} is undefined; pass null for NULL`
      : `${parameterName(which)} has an unsupported type (${describe(v)}); use null, a number, a bigint, a string or a Uint8Array`,
  )
}

/** A view of a transferred ArrayBuffer: V8 refuses to make another view of it. (Node 20 has no
 * `ArrayBuffer.prototype.detached`; a detached buffer's byteLength reads 0.) */
function isDetached(v: ArrayBufferView): boolean {
  if (v.buffer.byteLength !== 0) return false
  try {
    new Uint8Array(v.buffer, 0, 0)
    return false
  } catch {
    return true
  }
}

function isPlainObject(v: unknown): v is object {
  if (typeof v !== 'object' || v === null) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}
