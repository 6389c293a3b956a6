// The JS side of the native engine: submits jobs to the reader pool or the writer and settles
// their promises when the engine hands back a batch of completions. A call the JS thread may run
// itself is offered to js-thread/ (`JsThread`) first; what it declines comes back here.
import { whenAborted } from './abort-listeners'
import { awaitedAway } from './caller-stack'
import { arrayResult, DIRECT_DECODE_CELLS, type Row, RowsAssembler, RowsResult } from './decode'
import { abortError, closedError, engineError, type ResqliteError } from './errors'
import { Functions } from './functions'
import type { Page, PageSource } from './iterate'
import { type FirstRun, RESOLVED } from './js-thread/inline'
import { JsThread, type Threads } from './js-thread/js-thread'
import type { Placement } from './js-thread/placement'
import {
  binding,
  Done,
  IterateStep,
  type JobCalls,
  JobKind,
  Mailbox,
  type NativeDatabase,
  type NativeDiagnostics,
  type NativeExtension,
  type NativeRowChanges,
} from './native'
import { NOTHING } from './nothing'
import type { Packed } from './params'
import { type QueryContext, queryChannel, traced, traceLiveRun, Where } from './tracing'
import type { BackupProgress } from './types'

export interface EngineOptions {
  readers: number
  busyTimeout: number
  readonly: boolean
  safeIntegers: boolean
  encryption: Encryption | undefined
  /** Schema name → file, attached on every connection. */
  attach: [string, string][]
  /** How long a read may run on the JS thread; 0: never (crates/engine/src/js_thread/runs.rs). */
  inlineBudgetMicros: number
  extensions: NativeExtension[]
  /** Every connection opens through this VFS (`vfs`); undefined: SQLite's default. */
  vfs: string | undefined
  /** No checkpoints from any connection: another process runs them. */
  externalCheckpoints: boolean
  /** TEXT that is not valid UTF-8 reads with U+FFFD replacements (`invalidUtf8: 'replace'`). */
  replaceInvalidUtf8: boolean
  /** Milliseconds a reader connection stays open unused. */
  idleTimeout: number
  /** `PRAGMA synchronous` on every connection (`synchronous`). */
  synchronous: 'normal' | 'full'
}

/** A validated cipher with the key bytes to hand to the engine (which copies them; the caller's
 * bytes are zeroed once handed over). */
export interface Encryption {
  cipher: CheckedCipher
  key: Uint8Array
}

/** A validated cipher: its name and sqlite3mc's parameter names and values, in order. */
export interface CheckedCipher {
  name: string
  names: string[]
  values: number[]
}

interface Job {
  /** What the job is; `undefined` for opening and closing. */
  kind: JobKind | undefined
  sql: string | undefined
  // biome-ignore lint/suspicious/noExplicitAny: each kind of job resolves with its own type
  resolve: (value: any) => void
  reject: (error: unknown) => void
  signal?: AbortSignal
  onAbort?: () => void
  /** Forgets `onAbort` (abort-listeners.ts): one listener per signal, however many jobs. */
  unlisten?: () => void
  /** Assembles a large result arriving in parts. */
  parts?: RowsAssembler
  /** Rejected early (aborted, or a part failed to decode): later completions are ignored. */
  settled?: boolean
  /** A read on the readers, counted in `Placement.readsInFlight` until it completes. */
  read?: boolean
  /** A write, counted in the mailbox's writes in flight until it completes. */
  polled?: boolean
  /** A transaction's writer job: told when an error left the writer outside any transaction. */
  onNoTransaction?: (error: ResqliteError) => void
  /** A step of an iteration: resolves with a `Page`. */
  page?: true
  /** `rowMode: 'array'`: rows are arrays, resolved beside their column names. */
  arrays?: boolean
  /** A backup: told of each step. */
  progress?: (progress: BackupProgress) => void
  /** A backup's progress callback threw: the backup was stopped, and rejects with this. */
  failure?: { error: unknown }
  /** A traced call's context (tracing.ts): the engine reports the job's wait in its queue. */
  trace?: QueryContext
}

/** Receives a live query's results: rows, or the error of a run. */
export type LiveSink = (rows: Row[] | undefined, error: ResqliteError | undefined) => void

/** Receives the rows writes changed (resqlite/sqlite3's 'change' event). */
export type RowChangesSink = (changes: NativeRowChanges) => void

export class Engine implements Threads {
  readonly opened: Promise<void>
  readonly #native: NativeDatabase
  /** `db.function` and `db.aggregate` definitions (src/functions.ts). */
  readonly functions: Functions
  readonly #calls: JobCalls
  readonly #jobs = new Map<number, Job>()
  readonly #live = new Map<number, { sql: string; sink: LiveSink }>()
  /** Shared with the engine (crates/engine/src/handoff/mailbox.rs): completions' numbers arrive in
   * `#slots`; `#words` holds the engine's signals and the count of writes in flight this
   * thread keeps, which tells the engine's poller how long to keep the loop turning
   * (poller.rs; experiments/021, 023). */
  readonly #mailbox = new ArrayBuffer(Mailbox.Bytes)
  readonly #words = new Int32Array(this.#mailbox, 0, Mailbox.Words)
  readonly #slots = new Float64Array(this.#mailbox, Mailbox.Words * 4)
  /** The engine keeps the process alive (jobs or live queries pending, or polling just ended). */
  #referenced = false
  readonly #safeIntegers: boolean
  /** The calls offered to the JS thread, and their runs there (js-thread/). */
  readonly jsThread: JsThread
  /** `jsThread.placement`: where each call runs (js-thread/placement.ts), and the counts it
   * decides by. */
  readonly #placement: Placement
  /** Settles when the last job sent to the writer thread settles (holding none of its result). */
  #lastWrite: Promise<void> = RESOLVED
  #nextId = 0
  /** The engine was told to close: it takes no job after that (it would drop it unrun, and its
   * promise would never settle), so one offered then rejects with `ERR_DATABASE_CLOSED`. */
  #closed = false
  /** Tracing (tracing.ts): the traced call being placed, and where the last call placed went
   * (a store per call; read only when someone listens). */
  trace: QueryContext | undefined
  placed = Where.None
  readonly database: string
  /** Receives the rows the writer's connection changed while set (`rowChanges`). */
  #rowChanges: RowChangesSink | undefined

  /** A traced call settled (js-thread.ts `tracedSettled`). */
  tracedSettled(): void {
    this.jsThread.tracedSettled()
  }

  /** `path`: the file the connections open; `database`: the path the database was opened with
   * (tracing names it). */
  constructor(path: string, options: EngineOptions, database = path) {
    this.database = database
    this.#safeIntegers = options.safeIntegers
    const openId = this.#newId()
    const enc = options.encryption
    try {
      this.#native = new binding.NativeDatabase(
        {
          path,
          readers: options.readers,
          busyTimeout: options.busyTimeout,
          readonly: options.readonly,
          safeIntegers: options.safeIntegers,
          mailbox: this.#mailbox,
          openId,
          encryption: enc,
          attach: options.attach,
          inline: options.inlineBudgetMicros > 0,
          extensions: options.extensions,
          externalCheckpoints: options.externalCheckpoints,
          replaceInvalidUtf8: options.replaceInvalidUtf8,
          idleTimeout: options.idleTimeout,
          vfs: options.vfs,
          synchronous: options.synchronous,
        },
        this.#onComplete,
      )
    } finally {
      enc?.key.fill(0)
    }
    this.#calls = this.#native.jobCalls()
    this.functions = new Functions(this.#native)
    this.jsThread = new JsThread(
      this,
      this.#calls,
      this.#words,
      this.functions,
      options.inlineBudgetMicros,
      options.safeIntegers,
    )
    this.#placement = this.jsThread.placement
    this.opened = new Promise((resolve, reject) =>
      this.#track(openId, { kind: undefined, sql: undefined, resolve, reject }),
    )
  }

  /** Runs a read on the JS thread when it fits the inline budget (or in slices), else on the
   * reader pool (js-thread.ts `read`). An abort cancels it queued or interrupts it running on a
   * reader (an inline run is over before any abort can be seen). */
  read<T>(kind: JobKind, sql: string, packed: Packed, signal: AbortSignal | undefined, arrays = false): Promise<T> {
    const done = this.jsThread.read<T>(kind, sql, packed, signal, arrays)
    if (done !== undefined) return done
    this.placed = Where.Reader
    return this.readOnThreads(kind, sql, packed, signal, arrays)
  }

  /** Settles when the last job sent to the writer thread settles (js-thread.ts `Threads`). */
  get lastWrite(): Promise<void> {
    return this.#lastWrite
  }

  /** A read on the reader pool. */
  readOnThreads<T>(
    kind: JobKind,
    sql: string,
    packed: Packed,
    signal: AbortSignal | undefined,
    arrays: boolean,
  ): Promise<T> {
    const read = new Promise<T>((resolve, reject) => {
      const id = this.#newId()
      const job: Job = { kind, sql, resolve, reject, read: true, arrays }
      const traced = this.trace !== undefined
      if (traced) job.trace = this.trace
      this.#track(id, job)
      this.#placement.readsInFlight++
      if (signal) {
        job.signal = signal
        job.onAbort = () => {
          this.#native.cancel(id)
          job.settled = true
          reject(abortError(signal, sql))
        }
        job.unlisten = whenAborted(signal, job.onAbort)
      }
      this.#calls.read(
        id,
        traced ? kind | JobKind.Traced : kind,
        sql,
        packed.bytes,
        packed.length,
        signal !== undefined,
      )
    })
    return awaitedAway(read)
  }

  /** Runs a job on the writer, after every writer job sent before it. With `onNoTransaction`
   * the job belongs to an open transaction: the writer refuses to run it outside one, and an
   * error that leaves the writer outside any transaction is reported to the callback. */
  write<T>(
    kind: JobKind,
    sql: string,
    packed: Packed,
    onNoTransaction?: (error: ResqliteError) => void,
    arrays = false,
  ): Promise<T> {
    this.jsThread.closeGroup()
    this.#placement.wrote()
    this.placed = Where.Writer
    const written = new Promise<T>((resolve, reject) => {
      const id = this.#newId()
      const job: Job = { kind, sql, resolve, reject, onNoTransaction, polled: true, arrays }
      // A traced call's own statement, not a BEGIN or COMMIT it caused.
      const traced = this.trace !== undefined && kind !== JobKind.Control
      if (traced) job.trace = this.trace
      this.#track(id, job)
      const sent = traced ? kind | JobKind.Traced : kind
      if (!this.#calls.write(id, sent, sql, packed.bytes, packed.length, onNoTransaction !== undefined)) {
        this.#notSent(id, reject) // no writer any more
        return
      }
      this.#words[Mailbox.WritesInFlight]!++
    })
    this.#lastWrite = written.then(NOTHING, NOTHING)
    if (onNoTransaction === undefined && (kind === JobKind.Execute || kind === JobKind.Batch))
      this.jsThread.pendingWrite = this.#lastWrite
    return awaitedAway(written)
  }

  /** An iteration's pages (crates/engine/src/threads/iterate.rs): on a connection of its own,
   * or, with `onNoTransaction`, on the writer's inside the open transaction. */
  iterate<T>(
    sql: string,
    packed: Packed,
    pageRows: number,
    onNoTransaction?: (error: ResqliteError) => void,
    arrays = false,
  ): PageSource<T> {
    this.jsThread.closeGroup()
    this.placed = onNoTransaction === undefined ? Where.Reader : Where.Writer
    const cursor = this.#newId()
    let started = false
    const step = (s: IterateStep, id: number): Promise<Page<T>> =>
      new Promise<Page<T>>((resolve, reject) => {
        const inTransaction = onNoTransaction !== undefined
        const job: Job = { kind: JobKind.Select, sql, resolve, reject, page: true, onNoTransaction, arrays }
        this.#track(id, job)
        if (inTransaction) {
          job.polled = true
          this.#words[Mailbox.WritesInFlight]!++
        }
        if (!this.#native.iterate(id, cursor, s, sql, packed.bytes, packed.length, pageRows, inTransaction)) {
          if (inTransaction) this.#words[Mailbox.WritesInFlight]!--
          this.#notSent(id, reject)
        }
      })
    return {
      next: () => {
        if (started) return awaitedAway(step(IterateStep.Next, this.#newId()))
        started = true
        return awaitedAway(step(IterateStep.Start, cursor))
      },
      end: () => {
        step(IterateStep.End, this.#newId()).catch(() => {})
      },
    }
  }

  /** Starts a live query on the readers; `sink` receives every result that differs from the
   * one before, until `liveStop`. An active live query keeps the process alive. */
  liveStart(sql: string, packed: Packed, sink: LiveSink): number {
    this.jsThread.closeGroup() // its first run must not see the group's writes
    const id = this.#newId()
    this.#keepAlive()
    this.#live.set(id, { sql, sink })
    // Its first run on the JS thread when it fits the budget (experiments/037), under the same
    // rules as a read (else the engine started it on the readers); delivered in a microtask,
    // before any later run's completion.
    if (!this.jsThread.liveStart(id, sql, packed, this.#ranFirst))
      this.#native.liveStart(id, sql, packed.bytes, packed.length)
    return id
  }

  readonly #ranFirst = (id: number, first: FirstRun): void => {
    queueMicrotask(() => this.#deliver(id, first.kind, first.a, first.b, Where.JsThread))
  }

  liveStop(id: number): void {
    if (!this.#live.delete(id)) return
    this.#native.liveStop(id)
    this.#unrefIfIdle()
  }

  diagnostics(): NativeDiagnostics {
    return this.#native.diagnostics()
  }

  /** Re-encrypts the database on the writer, in turn with the writes sent before it;
   * `undefined` decrypts it. */
  rekey(enc: Encryption | undefined): Promise<void> {
    this.jsThread.closeGroup()
    const rekeyed = new Promise<void>((resolve, reject) => {
      const id = this.#newId()
      try {
        this.#track(id, { kind: undefined, sql: undefined, resolve, reject })
        if (!this.#native.rekey(id, enc)) this.#notSent(id, reject)
      } catch (error) {
        this.#jobs.delete(id)
        this.#unrefIfIdle()
        reject(error)
      } finally {
        enc?.key.fill(0)
      }
    })
    return awaitedAway(rekeyed)
  }

  /** Copies the database into the new file `destination` on a thread of its own (crates/engine/src/sqlite/backup.rs).
   * An abort stops it after its current step; the promise settles once the engine has removed
   * the partial copy. A `progress` that throws stops it too, and the promise rejects with that. */
  backup(
    destination: string,
    signal: AbortSignal | undefined,
    progress: ((progress: BackupProgress) => void) | undefined,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const id = this.#newId()
      const job: Job = { kind: undefined, sql: 'backup', resolve, reject, signal }
      job.onAbort = () => this.#native.cancel(id)
      if (progress) {
        job.progress = (step) => {
          try {
            progress(step)
          } catch (error) {
            job.failure ??= { error }
            job.onAbort!()
          }
        }
      }
      this.#track(id, job)
      if (signal) job.unlisten = whenAborted(signal, job.onAbort)
      this.#native.backup(id, destination)
    })
  }

  /** A backup into the new file `destination` that pauses between the steps asked for
   * (resqlite/sqlite3's Backup; crates/engine/src/threads/paused_backups.rs): resolves with its
   * id once it is ready. */
  backupStart(destination: string): Promise<number> {
    let started = 0
    return this.#pausedBackupCall<void>((id) => {
      started = id
      this.#native.backupStart(id, destination)
    }).then(() => started)
  }

  /** Copies up to `pages` pages of paused backup `backup` (all those left when negative) on an
   * engine thread: resolves with sqlite3_backup_step's code (OK or DONE), rejects with its
   * error; `progress` hears the pages left and in all after the step either way. */
  backupStep(backup: number, pages: number, progress: (progress: BackupProgress) => void): Promise<number> {
    return this.#pausedBackupCall((id) => this.#native.backupStep(id, backup, pages), progress)
  }

  /** Finishes paused backup `backup` (sqlite3_backup_finish): an unfinished copy is rolled back. */
  backupFinish(backup: number): Promise<void> {
    return this.#pausedBackupCall((id) => this.#native.backupFinish(id, backup))
  }

  /** A paused backup's call: a job, sent by `send`, that settles as the engine completes it. */
  #pausedBackupCall<T>(send: (id: number) => void, progress?: (progress: BackupProgress) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const id = this.#newId()
      this.#track(id, { kind: undefined, sql: 'backup', resolve, reject, progress })
      send(id)
    })
  }

  /** Interrupts the statement the writer is running, if any. */
  interruptWriter(): void {
    this.#native.interruptWriter()
  }

  /** Finishes every job sent, closes the connections and joins the threads. */
  async close(): Promise<void> {
    this.jsThread.closeGroup()
    // A sliced read runs on the JS thread's connection, which the engine closes: it finishes first.
    for (let sliced = this.jsThread.slicesUnderWay(); sliced !== undefined; sliced = this.jsThread.slicesUnderWay())
      await sliced
    return new Promise<void>((resolve, reject) => {
      const id = this.#newId()
      const done = () => {
        this.#native.release()
        resolve()
      }
      this.#track(id, { kind: undefined, sql: undefined, resolve: done, reject })
      this.#closed = true
      this.#native.close(id)
    })
  }

  #newId(): number {
    this.#nextId = (this.#nextId + 1) >>> 0 || 1
    return this.#nextId
  }

  /** Registers a job; the first pending job keeps the process alive until the last settles.
   * Throws `ERR_DATABASE_CLOSED` once the engine closed (called in a promise's executor, it
   * rejects that promise). */
  #track(id: number, job: Job): void {
    if (this.#closed) throw closedError()
    this.#keepAlive()
    this.#jobs.set(id, job)
  }

  /** A job the engine did not take (it has no writer any more): forgotten, and rejected as a
   * call on a closed database, never left pending. */
  #notSent(id: number, reject: (error: unknown) => void): void {
    this.#jobs.delete(id)
    this.#unrefIfIdle()
    reject(closedError())
  }

  #keepAlive(): void {
    if (this.#referenced) return
    this.#calls.ref()
    this.#referenced = true
  }

  /** Lets the process exit once nothing is pending. While the engine polls, the unref waits
   * for the polling to end (the engine then calls the handler with no batch): awaited writes
   * one after another cost no ref/unref pair each (experiments/021). */
  #unrefIfIdle(): void {
    if (
      this.#referenced &&
      Atomics.load(this.#words, Mailbox.Polling) === 0 &&
      this.#jobs.size + this.#live.size === 0
    ) {
      this.#calls.unref()
      this.#referenced = false
    }
  }

  /** Called with each batch of finished jobs (`batch` true): their numbers are in the mailbox's
   * slots, their other values (buffers, column names, messages) are the other arguments, in order.
   * Called with no arguments when the engine stops polling. */
  readonly #onComplete = (batch?: true, ...objects: unknown[]): void => {
    if (batch === undefined) {
      this.#unrefIfIdle()
      return
    }
    const turnStart = performance.now()
    const count = this.#words[Mailbox.Count]!
    const slots = this.#slots
    let next = 0
    for (let s = 0; s < 4 * count; s += 4) {
      const id = slots[s]!
      const kind = slots[s + 1] as Done
      let a: unknown
      let b: unknown
      let changes = 0
      let rowid: unknown
      if (kind === Done.Returned) {
        a = objects[next++]
        b = objects[next++]
        changes = slots[s + 2]!
        rowid = Number.isNaN(slots[s + 3]) ? objects[next++] : slots[s + 3]
      } else if (kind === Done.Changes || kind === Done.Progress || kind === Done.Stepped || kind === Done.Queued) {
        a = slots[s + 2]
        b = slots[s + 3]
      } else if (kind === Done.ChangesBig) {
        a = slots[s + 2]
        b = objects[next++]
      } else if (kind === Done.Json) {
        a = objects[next++]
      } else if (kind !== Done.Void) {
        a = objects[next++]
        b = objects[next++]
      }
      if (kind === Done.LiveRows || kind === Done.LiveError) {
        this.#deliver(id, kind, a, b, Where.Reader)
        continue
      }
      const job = this.#jobs.get(id)
      if (job === undefined) continue
      if (kind === Done.RowsPart) {
        if (!job.settled) {
          const part = this.rows(a, b, job.arrays)
          this.#assembler(job, part).add(part, false, turnStart)
        }
        continue
      }
      if (kind === Done.Progress) {
        job.progress?.({ remaining: a as number, total: b as number })
        continue
      }
      if (kind === Done.Queued) {
        if (job.trace !== undefined && !job.settled) job.trace.threadQueuedMs = (a as number) / 1000
        continue
      }
      this.#jobs.delete(id)
      this.#unrefIfIdle()
      if (job.polled) this.#words[Mailbox.WritesInFlight]!--
      else if (job.read) this.#placement.readsInFlight--
      job.unlisten?.()
      if (job.settled) continue
      if (job.failure) {
        job.reject(job.failure.error)
        continue
      }
      try {
        if (kind === Done.Returned) this.#returned(job, a, b, changes, rowid)
        else this.#settle(job, kind, a, b, turnStart)
      } catch (error) {
        job.reject(error)
      }
    }
    // Before the settled promises' callbacks run: the rows the writes of this batch changed.
    if (this.#rowChanges !== undefined) this.takeRowChanges()
  }

  /** Records the rows the writer's connection changes (SQLite's update hook) and hands them to
   * `sink` after each batch of completions and on `takeRowChanges`; undefined stops. */
  rowChanges(sink: RowChangesSink | undefined): void {
    this.#rowChanges = sink
    this.#native.listenRowChanges(sink !== undefined)
  }

  /** Hands the rows changed since the last take to the `rowChanges` sink: after each batch of
   * completions, and after each write run on the JS thread, which no completion reports. */
  takeRowChanges(): void {
    const sink = this.#rowChanges
    if (sink === undefined) return
    const taken = this.#native.takeRowChanges()
    if (taken !== null) sink(taken)
  }

  #settle(job: Job, done: Done, a: unknown, b: unknown, turnStart: number): void {
    switch (done) {
      case Done.Page:
      case Done.Rows: {
        const result = this.rows(a, b, job.arrays)
        if (job.page) {
          job.resolve({ rows: result.all(), last: done === Done.Rows, columns: result.columns })
        } else if (job.kind === JobKind.SelectOne) {
          const row = result.first()
          job.resolve(job.arrays ? arrayResult(result.columns, row, true) : row)
        } else if (job.parts || result.cells > DIRECT_DECODE_CELLS) {
          this.#assembler(job, result).add(result, true, turnStart)
        } else {
          const rows = result.all()
          job.resolve(job.arrays ? arrayResult(result.columns, rows, false) : rows)
        }
        return
      }
      case Done.Json: {
        const bytes = Buffer.from(a as ArrayBuffer)
        job.resolve(
          job.kind === JobKind.Columns || job.kind === JobKind.Describe ? JSON.parse(bytes.toString()) : bytes,
        )
        return
      }
      case Done.Changes:
      case Done.ChangesBig:
        if (job.kind === JobKind.Batch) job.resolve({ changes: a })
        else job.resolve({ changes: a, lastInsertRowid: this.#safeIntegers ? BigInt(b as number | bigint) : b })
        return
      case Done.Void:
        job.resolve(undefined)
        return
      case Done.Stepped:
        job.resolve(a)
        return
      case Done.Error:
      case Done.ErrorNoTransaction: {
        const error =
          a === 'ABORT_ERR' && job.signal
            ? abortError(job.signal, job.sql)
            : engineError(a as string, b as string, job.sql)
        if (done === Done.ErrorNoTransaction) job.onNoTransaction?.(error)
        job.reject(error)
        return
      }
    }
  }

  /** A write's RETURNING rows (crates/engine/src/threads/worker.rs `execute`), decoded at once:
   * a write's result is not assembled across turns. */
  #returned(job: Job, buffer: unknown, names: unknown, changes: number, rowid: unknown): void {
    const result = this.rows(buffer, names, job.arrays)
    const rows = result.all()
    const lastInsertRowid = this.#safeIntegers ? BigInt(rowid as number | bigint) : rowid
    job.resolve(
      job.arrays ? { changes, lastInsertRowid, columns: result.columns, rows } : { changes, lastInsertRowid, rows },
    )
  }

  /** A live query's result (`where`: the run that made it) to its sink; traced as a
   * `resqlite:query` of its own when someone listens (tracing.ts `traceLiveRun`). */
  #deliver(id: number, kind: Done, a: unknown, b: unknown, where: Where): void {
    const live = this.#live.get(id)
    if (live === undefined) return // stopped while it ran
    let rows: Row[] | undefined
    let error: ResqliteError | undefined
    if (kind === Done.LiveError) error = engineError(a as string, b as string, live.sql)
    else {
      try {
        rows = this.rows(a, b).all()
      } catch (failure) {
        error = failure as ResqliteError
      }
    }
    if (traced(queryChannel)) traceLiveRun(this, live.sql, where, rows?.length, error)
    live.sink(rows, error)
  }

  /** The assembler of a result arriving in parts; `first` is its first part (whose column
   * names an array result resolves with). */
  #assembler(job: Job, first: RowsResult): RowsAssembler {
    job.parts ??= new RowsAssembler(
      job.arrays ? (rows) => job.resolve(arrayResult(first.columns, rows, false)) : job.resolve,
      (error) => {
        job.settled = true
        job.reject(error)
      },
    )
    return job.parts
  }

  /** A result's rows, decoded as the database was opened to. */
  rows(buffer: unknown, names: unknown, arrays = false): RowsResult {
    return new RowsResult(buffer as ArrayBuffer, names as string, this.#safeIntegers, this.#calls.texts, arrays)
  }
}
