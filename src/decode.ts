// Turns the engine's binary result (layout in crates/engine/src/encode/rows.rs) into row
// objects. This is the JS-thread cost of `select`, so it is built for speed:
// - one generated function per column-name set builds each row as an object literal, so every
//   row of a shape shares one hidden class (what made better-sqlite3 fast; see experiments/);
// - cells are read through typed-array views over one buffer, text is sliced out of one
//   string made once per result part;
// - a large result's first parts arrive while the reader still steps the rest, and
//   RowsAssembler decodes it at most ~0.25 ms per event-loop turn (experiments/009).
import { rangeError } from './errors'

/** One decoded row: a plain object with a property per column, in column order. The public
 * type, with what each SQLite type becomes, is `Row` in types.ts (an alias of this one). */
export type Row = Record<string, unknown>
type MakeRow = (cell: (k: number) => unknown, k: number) => Row

/** A cell's type in the result's tags (`TAG_*` in crates/engine/src/napi/protocol.rs, whose
 * names and values test/protocol.test.mjs checks against these). */
export const enum Tag {
  Null = 0,
  Number = 1, // the slot holds an f64
  Text = 2, // the slot holds the text's start and length in the text block
  Blob = 3, // the slot holds the bytes' start and length in the blob arena
  Int64 = 4, // the slot holds an i64 (beyond ±(2^53−1), or any integer with safeIntegers)
}

const rowMakers = new Map<string, { names: string[]; make: MakeRow }>()
const MAX_ROW_MAKERS = 512

// The result being decoded. Module-level so `cell` stays one monomorphic function; set again
// by every appendTo call, as slices of different results may interleave.
let T: Uint8Array
let F: Float64Array
let U: Uint32Array
let UB: number
let S: string
let R: RowsResult

function cell(k: number): unknown {
  const tag = T[k]
  if (tag === Tag.Number) return F[k]
  if (tag === Tag.Text) {
    const start = U[UB + 2 * k]
    return S.slice(start, start + U[UB + 2 * k + 1])
  }
  if (tag === Tag.Null) return null
  if (tag === Tag.Blob) return R.blob(k)
  return R.int64(k) // Tag.Int64
}

/** Where the column names' lengths start in a result's u32 header (layout: RowsResult). */
const NAME_LENGTHS_AT = 6

/** The row maker for a result's column names; `header` holds their lengths from NAME_LENGTHS_AT. */
function rowMaker(text: string, header: Uint32Array, cols: number): { names: string[]; make: MakeRow } {
  // The key holds every name's length as well as the names: 'a'+'bc' and 'ab'+'c' differ.
  let key = ''
  let total = 0
  for (let i = NAME_LENGTHS_AT; i < NAME_LENGTHS_AT + cols; i++) {
    key += String.fromCharCode(header[i]! & 0xffff, header[i]! >>> 16)
    total += header[i]!
  }
  key += text.slice(0, total)
  let maker = rowMakers.get(key)
  if (maker === undefined) {
    const list: string[] = []
    let at = 0
    for (let i = NAME_LENGTHS_AT; i < NAME_LENGTHS_AT + cols; i++) {
      list.push(text.slice(at, at + header[i]!))
      at += header[i]!
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

/** One engine result (or result part), ready to decode. It makes three views of the buffer
 * (every view costs, and a small result's decode is mostly that cost); blob and 64-bit
 * integer cells, rare, make their own when read. */
export class RowsResult {
  readonly rows: number
  private readonly cols: number
  private readonly make: MakeRow
  private readonly names: string[]
  private readonly tags: Uint8Array
  private readonly f64: Float64Array
  /** The whole buffer as u32: the header, the name lengths and the text/blob slots. */
  private readonly u32: Uint32Array
  /** Where the slots start in `u32`. */
  private readonly slotsBase: number
  private readonly blobOffset: number
  private readonly text: string

  constructor(
    private readonly buffer: ArrayBuffer,
    text: string,
    private readonly safeIntegers: boolean,
  ) {
    // Header (encode/rows.rs): rows, cols, tags offset, slots offset, blob offset, two-byte
    // text flag; then the column names' lengths.
    const u32 = new Uint32Array(buffer, 0, buffer.byteLength >>> 2)
    const rows = u32[0]!
    const cols = u32[1]!
    this.rows = rows
    this.cols = cols
    const maker = rowMaker(text, u32, cols)
    this.make = maker.make
    this.names = maker.names
    const cells = rows * cols
    this.tags = new Uint8Array(buffer, u32[2], cells)
    this.f64 = new Float64Array(buffer, u32[3], cells)
    this.u32 = u32
    this.slotsBase = u32[3]! >>> 2
    this.blobOffset = u32[4]!
    this.text = text
  }

  /** Cell k as a Buffer (a copy: it does not keep the result's memory alive). */
  blob(k: number): Buffer {
    const at = this.slotsBase + 2 * k
    return Buffer.copyBytesFrom(new Uint8Array(this.buffer, this.blobOffset + this.u32[at]!, this.u32[at + 1]))
  }

  /** Cell k, an integer beyond ±(2^53−1): a bigint with safeIntegers, else an error. */
  int64(k: number): bigint {
    if (this.safeIntegers) return new BigInt64Array(this.buffer, this.f64.byteOffset + 8 * k, 1)[0]!
    // The value itself stays out of the message: results may hold personal data too.
    throw rangeError(
      `column '${this.names[k % this.names.length]}' holds an integer outside ±(2^53−1), where JavaScript numbers are exact; ` +
        `open the database with safeIntegers: true to read integers as bigint`,
    )
  }

  /** Appends rows [from, to) of this result (part) to `out`. */
  appendTo(out: Row[], from = 0, to = this.rows): void {
    T = this.tags
    F = this.f64
    U = this.u32
    UB = this.slotsBase
    S = this.text
    R = this
    const make = this.make
    const cols = this.cols
    for (let r = from, k = from * cols; r < to; r++, k += cols) out.push(make(cell, k))
  }

  first(): Row | undefined {
    const out: Row[] = []
    this.appendTo(out, 0, Math.min(1, this.rows))
    return out[0]
  }

  get cells(): number {
    return this.rows * this.cols
  }

  /** Rows that make about SLICE_CELLS cells: the unit decoded between budget checks. */
  get sliceRows(): number {
    return Math.max(1, Math.floor(SLICE_CELLS / Math.max(1, this.cols)))
  }
}

/** JS-thread time one event-loop turn may spend decoding one result (experiments/009). */
const TURN_BUDGET_MS = 0.25
/** Decoding between two looks at the clock. */
const SLICE_CELLS = 2048
/** Results up to this size decode at once, without an assembler. */
export const DIRECT_DECODE_CELLS = 16384

/** Decodes a large result: parts arriving while the reader still steps, and a last part that
 * may be large. Rows decode while the current event-loop turn has budget left; the rest
 * waits, in order, for later turns, so no turn decodes for much longer than the budget. */
export class RowsAssembler {
  readonly #rows: Row[] = []
  #queue: { part: RowsResult; next: number }[] = []
  #scheduled = false
  #complete = false
  #failed = false

  constructor(
    private readonly resolve: (rows: Row[]) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Takes the next part (`last` for the final one); `turnStart` is when this event-loop
   * turn started decoding. */
  add(part: RowsResult, last: boolean, turnStart: number): void {
    if (this.#failed) return
    this.#complete = last
    this.#queue.push({ part, next: 0 })
    if (this.#queue.length === 1) this.#run(turnStart)
  }

  /** Decodes queued rows until the budget is spent; schedules the rest for the next turn. */
  #run(turnStart: number): void {
    try {
      while (this.#queue.length > 0) {
        const head = this.#queue[0]
        while (head.next < head.part.rows) {
          if (performance.now() - turnStart >= TURN_BUDGET_MS) {
            this.#schedule()
            return
          }
          const to = Math.min(head.part.rows, head.next + head.part.sliceRows)
          head.part.appendTo(this.#rows, head.next, to)
          head.next = to
        }
        this.#queue.shift()
      }
    } catch (error) {
      this.#failed = true
      this.#queue = []
      this.reject(error)
      return
    }
    if (this.#complete) this.resolve(this.#rows)
  }

  #schedule(): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#run(performance.now())
    })
  }
}
