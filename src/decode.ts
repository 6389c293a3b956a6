// Turns the engine's binary result (layout in crates/engine/src/row_encoder.rs) into row
// objects. This is the JS-thread cost of `select`, so it is built for speed:
// - one generated function per column-name set builds each row as an object literal, so every
//   row of a shape shares one hidden class (what made better-sqlite3 fast; see experiments/);
// - cells are read through typed-array views over one buffer, text is sliced out of one
//   string made once per result;
// - large results decode in chunks that yield to the event loop between them.
import { rangeError } from './errors'

export type Row = Record<string, unknown>
type MakeRow = (cell: (k: number) => unknown, k: number) => Row

const TAG_NULL = 0
const TAG_NUMBER = 1
const TAG_TEXT = 2
const TAG_BLOB = 3

/** Results up to this many cells decode at once (≈0.3 ms); larger ones decode in chunks of
 * CHUNK_CELLS with an event-loop turn between them (experiments/005). */
const SYNC_MAX_CELLS = 32768
const CHUNK_CELLS = 8192
const rowMakers = new Map<string, { names: string[]; make: MakeRow }>()
const MAX_ROW_MAKERS = 512

// The result being decoded. Module-level so `cell` stays one monomorphic function; set again
// at the start of every chunk, as chunks of different results may interleave.
let T: Uint8Array
let F: Float64Array
let U: Uint32Array
let I: BigInt64Array
let B: Uint8Array
let S: string
let names: string[]
let safe: boolean

function cell(k: number): unknown {
  const tag = T[k]
  if (tag === TAG_NUMBER) return F[k]
  if (tag === TAG_TEXT) {
    const start = U[2 * k]
    return S.slice(start, start + U[2 * k + 1])
  }
  if (tag === TAG_NULL) return null
  if (tag === TAG_BLOB) return Buffer.copyBytesFrom(B, U[2 * k], U[2 * k + 1])
  return int64(k)
}

function int64(k: number): bigint {
  if (safe) return I[k]
  // The value itself stays out of the message: results may hold personal data too.
  throw rangeError(
    `column '${names[k % names.length]}' holds an integer outside ±(2^53−1), where JavaScript numbers are exact; ` +
      `open the database with safeIntegers: true to read integers as bigint`,
  )
}

function rowMaker(text: string, nameLens: Uint32Array): { names: string[]; make: MakeRow } {
  // The key holds every name's length as well as the names: 'a'+'bc' and 'ab'+'c' differ.
  let key = ''
  let total = 0
  for (let i = 0; i < nameLens.length; i++) {
    key += String.fromCharCode(nameLens[i] & 0xffff, nameLens[i] >>> 16)
    total += nameLens[i]
  }
  key += text.slice(0, total)
  let maker = rowMakers.get(key)
  if (maker === undefined) {
    const list: string[] = []
    let at = 0
    for (let i = 0; i < nameLens.length; i++) {
      list.push(text.slice(at, at + nameLens[i]))
      at += nameLens[i]
    }
    // `__proto__` as a literal key would set the prototype; a computed key defines a property.
    const props = list.map((n, i) => `${n === '__proto__' ? '["__proto__"]' : JSON.stringify(n)}: c(k + ${i})`)
    const make = new Function('c', 'k', `return {${props.join(', ')}}`) as MakeRow
    if (rowMakers.size >= MAX_ROW_MAKERS) rowMakers.clear()
    maker = { names: list, make }
    rowMakers.set(key, maker)
  }
  return maker
}

/** A decoded-on-demand view of one engine result. */
export class RowsResult {
  readonly rows: number
  private readonly cols: number
  private readonly make: MakeRow
  private readonly names: string[]
  private readonly tags: Uint8Array
  private readonly f64: Float64Array
  private readonly u32: Uint32Array
  private readonly i64: BigInt64Array
  private readonly blobs: Uint8Array
  private readonly text: string

  constructor(buffer: ArrayBuffer, text: string, private readonly safeIntegers: boolean) {
    const header = new Uint32Array(buffer, 0, 6)
    const [rows, cols, tagsOffset, slotsOffset, blobOffset] = header
    this.rows = rows
    this.cols = cols
    const maker = rowMaker(text, new Uint32Array(buffer, 24, cols))
    this.make = maker.make
    this.names = maker.names
    const cells = rows * cols
    this.tags = new Uint8Array(buffer, tagsOffset, cells)
    this.f64 = new Float64Array(buffer, slotsOffset, cells)
    this.u32 = new Uint32Array(buffer, slotsOffset, cells * 2)
    this.i64 = new BigInt64Array(buffer, slotsOffset, cells)
    this.blobs = new Uint8Array(buffer, blobOffset)
    this.text = text
  }

  /** Decodes rows [from, to) onto `out`. */
  decodeInto(out: Row[], from: number, to: number): void {
    T = this.tags
    F = this.f64
    U = this.u32
    I = this.i64
    B = this.blobs
    S = this.text
    names = this.names
    safe = this.safeIntegers
    const make = this.make
    const cols = this.cols
    for (let r = from, k = from * cols; r < to; r++, k += cols) out.push(make(cell, k))
  }

  /** All rows now when the result is small; otherwise in chunks between event-loop turns. */
  decode(): Row[] | Promise<Row[]> {
    const out: Row[] = []
    if (this.rows * this.cols <= SYNC_MAX_CELLS) {
      this.decodeInto(out, 0, this.rows)
      return out
    }
    const chunkRows = Math.max(1, Math.floor(CHUNK_CELLS / Math.max(1, this.cols)))
    return new Promise((resolve, reject) => {
      let from = 0
      const step = () => {
        try {
          const to = Math.min(this.rows, from + chunkRows)
          this.decodeInto(out, from, to)
          from = to
          if (from < this.rows) setImmediate(step)
          else resolve(out)
        } catch (e) {
          reject(e)
        }
      }
      step()
    })
  }

  first(): Row | undefined {
    if (this.rows === 0) return undefined
    const out: Row[] = []
    this.decodeInto(out, 0, 1)
    return out[0]
  }
}
