// Turns the engine's binary result (layout in crates/engine/src/encode/rows.rs) into row
// objects. This is the JS-thread cost of `select`, so it is built for speed:
// - one generated function per column-name set builds each row as an object literal, so every
//   row of a shape shares one hidden class (what made better-sqlite3 fast; see experiments/);
//   where a column holds one kind of cell in a result (numbers, NULLs or texts), a variant
//   made for its columns' kinds reads them without asking `cell` (experiments/041);
// - cells are read through typed-array views over one buffer; each TEXT cell is its own string,
//   made natively a range of cells at a time (`texts`), so a value a user keeps keeps only itself
//   alive — slices of one string per result kept all of it (experiments/033);
// - a large result's first parts arrive while the reader still steps the rest, and
//   RowsAssembler decodes it at most ~0.25 ms per event-loop turn (experiments/009).
import { ResqliteError, rangeError } from './errors'

/** One decoded row: a plain object with a property per column, in column order. The public
 * type, with what each SQLite type becomes, is `Row` in types.ts (an alias of this one). */
export type Row = Record<string, unknown>
/** Makes one row from cell k on: an object, or with `rowMode: 'array'` an array of the cells;
 * `numbers` are the result's slots, read straight for a column of numbers, and `text` reads a
 * column of texts. */
type MakeRow = (cell: (k: number) => unknown, k: number, numbers: Float64Array, text: (k: number) => string) => Row

/** A cell's type in the result's tags (`TAG_*` in crates/engine/src/protocol.rs, whose
 * names and values test/protocol.test.mjs checks against these). */
export const enum Tag {
  Null = 0,
  Number = 1, // the slot holds an f64
  Text = 2, // the slot holds the text's start and length in the arena
  Blob = 3, // the slot holds the bytes' start and length in the arena
  Int64 = 4, // the slot holds an i64 (beyond ±(2^53−1), or any integer with safeIntegers)
  ShortText = 5, // as Text: ASCII of at most 12 characters, sliced from one string (`texts`)
}

/** A column-name set's row makers: the general one, and variants by column kinds. */
interface RowMakers {
  names: string[]
  make: MakeRow
  /** By `kinds`: a character per column, `n` numbers only, `z` NULLs only, `t` texts only,
   * `c` anything. */
  variants: Map<string, MakeRow>
}
const rowMakers = new Map<string, RowMakers>()
const MAX_ROW_MAKERS = 512
/** A result (part) of this many rows or more is made by a variant for its column kinds. */
const VARIANT_ROWS = 8
/** The tag bits of TEXT cells. */
const TEXT_TAGS = (1 << Tag.Text) | (1 << Tag.ShortText)

/** Makes the TEXT cells of a result's cells [from, to) into strings and calls `collect` with
 * them (crates/engine/src/napi/texts.rs): first the short cells' texts joined in one string,
 * then every other cell's own string. */
export type Texts = (buffer: ArrayBuffer, from: number, to: number, collect: Collect) => string[]
type Collect = (...texts: string[]) => string[]
const collect: Collect = (...texts) => texts
/** Cells per `texts` call: its strings are one call's arguments, on the JS thread's stack. */
const TEXT_CHUNK_CELLS = 4096
const NO_TEXTS: string[] = []
const NO_TAGS = new Uint8Array(0)
const NO_NUMBERS = new Float64Array(0)
const NO_WORDS = new Uint32Array(0)

// The result being decoded. Module-level so `cell` stays one monomorphic function; set again
// by every appendTo call, as slices of different results may interleave. The row maker reads
// a row's cells in column order, so the TEXT cells come in the order of X (after X[0], the
// short texts, read from XS on: their lengths are in U, the slots as u32).
let T: Uint8Array = NO_TAGS
let F: Float64Array = NO_NUMBERS
let U: Uint32Array = NO_WORDS
let X = NO_TEXTS
let XI = 0
let XS = 0
let R: RowsResult | undefined

function cell(k: number): unknown {
  const tag = T[k]
  if (tag === Tag.Number) return F[k]
  if (tag === Tag.ShortText || tag === Tag.Text) return text(k)
  if (tag === Tag.Null) return null
  if (tag === Tag.Blob) return R!.blob(k)
  return R!.int64(k) // Tag.Int64
}

/** Cell k, a TEXT cell. */
function text(k: number): string {
  if (T[k] === Tag.ShortText) {
    // Under 13 characters V8 copies a slice (SlicedString::kMinLength): it keeps X[0] nothing.
    const start = XS
    XS += U[2 * k + 1]!
    return X[0]!.slice(start, XS)
  }
  return X[XI++]!
}

/** The row makers for a result's column names, joined by NUL (a name cannot hold one). */
function makersFor(names: string, cols: number, arrays: boolean): RowMakers {
  const key = arrays ? `\0${names}` : names // a leading NUL keeps array makers apart
  let makers = rowMakers.get(key)
  if (makers === undefined) {
    const list = cols === 0 ? [] : names.split('\0')
    if (rowMakers.size >= MAX_ROW_MAKERS) rowMakers.clear()
    makers = { names: list, make: makeRowFunction(list, '', arrays), variants: new Map() }
    rowMakers.set(key, makers)
  }
  return makers
}

/** The variant of `makers` for column `kinds` (see RowMakers). */
function variant(makers: RowMakers, kinds: string, arrays: boolean): MakeRow {
  let make = makers.variants.get(kinds)
  if (make === undefined) {
    make = makeRowFunction(makers.names, kinds, arrays)
    makers.variants.set(kinds, make)
  }
  return make
}

/** A row maker: the general one (`kinds` empty), or a variant. */
function makeRowFunction(names: string[], kinds: string, arrays: boolean): MakeRow {
  const sources: Record<string, (i: number) => string> = {
    n: (i) => `f[k + ${i}]`,
    z: () => 'null',
    t: (i) => `t(k + ${i})`,
  }
  const source = (i: number) => sources[kinds[i]!]?.(i) ?? `c(k + ${i})`
  return new Function('c', 'k', 'f', 't', `return ${rowLiteral(names, source, arrays)}`) as MakeRow
}

/** A character per column of a result (part) whose tags are `tags`, each column's tag bits
 * after its cells' tags (crates/engine/src/encode/rows.rs): `n`, `z`, `t` or `c` (RowMakers). */
function columnKinds(tags: Uint8Array, cells: number, cols: number): string {
  let kinds = ''
  for (let c = 0; c < cols; c++) {
    const seen = tags[cells + c]!
    kinds += seen === 1 << Tag.Number ? 'n' : seen === 1 << Tag.Null ? 'z' : (seen & ~TEXT_TAGS) === 0 ? 't' : 'c'
  }
  return kinds
}

/** The source of one row's literal: an object with a property per column name, or (`arrays`)
 * an array with an element per column, so duplicate names stay apart. `cell(i)` is the source
 * of column i's value. Shared by this decoder and the JS thread's reads (inline.ts). */
export function rowLiteral(names: string[], cell: (i: number) => string, arrays: boolean): string {
  if (arrays) return `[${names.map((_, i) => cell(i)).join(', ')}]`
  // `__proto__` as a literal key would set the prototype; a computed key defines a property.
  const props = names.map((n, i) => `${n === '__proto__' ? '["__proto__"]' : JSON.stringify(n)}: ${cell(i)}`)
  return `{${props.join(', ')}}`
}

/** `select`'s rows as arrays and their column names, in column order (`rowMode: 'array'`). */
export interface ArrayRows {
  columns: string[]
  rows: unknown[][]
}

/** `selectOne`'s row as an array (or undefined) and the column names (`rowMode: 'array'`). */
export interface ArrayRow {
  columns: string[]
  row: unknown[] | undefined
}

/** What a read in `rowMode: 'array'` resolves with: `rows` (or, for `selectOne`, the `row`)
 * beside the column names. */
export function arrayResult(columns: string[], value: unknown, one: boolean): ArrayRows | ArrayRow {
  return one ? { columns, row: value as unknown[] | undefined } : { columns, rows: value as unknown[][] }
}

/** One engine result (or result part), ready to decode. It makes three views of the buffer
 * (every view costs, and a small result's decode is mostly that cost); blob and 64-bit
 * integer cells, rare, make their own when read. Layout: crates/engine/src/encode/rows.rs. */
export class RowsResult {
  readonly rows: number
  private readonly cols: number
  private readonly make: MakeRow
  private readonly names: string[]
  private readonly tags: Uint8Array
  private readonly f64: Float64Array
  /** TEXT cells in the result. */
  private readonly textCells: number

  constructor(
    private readonly buffer: ArrayBuffer,
    names: string,
    private readonly safeIntegers: boolean,
    private readonly texts: Texts,
    arrays = false,
  ) {
    // Header: rows, cols, tags offset, slots offset, arena offset, TEXT cells.
    const header = new Uint32Array(buffer, 0, 6)
    const rows = header[0]!
    const cols = header[1]!
    this.rows = rows
    this.cols = cols
    const cells = rows * cols
    // The cells' tags, then a column's tag bits per column.
    this.tags = new Uint8Array(buffer, header[2], cells + cols)
    const makers = makersFor(names, cols, arrays)
    this.make = rows < VARIANT_ROWS ? makers.make : variant(makers, columnKinds(this.tags, cells, cols), arrays)
    this.names = makers.names
    this.f64 = new Float64Array(buffer, header[3], cells)
    this.textCells = header[5]!
  }

  /** Cell k as a Buffer (a copy: it does not keep the result's memory alive). */
  blob(k: number): Buffer {
    const header = new Uint32Array(this.buffer, 0, 6)
    const slot = new Uint32Array(this.buffer, this.f64.byteOffset + 8 * k, 2)
    return Buffer.copyBytesFrom(new Uint8Array(this.buffer, header[4]! + slot[0]!, slot[1]))
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
    R = this
    const make = this.make
    const cols = this.cols
    // Stores at the end, not push(): push was left a call per row (experiments/041).
    let n = out.length
    try {
      if (this.textCells === 0) {
        for (let r = from, k = from * cols; r < to; r++, k += cols) out[n++] = make(cell, k, F, text)
        return
      }
      U = new Uint32Array(this.buffer, this.f64.byteOffset, 2 * this.f64.length)
      const chunk = Math.max(1, Math.floor(TEXT_CHUNK_CELLS / cols))
      for (let r = from, k = from * cols; r < to; ) {
        const end = Math.min(to, r + chunk)
        X = texts(this.texts, this.buffer, k, end * cols, collect)
        XI = 1
        XS = 0
        for (; r < end; r++, k += cols) out[n++] = make(cell, k, F, text)
      }
    } finally {
      // Nothing of this result stays reachable from here once its rows are made.
      T = NO_TAGS
      F = NO_NUMBERS
      U = NO_WORDS
      X = NO_TEXTS
      R = undefined
    }
  }

  /** The column names, in order (duplicates included). */
  get columns(): string[] {
    return this.names.slice()
  }

  first(): Row | undefined {
    const out: Row[] = []
    this.appendTo(out, 0, Math.min(1, this.rows))
    return out[0]
  }

  /** Every row, decoded at once. */
  all(): Row[] {
    const out: Row[] = []
    this.appendTo(out)
    return out
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
/** Rows per array an assembler fills before it starts the next: 64 KB of pointers, an
 * ordinary young object. One array for all would grow past V8's large-object size, and each
 * growth would leave its old backing store for a collection to sweep (experiments/069). */
const CHUNK_ROWS = 8192
/** Rows joined in one go at the end: about 0.2 ms. */
const JOIN_ROWS = 32768
/** Results up to this size decode at once, without an assembler. */
export const DIRECT_DECODE_CELLS = 16384

/** Decodes a large result: parts arriving while the reader still steps, and a last part that
 * may be large. Rows decode while the current event-loop turn has budget left; the rest
 * waits, in order, for later turns, so no turn decodes for much longer than the budget. */
export class RowsAssembler {
  /** Full chunks of CHUNK_ROWS rows, joined once when the last part has decoded. */
  readonly #chunks: Row[][] = []
  /** The chunk being filled. */
  #rows: Row[] = []
  #queue: { part: RowsResult; next: number }[] = []
  #scheduled = false
  #complete = false
  #failed = false
  /** Called in a later turn once every part taken so far has decoded (`afterDecoding`). */
  #drained: (() => void) | undefined

  constructor(
    private readonly resolve: (rows: Row[]) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Calls `next` in the turn after the one that decodes the last rows taken so far: a sliced
   * read steps its next slice in a turn of its own (experiments/066). */
  afterDecoding(next: () => void): void {
    if (this.#queue.length === 0) setImmediate(next)
    else this.#drained = next
  }

  /** Takes the next part (`last` for the final one); `turnStart` is when this event-loop
   * turn started its work on the result (decoding, or stepping the part too). */
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
          const room = CHUNK_ROWS - this.#rows.length
          const to = Math.min(head.part.rows, head.next + head.part.sliceRows, head.next + room)
          head.part.appendTo(this.#rows, head.next, to)
          if (this.#rows.length >= CHUNK_ROWS) {
            this.#chunks.push(this.#rows)
            this.#rows = []
          }
          head.next = to
        }
        this.#queue.shift()
      }
    } catch (error) {
      this.#failed = true
      this.#queue = []
      this.reject(error)
    }
    // Failed too: a sliced read steps its statement to the end all the same, since until then
    // the statement holds the JS thread's connection.
    const drained = this.#drained
    if (drained !== undefined) {
      this.#drained = undefined
      setImmediate(drained)
    }
    if (this.#complete && !this.#failed) this.#join(turnStart)
  }

  /** Resolves with the chunks joined: at once when that fits in the turn, else a few chunks a
   * turn into an array of the result's length (about 5 ns a row either way, experiments/069). */
  #join(turnStart: number): void {
    if (this.#chunks.length === 0) {
      this.resolve(this.#rows)
      return
    }
    const chunks = this.#chunks
    chunks.push(this.#rows)
    const total = (chunks.length - 1) * CHUNK_ROWS + this.#rows.length
    if (total <= JOIN_ROWS) {
      this.resolve(([] as Row[]).concat(...chunks))
      return
    }
    const all = new Array<Row>(total)
    let next = 0
    const copy = (start: number): void => {
      for (; next < chunks.length; next++) {
        if (performance.now() - start >= TURN_BUDGET_MS) {
          setImmediate(() => copy(performance.now()))
          return
        }
        const chunk = chunks[next]!
        const at = next * CHUNK_ROWS
        for (let i = 0; i < chunk.length; i++) all[at + i] = chunk[i]!
      }
      this.resolve(all)
    }
    copy(turnStart)
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

/** The engine's `texts` call (napi/texts.rs); a value V8 cannot hold as a string, which it
 * throws with the code `ERR_RESULT_TOO_LARGE`, is the result's fault: a ResqliteError. */
function texts(call: Texts, buffer: ArrayBuffer, from: number, to: number, collect: Collect): string[] {
  try {
    return call(buffer, from, to, collect)
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'ERR_RESULT_TOO_LARGE') throw error
    throw new ResqliteError(
      'ERR_RESULT_TOO_LARGE',
      'a TEXT value of the result is longer than a JavaScript string can hold; read it in parts with substr(), or as a BLOB',
    )
  }
}
