// The native engine's interface (crates/engine/src/napi/database.rs). Internal: not exported.
import * as path from 'node:path'

/** Completion kinds (crates/engine/src/handoff/mailbox.rs). Each completion is [id, kind, a, b]: numbers
 * in the mailbox's slots, other values taken in order from the array handed over. */
export enum Done {
  Rows = 0, // a: ArrayBuffer (see decode.ts), b: text block
  Json = 1, // a: ArrayBuffer holding the JSON text
  Changes = 2, // a: changes, b: lastInsertRowid (numbers, in the slot)
  Void = 3,
  Error = 4, // a: code, b: message
  RowsPart = 5, // as Rows, for one part of a large result: more follow
  ErrorNoTransaction = 6, // as Error; the writer is outside any transaction after it
  StreamRows = 7, // as Rows, for the live query whose id is given: its new rows
  StreamError = 8, // as Error, for the live query whose id is given: a run failed
  ChangesBig = 9, // a: changes (in the slot), b: lastInsertRowid beyond 2^53, as a bigint
}

/** The mailbox's layout: i32 words [queued, polling, count, writes in flight], then 256 slots
 * of four f64 each (mailbox.rs). */
export enum Mailbox {
  Queued = 0,
  Polling = 1,
  Count = 2,
  WritesInFlight = 3, // kept by JS
  Words = 4,
  Bytes = 16 + 256 * 4 * 8,
}

/** What a job does; reads run on the readers, or on the writer inside a transaction. */
export enum JobKind {
  Execute = 0,
  Batch = 1,
  Select = 2,
  SelectOne = 3,
  SelectBytes = 4,
  Control = 5, // the library's BEGIN/SAVEPOINT/RELEASE/COMMIT/ROLLBACK: the only jobs that open or end a transaction
  DataVersion = 6, // has another process committed? If so, every live query re-runs
  Panic = 99, // test hook: a job that panics inside the engine
}

/** What `readInline` returns (crates/engine/src/napi/inline_calls.rs). */
export const enum Inline {
  Done = 0, // the handler was called with the result or the error
  Moved = 1, // it ran past its budget, or its result is too large: send it to a reader
  Skipped = 2, // its statement overran recently and it did not run: send it to a reader
  Unavailable = 3, // no inline connection now (closing, or a rekey in progress)
}

/** The first argument of `readInline`'s handler: what the others hold. */
export const enum InlineResult {
  Rows = 0, // (names joined by NUL, columns, rows, ...cells)
  Error = 1, // (code, message)
  Json = 2, // (Buffer)
}

/** The calls made once per job, written against N-API directly (crates/engine/src/napi/job_calls.rs).
 * They use their NativeDatabase without holding it: keep them only next to it. */
export interface JobCalls {
  read(id: number, kind: JobKind, sql: string, params: Uint8Array, paramsLength: number, cancellable: boolean): void
  /** Runs a read on the JS thread within `budgetMicros` (crates/engine/src/inline.rs): on the
   * JS thread's connection, or, `inTransaction`, on the idle writer's inside its transaction. */
  readInline(
    kind: JobKind,
    sql: string,
    params: Uint8Array,
    paramsLength: number,
    budgetMicros: number,
    handler: unknown,
    inTransaction: boolean,
  ): Inline
  write(
    id: number,
    kind: JobKind,
    sql: string,
    params: Uint8Array,
    paramsLength: number,
    inTransaction: boolean,
  ): boolean
  /** Pending jobs keep the process alive. */
  ref(): void
  /** Nothing pending keeps the process alive any more. */
  unref(): void
}

export interface NativeDatabase {
  jobCalls(): JobCalls
  streamStart(id: number, sql: string, params: Uint8Array, paramsLength: number): void
  streamStop(id: number): void
  /** [queries, requeries, skippedByColumns, unchangedSuppressed, fallbackAll, pageCacheBytes, schemaBytes, statementBytes,
   * groups committed, writes in them] */
  diagnostics(): number[]
  cancel(id: number): void
  /** Queues a rekey on the writer; an empty key decrypts. */
  rekey(id: number, cipher: string, cipherParams: string[], cipherValues: number[], key: Uint8Array): boolean
  interruptWriter(): void
  close(id: number): void
  release(): void
}

interface Binding {
  NativeDatabase: new (
    path: string,
    readers: number,
    busyTimeout: number,
    readonly: boolean,
    safeIntegers: boolean,
    onComplete: (batch?: true, ...objects: unknown[]) => void,
    mailbox: ArrayBuffer, // see Mailbox and Engine.#mailbox
    openId: number,
    cipher: string, // '' with an empty key: no encryption
    cipherParams: string[],
    cipherValues: number[],
    key: Uint8Array,
    attach: string[], // [schema name, path, …]
    inline: boolean, // open a read-only connection for reads on the JS thread
  ) => NativeDatabase
}

// dist/cjs/native.js → <package>/native/resqlite.node
export const binding: Binding = require(path.join(__dirname, '..', '..', 'native', 'resqlite.node'))
