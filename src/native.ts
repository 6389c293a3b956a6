// The native engine's interface (crates/engine/src/napi/database.rs). Internal: not exported.
import type { Texts } from './decode'
import { loadBinding } from './load-binding'
import type { ProcessDiagnostics } from './types'

// The wire protocol's numbers are defined once, in crates/engine/src/protocol.rs. These
// const enums copy them so that tsc inlines them into the hot paths (nothing is looked up at
// run time); test/protocol.test.mjs checks every name and value against the engine's.

/** Completion kinds (`DONE_*`). Each completion is [id, kind, a, b]: numbers in a mailbox slot;
 * the values that are not numbers are the completion handler's arguments, in completion order. */
export const enum Done {
  Rows = 0, // a: ArrayBuffer (see decode.ts), b: the column names, joined by NUL
  Json = 1, // a: ArrayBuffer holding the JSON text
  Changes = 2, // a: changes, b: lastInsertRowid (numbers, in the slot)
  Void = 3,
  Error = 4, // a: code, b: message
  RowsPart = 5, // as Rows, for one part of a large result: more follow
  ErrorNoTransaction = 6, // as Error; the writer is outside any transaction after it
  LiveRows = 7, // as Rows, for the live query whose id is given: its new rows
  LiveError = 8, // as Error, for the live query whose id is given: a run failed
  ChangesBig = 9, // a: changes (in the slot), b: lastInsertRowid beyond 2^53, as a bigint
  Progress = 10, // a backup's step: a: pages remaining, b: pages in all (numbers); the job goes on
  Page = 11, // as Rows, for a page of an iteration with more to come; its last page is a Rows
  Returned = 12, // a write's RETURNING rows: objects as Rows; a: changes, b: lastInsertRowid (NaN: a bigint object follows)
  Stepped = 13, // a paused backup's step ended, after its Progress: a: sqlite3_backup_step's code, OK or DONE
  Queued = 14, // a traced job's wait in its queue (JobKind.Traced): a: microseconds; its result follows
}

/** The steps of an iteration (`NativeDatabase.iterate`). */
export const enum IterateStep {
  Start = 0,
  Next = 1,
  End = 2,
}

/** The mailbox's layout (`MAILBOX_*`): `Words` i32 words [queued, polling, count, writes in
 * flight], then `Slots` completions of four f64 each (handoff/mailbox.rs). */
export const enum Mailbox {
  Queued = 0,
  Polling = 1,
  Count = 2,
  WritesInFlight = 3, // kept by JS
  WritesRunning = 4, // kept by the engine: writer jobs queued and not yet finished
  Words = 6,
  Slots = 256,
  Bytes = Words * 4 + Slots * 4 * 8,
}

/** What a job does (`JOB_KIND_*`); reads run on the readers, or on the writer inside a
 * transaction. The engine refuses a kind it does not know. */
export const enum JobKind {
  Execute = 0,
  Batch = 1,
  Select = 2,
  SelectOne = 3,
  SelectBytes = 4,
  Control = 5, // the library's BEGIN/SAVEPOINT/RELEASE/COMMIT/ROLLBACK: the only jobs that open or end a transaction
  DataVersion = 6, // has another process committed? If so, every live query re-runs
  Serialize = 7, // db.serialize(): the database's image (Done.Json), on a reader
  Columns = 8, // db.columns(): the statement's columns as JSON (Done.Json), prepared and never run
  Describe = 9, // db.prepare(): {"reads", "columns"} as JSON (Done.Json), prepared and never run
  Panic = 99, // test hook: a job that panics inside the engine
  Traced = 256, // or-ed into a kind sent to a thread: the call is traced, the engine reports its wait (Done.Queued)
}

/** What `readInline` and `writeInline` return (crates/engine/src/napi/inline_calls.rs). */
export const enum Inline {
  Done = 0, // the handler was called with the result or the error
  Moved = 1, // it ran past its budget, or its result is too large: send it to a reader
  Skipped = 2, // it must run on a thread (it overran recently; a write that is not bounded)
  Unavailable = 3, // no inline connection now (closing, a rekey in progress, or the writer busy)
  Numbers = 4, // the result is in the shared numbers: readInline's cells, numbers or NULL (NaN), after their count (the names are the last ones); writeInline's [changes, lastInsertRowid, checkpointDue] of a write, [checkpointDue] of a COMMIT
}

/** Which connection `readInline` runs a read on (crates/engine/src/protocol.rs). */
export const enum ReadOn {
  Own = 0, // the JS thread's own read-only connection
  Transaction = 1, // the writer's, inside the caller's transaction
  IdleWriter = 2, // the writer's when it is idle outside any transaction (warm cache; experiments/040), else Own
}

/** The first argument of `readInline`'s and `writeInline`'s handler: what the others hold. */
export const enum InlineResult {
  Rows = 0, // (names joined by NUL, or null for the ones given last time; columns, rows, ...cells)
  Error = 1, // (code, message, and for a write whether it ended the transaction)
  Json = 2, // (Buffer)
  Changes = 3, // (changes, lastInsertRowid: a bigint beyond ±(2^53−1), whether a checkpoint is due)
  Committed = 4, // (whether a checkpoint is due)
}

/** A parameter set's first byte in the packed parameters (src/params.ts). */
export const enum ParamSet {
  None = 0,
  Positional = 1, // u32 count, then each value
  Named = 2, // u32 count, then each value after its name (u32 length, UTF-8)
}

/** A packed parameter's type, the byte before its payload. */
export const enum ParamTag {
  Null = 0,
  Int64 = 1, // 8 bytes, little-endian
  Float64 = 2, // 8 bytes, little-endian
  Text = 3, // u32 length, UTF-8
  Blob = 4, // u32 length, bytes
}

/** The calls made once per job, written against N-API directly (crates/engine/src/napi/job_calls.rs).
 * They use their NativeDatabase without holding it: keep them only next to it. */
export interface JobCalls {
  read(id: number, kind: JobKind, sql: string, params: Uint8Array, paramsLength: number, cancellable: boolean): void
  /** Runs a cheap transaction-control statement (a deferred BEGIN, SAVEPOINT, a nested RELEASE)
   * on the idle writer's connection from the JS thread: `Done`, `Moved` (it failed: send it to
   * the writer) or `Unavailable` (the writer is busy). */
  controlInline(sql: string, inTransaction: boolean): Inline
  /** Opens a write group's transaction on the idle writer's connection (crates/engine/src/js_thread/runs.rs
   * `begin_group`): `Done`, or `Unavailable` (the writer is busy, or the group's COMMIT could
   * not run on the JS thread; not asked with `readsOnly`, a group no write joins), or `Moved`
   * (it failed). */
  beginGroupInline(readsOnly: boolean): Inline
  /** Runs a read on the JS thread within `budgetMicros` (crates/engine/src/js_thread/runs.rs), on the
   * connection `on` names. Without `params`, or without both, the last call's `sql` and
   * `params`. */
  readInline(
    kind: JobKind,
    paramsLength: number,
    budgetMicros: number,
    handler: unknown,
    on: ReadOn,
    sql?: string,
    params?: Uint8Array,
  ): Inline
  /** A select calling JavaScript functions, on the JS thread's connection a slice at a time
   * (crates/engine/src/js_thread/runs.rs `read_slice`): starts it (`sql`) or, with `sql` null, runs its
   * next slice. Done after calling `handler` with `(Rows, buffer, names, last)` or
   * `(Error, code, message)`; Skipped when it calls no JavaScript function (or one is under
   * way); Moved when a step overran (run it on a reader); Unavailable without the connection. */
  readSlice(sql: string | null, params: Uint8Array, paramsLength: number, handler: unknown): Inline
  /** The array `readInline` writes a result of numbers and NULLs into instead of calling its
   * handler (`Inline.Numbers`): `[count, ...cells]`, NULL as NaN; and `writeInline` a write's
   * changes. Kept alive by the caller. */
  shareNumbers(numbers: Float64Array): void
  /** On the idle writer's connection: an execute whose statement is bounded (`JobKind.Execute`),
   * inside the caller's transaction or, not `inTransaction`, alone; or the transaction's COMMIT
   * (`JobKind.Control`, 'COMMIT') when it has little to write (crates/engine/src/js_thread/runs.rs). */
  writeInline(
    kind: JobKind,
    sql: string,
    params: Uint8Array,
    paramsLength: number,
    budgetMicros: number,
    handler: unknown,
    inTransaction: boolean,
  ): Inline
  /** Starts live query `id` with its first run on the JS thread within `budgetMicros`
   * (crates/engine/src/js_thread/runs.rs): `Done` after calling `handler(kind, a, b)` as a completion
   * would deliver it; otherwise its first run went to the readers. */
  liveStartInline(
    id: number,
    sql: string,
    params: Uint8Array,
    paramsLength: number,
    budgetMicros: number,
    handler: unknown,
  ): Inline
  write(
    id: number,
    kind: JobKind,
    sql: string,
    params: Uint8Array,
    paramsLength: number,
    inTransaction: boolean,
  ): boolean
  /** A result's TEXT cells as strings (decode.ts `Texts`). */
  texts: Texts
  /** Pending jobs keep the process alive. */
  ref(): void
  /** Nothing pending keeps the process alive any more. */
  unref(): void
}

/** What the engine's `diagnostics()` reports: live-query counters, SQLite's memory use and
 * group commits. */
export interface NativeDiagnostics {
  /** Live queries running. */
  queries: number
  requeries: number
  skippedByColumns: number
  unchangedSuppressed: number
  fallbackAll: number
  pageCacheBytes: number
  schemaBytes: number
  statementBytes: number
  /** Group commits, and the writes they committed. */
  groups: number
  groupedWrites: number
  /** Times an engine thread stepped aside for the JS thread. */
  steppedAside: number
  /** How long a snapshot has kept the WAL from starting over (threads/checkpoint.rs), ms. */
  walHeldMs: number
}

/** A cipher and its key bytes (engine.ts `Encryption`); the engine copies the key. */
export interface NativeEncryption {
  cipher: { name: string; names: string[]; values: number[] }
  key: Uint8Array
}

/** What the NativeDatabase constructor takes besides the completion handler. */
export interface OpenOptions {
  path: string
  readers: number
  busyTimeout: number
  readonly: boolean
  safeIntegers: boolean
  /** Shared with the engine: see Mailbox and Engine.#mailbox. */
  mailbox: ArrayBuffer
  /** The job id whose completion reports the open. */
  openId: number
  /** `undefined` (or an empty key): no encryption. */
  encryption: NativeEncryption | undefined
  /** Attached on every connection: [schema name, file path] pairs. */
  attach: [string, string][]
  /** Open a read-only connection for reads on the JS thread (crates/engine/src/js_thread/runs.rs). */
  inline: boolean
  /** No checkpoints from any connection (crates/engine/src/sqlite/setup.rs). */
  externalCheckpoints: boolean
  /** Loaded on every connection as it opens (crates/engine/src/sqlite/extensions.rs). */
  extensions: NativeExtension[]
  /** TEXT that is not valid UTF-8 reads with U+FFFD replacements (crates/engine/src/sqlite/step.rs). */
  replaceInvalidUtf8: boolean
  /** Reader connections unused this many milliseconds close (crates/engine/src/threads/executor.rs). */
  idleTimeout: number
  /** Every connection opens through the VFS of this name (crates/engine/src/sqlite/vfs.rs). */
  vfs: string | undefined
  /** `PRAGMA synchronous` on every connection (crates/engine/src/sqlite/setup.rs). */
  synchronous: 'normal' | 'full'
}

/** An extension library and its entry point (undefined: SQLite derives it from the file name). */
export interface NativeExtension {
  path: string
  entryPoint: string | undefined
}

/** Rows writes changed (`takeRowChanges`): row `i` is `kinds[i]` (0 insert, 1 update, 2 delete)
 * of row `rowids[i]` in `tables[tableOf[i]]` ("schema\0table"); `dropped` rows past the rows
 * kept between two takes were not recorded. */
export interface NativeRowChanges {
  tables: string[]
  kinds: Uint8Array
  tableOf: Uint32Array
  rowids: Float64Array
  dropped: number
}

export interface NativeDatabase {
  jobCalls(): JobCalls
  /** Starts live query `id`; its results arrive as Done.LiveRows / Done.LiveError completions
   * until `liveStop(id)`. */
  liveStart(id: number, sql: string, params: Uint8Array, paramsLength: number): void
  liveStop(id: number): void
  /** A step of iteration `cursor` as job `id` (crates/engine/src/threads/iterate.rs): pages
   * arrive as Done.Page, the last as Done.Rows. False when `inTransaction` and there is no
   * writer. */
  iterate(
    id: number,
    cursor: number,
    step: IterateStep,
    sql: string,
    params: Uint8Array,
    paramsLength: number,
    pageRows: number,
    inTransaction: boolean,
  ): boolean
  diagnostics(): NativeDiagnostics
  cancel(id: number): void
  /** Starts a backup of the database into the new file `destination` on a thread of its own;
   * Done.Progress completions report its steps, until it completes. `cancel(id)` stops it. */
  backup(id: number, destination: string): void
  /** Starts a backup into the new file `destination` that pauses between the steps asked for
   * (resqlite/sqlite3's Backup, crates/engine/src/threads/paused_backups.rs); `id` completes
   * Done.Void once it is ready, and names it in `backupStep` and `backupFinish`. */
  backupStart(id: number, destination: string): void
  /** Job `id`: up to `pages` pages of paused backup `backup` (all left when negative): a
   * Done.Progress, then Done.Stepped or the error. */
  backupStep(id: number, backup: number, pages: number): void
  /** Job `id`: finishes paused backup `backup` (Done.Void). */
  backupFinish(id: number, backup: number): void
  /** Starts (or stops) recording the rows the writer's connection changes (SQLite's update
   * hook, crates/engine/src/sqlite/row_changes.rs): resqlite/sqlite3's 'change' event. */
  listenRowChanges(on: boolean): void
  /** The rows changed since the last take, or null. */
  takeRowChanges(): NativeRowChanges | null
  /** Queues a rekey on the writer; no encryption (or an empty key) decrypts. */
  rekey(id: number, encryption: NativeEncryption | undefined): boolean
  interruptWriter(): void
  /** Defines (or replaces) a SQL function for every connection (crates/engine/src/functions/):
   * `kind` 0 scalar, 1 aggregate, 2 window; `callers` as src/functions.ts makes them; `later`
   * serves calls handed over from engine threads on a later turn of the loop. */
  defineFunction(
    name: string,
    nArg: number,
    kind: number,
    deterministic: boolean,
    directOnly: boolean,
    callers: unknown[],
    later: () => void,
  ): void
  /** Serves handed-over function calls for one slice; true when more wait. */
  serveFunctionCalls(): boolean
  close(id: number): void
  release(): void
}

interface Binding {
  /** `onComplete` is called with each batch of completions (Engine.#onComplete). */
  NativeDatabase: new (
    options: OpenOptions,
    onComplete: (batch?: true, ...objects: unknown[]) => void,
  ) => NativeDatabase
  /** The engine's threads and every open database's connections (Database.processDiagnostics). */
  processDiagnostics(): ProcessDiagnostics
  /** The protocol's numbers as the engine defines them, for test/protocol.test.mjs. */
  protocol(): Record<string, Record<string, number>>
  /** Loads an extension once for the process (crates/engine/src/sqlite/vfs.rs); what failed, or null. */
  loadExtensionProcessWide(
    path: string,
    entryPoint: string | undefined,
  ): Promise<{ code: string; message: string } | null>
}

export const binding = loadBinding<Binding>()
