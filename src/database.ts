// The public Database: validates arguments, packs parameters, routes calls made inside a
// transaction body to that transaction, and sends the rest to the engine — reads to the
// reader pool, writes to the writer in call order.
import { AsyncLocalStorage } from 'node:async_hooks'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { abortable } from './abort-listeners'
import {
  checkBackup,
  checkBody,
  checkExtension,
  checkOptions,
  checkPath,
  checkRekey,
  checkReplica,
  checkTransactionOptions,
  checkWatchOption,
  type PreparedCall,
  prepareCall,
} from './arguments'
import { awaitedAway, withCallerFrames } from './caller-stack'
import { type CheckedCipher, Engine, type EngineOptions, type RowChangesSink } from './engine'
import { abortError, closedError, ResqliteError, type ResqliteErrorCode } from './errors'
import {
  type AggregateOptions,
  callInFunctionError,
  type FunctionOptions,
  type Functions,
  inFunction,
  rejected,
  type SqlFunction,
} from './functions'
import { iteration, type PageSource, type RowIterator } from './iterate'
import { writeMayRunInline } from './js-thread/placement'
import { WriteGroup } from './js-thread/write-group'
import { LiveQueries, LiveQuery } from './live-queries'
import { binding, JobKind } from './native'
import { NOTHING } from './nothing'
import { copyPacked, encodeBatch, encodeParams, NO_PARAMS, noParams, type Packed, type Params } from './params'
import { type Description, prepareStatement, type Statement, StatementLink } from './statement'
import {
  closeChannel,
  openChannel,
  placedLater,
  sendAfterWaiting,
  traced,
  tracedQuery,
  traceOperation,
  traceQuery,
  transactionChannel,
  Where,
} from './tracing'
import { Transaction, Turns } from './transaction'
import type {
  BackupOptions,
  BackupProgress,
  BatchResult,
  ColumnInfo,
  Diagnostics,
  ExecuteOptions,
  ExecuteResult,
  Extension,
  IteratedRow,
  IterateOptions,
  OpenOptions,
  ProcessDiagnostics,
  Queryable,
  QueryOptions,
  RekeyOptions,
  Row,
  RunResult,
  SelectOneResult,
  SelectResult,
  TransactionOptions,
} from './types'

const DEBUG_PANIC = Symbol.for('resqlite.debugPanic')
/** resqlite/sqlite3's 'change' event (src/sqlite3.ts): the rows the writer's connection changes,
 * to a sink (`Engine.rowChanges`). */
export const ROW_CHANGES = Symbol('resqlite.rowChanges')
/** resqlite/sqlite3's Backup (src/sqlite3-backup.ts): a backup paused between the steps asked
 * for (`Database[PAUSED_BACKUP]`). */
export const PAUSED_BACKUP = Symbol('resqlite.pausedBackup')

/** A backup paused between steps (crates/engine/src/threads/paused_backups.rs). */
export interface PausedBackup {
  /** Copies up to `pages` pages (all those left when negative; none with 0): resolves with
   * sqlite3_backup_step's code, OK or DONE; `progress` hears where the copy is after it. */
  step(pages: number, progress: (progress: BackupProgress) => void): Promise<number>
  /** Ends it; a copy not complete is rolled back, leaving the destination empty. After the
   * database closed (which finished it) it does nothing. */
  finish(): Promise<void>
}

/** A SQLite database: one writer connection and a pool of reader connections, each on its own
 * native thread, so no query runs on the event loop. Open one with {@link Database.open}; its
 * query methods are {@link Queryable}'s, shared with {@link Transaction}. */
export class Database implements Queryable {
  // path, readers and readonly are getters over private fields: assigning one throws in strict
  // mode (a no-op otherwise), so plain JS cannot make the object disagree with its engine.
  readonly #path: string
  readonly #readers: number
  readonly #readonly: boolean
  /** Opened with `replica: true`: writes reject with `ERR_DATABASE_REPLICA`. */
  readonly #replica: boolean
  readonly #engine: Engine
  /** Writers wait here in call order; a transaction holds the writer alone. */
  readonly #turns = new Turns()
  /** The innermost open transaction of the current async context. */
  readonly #context = new AsyncLocalStorage<Transaction>()
  /** How many IssuedWrites are pending. While none is, no flow has a write to wait for, so a
   * read skips looking its flow up: an AsyncLocalStorage lookup is several percent of a small
   * read (experiments/059). Also this database's mark in `FLOWS`. */
  readonly #pending = { writes: 0 }
  /** Reads (and iterations' first pages) waiting for earlier writes (`#closeWaitsFor`), as settled
   * promises: close() waits for them. */
  readonly #readsWaiting = new Set<Promise<void>>()
  readonly #live: LiveQueries
  /** Opened with `attach`: rekey would re-encrypt the main file only (see rekey). */
  readonly #attached: boolean
  /** The external-change check (watchExternalChanges), when on. */
  #watch: NodeJS.Timeout | undefined
  #closing: Promise<void> | undefined
  /** The cipher in use (name and parameters; the key lives only in the engine). */
  #cipher: CheckedCipher | undefined
  /** The file the connections open: `path`, or for ':memory:' a private temporary file. */
  readonly #file: string
  /** Backups running, and paused backups' calls (`PAUSED_BACKUP`): a rekey waits for them
   * (their snapshots would keep it from starting), and so does close. */
  readonly #backups = new Set<Promise<unknown>>()
  /** ':memory:': the private directory holding `#file`, removed at close. */
  readonly #memoryDir: string | undefined
  /** Its prepared statements' way here, emptied at close (statement.ts). */
  #statements: StatementLink | undefined

  private constructor(path: string, options: EngineOptions, memoryDir: string | undefined, replica: boolean) {
    this.#path = path
    this.#replica = replica
    this.#memoryDir = memoryDir
    this.#file = memoryDir === undefined ? path : join(memoryDir, 'db')
    this.#readers = options.readers
    this.#readonly = options.readonly
    this.#cipher = options.encryption?.cipher
    this.#attached = options.attach.length > 0
    this.#engine = new Engine(this.#file, options, path)
    this.#live = new LiveQueries(this.#engine)
  }

  /** The path the database was opened with. */
  get path(): string {
    return this.#path
  }

  /** How many reader connections serve reads (the `readers` option, or its default). */
  get readers(): number {
    return this.#readers
  }

  /** Opened with `readonly: true`: no writer, and every write rejects with
   * `ERR_DATABASE_READONLY`. */
  get readonly(): boolean {
    return this.#readonly
  }

  /** The engine's threads, which every `Database` in the process shares, and the open
   * databases' connections and queues (docs/api.md "Many databases"). */
  static processDiagnostics(): ProcessDiagnostics {
    return binding.processDiagnostics()
  }

  /** Opens (creating if needed) the database at `path`: its writer's connection (which sets up
   * WAL mode, the encryption key, `attach`), then the JS thread's, on one of the engine's
   * threads; the readers' connections open as reads need them. The promise settles when both
   * are ready.
   *
   * @param path - A database file, or `':memory:'` for a private database every connection of
   *   this `Database` shares, kept in a temporary file that `close()` removes (docs/api.md
   *   "In-memory databases"). `''` is refused (`ERR_INVALID_PATH`).
   * @param options - See {@link OpenOptions}.
   * @returns The open database. Rejects with SQLite's codes (`SQLITE_CANTOPEN`, `SQLITE_NOTADB`
   *   for an encrypted database opened without its key, …), `ERR_INVALID_PATH`,
   *   `ERR_ENCRYPTION_KEY`, `ERR_ENCRYPTION_CONFIG`, `ERR_WAL_UNAVAILABLE`, `ERR_EXTENSION`, or a
   *   `TypeError`/`RangeError` for a bad option; connections already opened are closed. */
  static open(path: string, options?: OpenOptions): Promise<Database> {
    if (!traced(openChannel)) return Database.#open(path, options)
    // A path that is no string is refused by #open; its context names none.
    const database = typeof path === 'string' ? path : ''
    return traceOperation(openChannel, { operation: 'open', database }, () => Database.#open(path, options))
  }

  static async #open(path: string, options: OpenOptions = {}): Promise<Database> {
    const checkedPath = checkPath(path, options)
    const engineOptions = checkOptions(options)
    const interval = checkWatchOption(options)
    const replica = checkReplica(options)
    // ':memory:' is a temporary file in WAL mode, not SQLite's memdb VFS: memdb has no WAL,
    // so its readers and writer would block each other (docs/api.md "In-memory databases").
    const memoryDir = checkedPath === ':memory:' ? await mkdtemp(join(tmpdir(), 'resqlite-memory-')) : undefined
    let db: Database
    try {
      db = new Database(checkedPath, engineOptions, memoryDir, replica)
    } catch (error) {
      if (memoryDir) await rm(memoryDir, { recursive: true, force: true })
      throw error
    }
    try {
      await db.#engine.opened
    } catch (error) {
      await db.close()
      throw withCallerFrames(error)
    }
    if (interval > 0) db.#watchExternalChanges(interval)
    return db
  }

  /** Loads a SQLite extension once for the whole process, for what it registers process-wide:
   * a VFS above all (Litestream's read replicas, docs/replication.md "Litestream's VFS"), which
   * must exist before a database opens through it (the `vfs` option). The library stays loaded
   * for the process's life, and whatever it registers (a VFS, automatic extensions that SQLite
   * runs on every connection opened afterwards) serves every database of this process. Loading
   * the same path and entry point again does nothing. For SQL functions, which belong to a
   * connection, use the `extensions` option instead (docs/api.md "Extensions").
   * @param extension - The library's path, or `{ path, entryPoint }` (as in `extensions`).
   * @returns Resolves once loaded. Rejects with `ERR_EXTENSION` naming the file and SQLite's
   *   reason, or a `TypeError` for a bad argument. */
  static async loadExtension(extension: string | Extension): Promise<void> {
    const { path, entryPoint } = checkExtension(extension)
    const failure = await binding.loadExtensionProcessWide(path, entryPoint)
    if (failure) throw new ResqliteError(failure.code as ResqliteErrorCode, failure.message)
  }

  /** Defines a SQL function written in JavaScript, usable in every statement of this database:
   * reads, writes, transactions, live queries and `selectBytes`. Defining one of the same name
   * (case-insensitively) and argument count again replaces it. `fn` runs on the JS thread and
   * must return at once (a Promise is refused); values cross as parameters and rows do
   * (docs/api.md "Functions"). Unlike the calls that run SQL, it is synchronous: a bad argument
   * throws, and so does a closed database.
   * @returns this database, for chaining. */
  function(name: string, fn: SqlFunction, options?: FunctionOptions): this {
    this.#functionsOpen().defineScalar(name, fn, options)
    return this
  }

  /** Defines an aggregate written in JavaScript (a window function too when `definition.inverse`
   * is given): `start`, then `step` for each row, then `result` (docs/api.md "Functions").
   * Synchronous, like {@link Database.function}.
   * @returns this database, for chaining. */
  aggregate<A = unknown>(name: string, definition: AggregateOptions<A>): this {
    this.#functionsOpen().defineAggregate(name, definition)
    return this
  }

  #functionsOpen(): Functions {
    if (this.#closing) throw closedError()
    if (inFunction()) throw callInFunctionError()
    return this.#engine.functions
  }

  /** A live query (docs/live-queries.md): subscribe to get its rows now and again after every
   * committed write that changes them. Lazy: nothing runs until the first subscription. Runs on
   * the readers, outside any transaction, and sees committed data only.
   *
   * @typeParam T - The row's shape, as the caller declares it (not checked). Default {@link Row}.
   * @param sql - One read-only statement.
   * @param params - Its parameters, by position (array) or by name (object).
   * @param options - None are taken: any given (a `signal`: unsubscribe instead) is refused.
   * @returns A {@link LiveQuery}; errors (bad SQL, `ERR_NOT_READ_ONLY`, bad parameters, options
   *   given, a closed database) reach its subscribers, never thrown here. */
  stream<T = Row>(sql: string, params?: Params, options?: unknown): LiveQuery<T> {
    return new LiveQuery<T>(this.#live, sql, params, options)
  }

  /** Compiles one statement and returns it as a {@link Statement}, whose methods run it with
   * parameters as the database's methods run SQL text (docs/api.md "prepare"). Compiling takes
   * a connection: on a reader, or, inside a transaction body, on the writer, seeing the
   * transaction's schema; so it resolves (or rejects with the SQL's error) asynchronously.
   *
   * @typeParam T - The row's shape, as the caller declares it (not checked). Default {@link Row}.
   * @param sql - One statement (several reject with `ERR_MULTIPLE_STATEMENTS`).
   * @param options - None are taken: any given is refused.
   * @returns The statement. Rejects with SQLite's codes (`SQLITE_ERROR` for bad SQL or a
   *   missing table), `ERR_MULTIPLE_STATEMENTS`, `ERR_EMPTY_STATEMENT`, `ERR_NUL_IN_SQL`,
   *   `ERR_DATABASE_CLOSED`, or a `TypeError` for a bad argument. */
  prepare<T = Row>(sql: string, options?: unknown): Promise<Statement<T>> {
    if (inFunction()) return rejected(callInFunctionError())
    this.#statements ??= new StatementLink(
      this,
      (kind, checked, call) => this.#runPrepared(kind, checked, call),
      this.#engine,
      () => this.#context.getStore() !== undefined,
    )
    return prepareStatement<T>(
      this.#statements,
      sql,
      options,
      (checked) =>
        this.#context.getStore()?.describe(checked) ??
        this.#read<Description>(JobKind.Describe, checked, undefined, undefined),
    )
  }

  /** Counters for live queries, SQLite's memory use, the WAL's size, group commits, the engine
   * threads' steps aside and SQLite work on the JS thread ({@link Diagnostics}). Rejects with
   * `ERR_DATABASE_CLOSED` once `close()` was called, like every other call: the counters only
   * grow, and a closed engine has none to give. */
  diagnostics(): Promise<Diagnostics> {
    if (inFunction()) return rejected(callInFunctionError())
    return this.#diagnostics()
  }

  async #diagnostics(): Promise<Diagnostics> {
    if (this.#closing) throw closedError()
    const native = this.#engine.diagnostics()
    const wal = await stat(`${this.#file}-wal`).catch(() => undefined)
    return {
      streams: this.#live.counters(native),
      sqlite: {
        pageCacheBytes: native.pageCacheBytes,
        schemaBytes: native.schemaBytes,
        statementBytes: native.statementBytes,
      },
      walBytes: wal?.size ?? 0,
      walHeldMs: native.walHeldMs,
      groupCommit: { groups: native.groups, writes: native.groupedWrites },
      steppedAside: native.steppedAside,
      inline: this.#engine.jsThread.counters(),
    }
  }

  /** On a `Database`: runs on a reader connection, or, inside a transaction body, in the
   * transaction.
   * @inheritDoc */
  select<T = Row, O extends QueryOptions = QueryOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<SelectResult<T, O>> {
    return (
      this.#context.getStore()?.select<T, O>(sql, params, options) ?? this.#read(JobKind.Select, sql, params, options)
    )
  }

  /** On a `Database`: runs on a reader connection, or, inside a transaction body, in the
   * transaction.
   * @inheritDoc */
  selectOne<T = Row, O extends QueryOptions = QueryOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<SelectOneResult<T, O>> {
    return (
      this.#context.getStore()?.selectOne<T, O>(sql, params, options) ??
      this.#read(JobKind.SelectOne, sql, params, options)
    )
  }

  /** On a `Database`: runs on a reader connection, or, inside a transaction body, in the
   * transaction.
   * @inheritDoc */
  selectBytes(sql: string, params?: Params, options?: Omit<QueryOptions, 'rowMode'>): Promise<Buffer> {
    return (
      this.#context.getStore()?.selectBytes(sql, params, options) ??
      this.#read(JobKind.SelectBytes, sql, params, options)
    )
  }

  /** On a `Database`: on a connection of its own (reads meanwhile, in the loop's body too, go
   * on as usual), or, inside a transaction body, in the transaction.
   * @inheritDoc */
  iterate<T = Row, O extends IterateOptions = IterateOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): RowIterator<IteratedRow<T, O>> {
    type R = IteratedRow<T, O>
    const tx = this.#context.getStore()
    if (tx) return tx.iterate<T, O>(sql, params, options)
    return iteration<R>(
      sql,
      params,
      options,
      (packed, pageRows, arrays) =>
        this.#afterWrites(this.#engine.iterate<R>(sql, packed, pageRows, undefined, arrays)),
      () => (this.#closing ? closedError() : undefined),
      this.#engine,
      false,
    )
  }

  /** On a `Database`: waits its turn on the writer behind earlier writes and any open
   * transaction, or, inside a transaction body, runs in the transaction.
   * @inheritDoc */
  execute<T = Row, O extends ExecuteOptions = ExecuteOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<ExecuteResult<T, O>> {
    return (
      this.#context.getStore()?.execute<T, O>(sql, params, options) ??
      this.#write(JobKind.Execute, sql, encodeParams, params, options)
    )
  }

  /** On a `Database`: prepared on a reader connection, or, inside a transaction body, in the
   * transaction.
   * @inheritDoc */
  columns(sql: string): Promise<ColumnInfo[]> {
    return this.#context.getStore()?.columns(sql) ?? this.#read(JobKind.Columns, sql, undefined, undefined)
  }

  /** On a `Database`: waits its turn on the writer behind earlier writes and any open
   * transaction, or, inside a transaction body, joins the transaction.
   * @inheritDoc */
  executeBatch(sql: string, paramSets: readonly Params[], options?: unknown): Promise<BatchResult> {
    // `options`: none are taken; any given (a signal, a typo) is refused, not ignored.
    return (
      this.#context.getStore()?.executeBatch(sql, paramSets, options) ??
      this.#write(JobKind.Batch, sql, encodeBatch, paramSets, options as undefined)
    )
  }

  /** On a `Database`: the transaction holds the writer from `BEGIN` to `COMMIT`, across the
   * body's awaits; other writes wait their turn. Inside a transaction body it nests as a
   * savepoint of the innermost transaction.
   *
   * @param options - `mode` and `signal` of the outermost transaction ({@link TransactionOptions});
   *   a nested one takes none (`ERR_INVALID_ARG_VALUE`). Aborting `signal` rolls back and rejects
   *   with `ABORT_ERR`.
   * @inheritDoc */
  transaction<T>(body: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T> {
    const current = this.#context.getStore()
    if (inFunction()) return rejected(callInFunctionError())
    if (current) return current.transaction(body, options as undefined)
    if (!traced(transactionChannel)) return this.#transactionOutermost(body, options)
    const mode = (options as { mode?: unknown } | undefined)?.mode
    return traceOperation(
      transactionChannel,
      { operation: 'transaction', database: this.#path, mode: typeof mode === 'string' ? mode : 'deferred' },
      () => this.#transactionOutermost(body, options),
    )
  }

  #transactionOutermost<T>(body: (tx: Transaction) => Promise<T>, options: TransactionOptions | undefined): Promise<T> {
    if (this.#closing) return Promise.reject(closedError())
    let mode: string
    let signal: AbortSignal | undefined
    try {
      checkBody(body)
      ;({ mode, signal } = checkTransactionOptions(options))
    } catch (error) {
      return rejected(error)
    }
    if (this.#readonly) return Promise.reject(readonlyError('BEGIN', this.#replica))
    if (signal?.aborted) return Promise.reject(abortError(signal, 'transaction'))
    return this.#transaction(body, mode, signal)
  }

  /** Encrypts, re-keys, changes the cipher of, or (`null`) decrypts the database
   * (docs/encryption.md "Rekey"). Runs on the writer in turn with other writes; readers reopen
   * with the new key. Not inside a transaction.
   *
   * @param newKey - A passphrase, raw key bytes (see `OpenOptions.encryptionKey`), or `null`
   *   to decrypt.
   * @param options - `cipher`: the cipher to re-encrypt with; default, the one in use.
   * @returns Resolves once every connection uses the new key. Rejects with
   *   `ERR_REKEY_IN_TRANSACTION`, `ERR_DATABASE_READONLY`, `ERR_REKEY` (also for a database
   *   opened with `attach`), `ERR_ENCRYPTION_CONFIG` or SQLite's codes; a rekey that fails
   *   before the swap leaves the database under its old key. */
  rekey(newKey: string | Uint8Array | null, options?: RekeyOptions): Promise<void> {
    // Inside a function it would wait on the writer, which may be waiting for that function.
    if (inFunction()) return rejected(callInFunctionError())
    if (this.#context.getStore()) {
      return Promise.reject(
        new ResqliteError(
          'ERR_REKEY_IN_TRANSACTION',
          'rekey cannot run inside a transaction; call it outside the transaction body',
        ),
      )
    }
    if (this.#closing) return Promise.reject(closedError())
    let enc: ReturnType<typeof checkRekey>
    try {
      enc = checkRekey(newKey, options, this.#cipher)
    } catch (error) {
      return rejected(error)
    }
    if (this.#readonly) {
      enc?.key.fill(0)
      return Promise.reject(
        this.#replica
          ? new ResqliteError(
              'ERR_DATABASE_REPLICA',
              'the database is a read replica (opened with replica: true): rekey the primary',
            )
          : new ResqliteError(
              'ERR_DATABASE_READONLY',
              'the database was opened with readonly: true; rekey needs the writer',
            ),
      )
    }
    if (this.#attached) {
      // The connections reattach with the main database's key after a rekey: attached files
      // still under the old key would no longer open.
      enc?.key.fill(0)
      return Promise.reject(
        new ResqliteError('ERR_REKEY', 'rekey re-encrypts the main database only; open it without attach to rekey it'),
      )
    }
    return this.#rekey(enc)
  }

  /** Copies the database into a new file with SQLite's online backup API, in steps on a thread
   * of its own, while reads and writes go on (docs/api.md "backup"). The copy is the database
   * as it was when the backup began, encrypted like it (same key and cipher).
   *
   * @param destination - The new file's path; an existing file is never replaced.
   * @param options - `signal` to abort, `progress` to hear of each step ({@link BackupOptions}).
   * @returns Resolves once the copy is complete at `destination`. Rejects with
   *   `ERR_INVALID_PATH` (an existing destination, `''`), `ABORT_ERR`, SQLite's codes
   *   (`SQLITE_CANTOPEN` for a missing directory, …), `ERR_DATABASE_CLOSED`, or a `TypeError` for
   *   a bad argument; nothing is left at `destination` then. */
  backup(destination: string, options?: BackupOptions): Promise<void> {
    if (inFunction()) return rejected(callInFunctionError())
    if (this.#closing) return Promise.reject(closedError())
    let checked: BackupOptions
    try {
      checked = checkBackup(destination, options)
    } catch (error) {
      return rejected(error)
    }
    if (checked.signal?.aborted) return Promise.reject(abortError(checked.signal, 'backup'))
    return awaitedAway(this.#backingUp(this.#engine.backup(destination, checked.signal, checked.progress)))
  }

  /** `running`, counted among the backups a rekey and close wait for until it settles. */
  #backingUp<T>(running: Promise<T>): Promise<T> {
    const settled = running.catch(() => undefined).finally(() => this.#backups.delete(settled))
    this.#backups.add(settled)
    return running
  }

  /** The database's image (`sqlite3_serialize`) as one `Buffer`, read on a reader: the committed
   * state, decrypted (an encrypted database's image is plaintext). For small databases: the
   * whole image is held in memory, twice while it is handed over.
   *
   * @returns The image, a database file's bytes. Rejects with `ERR_DATABASE_CLOSED`,
   *   `ERR_RESULT_TOO_LARGE` or SQLite's codes. */
  serialize(): Promise<Buffer> {
    if (inFunction()) return rejected(callInFunctionError())
    if (this.#closing) return Promise.reject(closedError())
    return this.#engine.read(JobKind.Serialize, 'serialize', NO_PARAMS, undefined)
  }

  async #rekey(enc: ReturnType<typeof checkRekey>): Promise<void> {
    // Holding the writer's turn: writes called earlier finish first, later ones wait, and
    // close() waits for the rekey.
    await this.#turns.acquire()
    try {
      while (this.#backups.size > 0) await Promise.all(this.#backups)
      await this.#engine.rekey(enc)
      this.#cipher = enc?.cipher
    } finally {
      enc?.key.fill(0)
      this.#turns.release()
    }
  }

  /** Lets queued and running work finish (an open transaction too), completes every live
   * query subscription, closes every connection and joins every thread. Idempotent: every call
   * returns the same promise. Calls made after `close()` reject with `ERR_DATABASE_CLOSED`.
   * Inside a transaction body it rejects with `ERR_CLOSE_IN_TRANSACTION` and closes nothing. */
  close(): Promise<void> {
    if (!traced(closeChannel)) return this.#close()
    return traceOperation(closeChannel, { operation: 'close', database: this.#path }, () => this.#close())
  }

  #close(): Promise<void> {
    if (inFunction()) return rejected(callInFunctionError())
    // It would wait for the transaction, which waits for its body: a deadlock.
    if (this.#context.getStore()?.running) {
      return Promise.reject(
        new ResqliteError(
          'ERR_CLOSE_IN_TRANSACTION',
          'close() cannot run inside a transaction body: it waits for the transaction to finish; ' +
            'call it after db.transaction() settles',
        ),
      )
    }
    if (this.#closing) return this.#closing
    clearInterval(this.#watch)
    this.#live.closeAll()
    // Statements kept after close keep nothing of the database (their calls reject).
    this.#statements?.close()
    this.#closing = this.#turns
      .idle()
      .then(() => Promise.all(this.#readsWaiting))
      // A paused backup's start or step running: the engine's close finishes the backups.
      .then(() => Promise.all(this.#backups))
      .then(() => this.#engine.close())
      .finally(() => this.#memoryDir && rm(this.#memoryDir, { recursive: true, force: true }))
    return this.#closing
  }

  /** resqlite/sqlite3's 'change' event: `sink` receives the rows writes change; undefined stops. */
  [ROW_CHANGES](sink: RowChangesSink | undefined): void {
    this.#engine.rowChanges(sink)
  }

  /** resqlite/sqlite3's Backup: a backup into the new file `destination`, paused before its
   * first step, that reads from a connection of its own and holds no transaction between steps
   * (crates/engine/src/threads/paused_backups.rs). Rejects with `ERR_INVALID_PATH` (the file
   * exists), SQLite's codes (`SQLITE_CANTOPEN`) or `ERR_DATABASE_CLOSED`; then nothing is left. */
  async [PAUSED_BACKUP](destination: string): Promise<PausedBackup> {
    if (this.#closing) throw closedError()
    const engine = this.#engine
    const id = await this.#backingUp(engine.backupStart(destination))
    return {
      step: (pages, progress) =>
        this.#closing ? Promise.reject(closedError()) : this.#backingUp(engine.backupStep(id, pages, progress)),
      finish: () => (this.#closing ? Promise.resolve() : this.#backingUp(engine.backupFinish(id))),
    }
  }

  /** Test hook: a write job that panics inside the engine. */
  [DEBUG_PANIC](): Promise<RunResult> {
    return this.#write(JobKind.Panic, 'panic', noParams, undefined)
  }

  /** Every `interval` ms while a live query exists: has another connection committed? The
   * check runs on the writer (whose data_version ignores its own commits), or on a reader for
   * a read-only database (which has no writer of its own). */
  #watchExternalChanges(interval: number): void {
    let checking = false
    this.#watch = setInterval(() => {
      if (checking || this.#live.size === 0 || this.#closing) return
      checking = true
      const check = this.#readonly
        ? this.#engine.read(JobKind.DataVersion, 'PRAGMA data_version', NO_PARAMS, undefined)
        : this.#engine.write(JobKind.DataVersion, 'PRAGMA data_version', NO_PARAMS)
      check.then(
        () => (checking = false),
        () => (checking = false),
      )
    }, interval).unref()
  }

  #transaction<T>(body: (tx: Transaction) => Promise<T>, mode: string, signal: AbortSignal | undefined): Promise<T> {
    if (!this.#turns.tryAcquire()) {
      return this.#turns.acquire(signal, 'transaction').then(() => this.#begin(body, mode, signal))
    }
    return this.#begin(body, mode, signal)
  }

  /** Holding the writer's turn: BEGIN, then the body. The transaction gives the turn back as it
   * ends (not an async function awaiting it here: each async level costs every transaction a
   * turn of the microtask queue; experiments/059). */
  #begin<T>(body: (tx: Transaction) => Promise<T>, mode: string, signal: AbortSignal | undefined): Promise<T> {
    let begun: Promise<unknown>
    try {
      // A deferred BEGIN may run at once on the idle writer's connection (it takes no lock).
      const begin = `BEGIN ${mode.toUpperCase()}`
      begun =
        (mode === 'deferred' ? this.#engine.jsThread.controlInline(begin, false) : undefined) ??
        this.#engine.write(JobKind.Control, begin, NO_PARAMS)
    } catch (error) {
      this.#turns.release()
      return rejected(error)
    }
    const transaction = new Transaction(this.#engine, this.#context, this.#path)
    // A deferred BEGIN takes no lock, so the body need not wait for it; 'immediate' and
    // 'exclusive' promise the lock is held once the body runs (experiments/014).
    if (mode === 'deferred') return transaction.run(body, begun, signal, this.#turns)
    return begun.then(
      () => transaction.run(body, begun, signal, this.#turns),
      (error: unknown) => {
        this.#turns.release()
        throw error
      },
    )
  }

  #read<T>(kind: JobKind, sql: string, params: Params | undefined, options: QueryOptions | undefined): Promise<T> {
    const operation = tracedQuery(kind)
    if (operation !== undefined) {
      return traceQuery(this.#engine, operation, sql, false, false, () =>
        this.#readUntraced<T>(kind, sql, params, options),
      )
    }
    return this.#readUntraced(kind, sql, params, options)
  }

  #readUntraced<T>(
    kind: JobKind,
    sql: string,
    params: Params | undefined,
    options: QueryOptions | undefined,
  ): Promise<T> {
    if (this.#closing) return Promise.reject(closedError())
    let call: PreparedCall
    try {
      call = prepareCall(sql, options, encodeParams, params, kind === JobKind.SelectBytes ? 'bytes' : 'read')
    } catch (error) {
      return rejected(error)
    }
    return this.#readPrepared(kind, sql, call)
  }

  /** A read whose arguments are checked and packed (`#read`, a Statement's call). */
  #readPrepared<T>(kind: JobKind, sql: string, { packed, signal, arrays }: PreparedCall): Promise<T> {
    try {
      const before = this.#writesBeforeRead()
      if (before === undefined) return this.#engine.read(kind, sql, packed, signal, arrays)
      this.#engine.placed = Where.None // placed once the write has run (#readAfter)
      // Issued before close(): it runs before the engine closes (close() waits for it).
      return this.#closeWaitsFor(this.#readAfter<T>(before, kind, sql, copyPacked(packed), signal, arrays))
    } catch (error) {
      return rejected(error)
    }
  }

  /** An iteration whose first page waits for the writes its flow issued before it started.
   * That page was asked for before close(), which waits for it as for a read: sent after the
   * engine closed, it would never settle. */
  #afterWrites<T>(pages: PageSource<T>): PageSource<T> {
    const before = this.#writesBeforeRead()
    if (before === undefined) return pages
    let first: Promise<void> | undefined = before
    return {
      next: () => {
        if (first === undefined) return pages.next()
        const wait = first
        first = undefined
        return this.#closeWaitsFor(wait.then(() => pages.next()))
      },
      end: () => pages.end(),
    }
  }

  /** A read that waits for earlier writes before it reaches the engine: close() waits for it. */
  #closeWaitsFor<T>(read: Promise<T>): Promise<T> {
    const settled = read.then(NOTHING, NOTHING)
    this.#readsWaiting.add(settled)
    settled.then(() => this.#readsWaiting.delete(settled))
    return read
  }

  /** A Statement's call (statement.ts), its arguments checked and packed: in the transaction
   * of the body it is called in, else as the same `db.*` call runs. */
  #runPrepared<T>(kind: JobKind, sql: string, call: PreparedCall): Promise<T> {
    const tx = this.#context.getStore()
    if (tx) return tx.runPrepared<T>(kind, sql, call)
    if (this.#closing) return Promise.reject(closedError())
    return kind === JobKind.Execute || kind === JobKind.Batch
      ? this.#writePrepared<T>(kind, sql, call)
      : this.#readPrepared<T>(kind, sql, call)
  }

  /** What a read issued now waits for to see every standalone write its own flow issued before
   * it: the last of them, if it has not settled (writes settle in call order); undefined when
   * there is none. A write group holding it commits now. */
  #writesBeforeRead(): Promise<void> | undefined {
    if (this.#pending.writes === 0) return undefined
    const issued = markOf(FLOWS.getStore(), this.#pending)
    if (issued === undefined || !issued.pending) return undefined
    this.#engine.jsThread.runGroupNow()
    // Committing the group may have committed the flow's write.
    return issued.pending ? issued.settled : undefined
  }

  /** Marks the current flow as having issued a write: one that settles with `pending`, or one
   * that joined the write group `pending`. */
  #issued(pending: Promise<void> | WriteGroup | undefined): void {
    if (pending === undefined) return
    const marks = FLOWS.getStore()
    if (!(pending instanceof WriteGroup)) {
      FLOWS.enterWith(marked(marks, new IssuedWrite(pending, this.#pending)))
      return
    }
    const last = pending.writes.length - 1
    // Writes a flow issues together into one write group: one mark, at the last of them.
    const current = markOf(marks, this.#pending)
    if (current?.group === pending && current.pending) {
      current.last = last
      return
    }
    FLOWS.enterWith(marked(marks, new IssuedWrite(pending.finished, this.#pending, pending, last)))
  }

  async #readAfter<T>(
    before: Promise<void>,
    kind: JobKind,
    sql: string,
    packed: Packed,
    signal: AbortSignal | undefined,
    arrays: boolean,
  ): Promise<T> {
    const trace = this.#engine.trace
    await (signal ? abortable(before, signal, sql) : before)
    const read = sendAfterWaiting(this.#engine, trace, () => this.#engine.read<T>(kind, sql, packed, signal, arrays))
    placedLater(trace, this.#engine)
    return read
  }

  /** Sends a write now, or — while a transaction holds the writer — once every earlier
   * writer of the queue has had its turn. */
  #write<T>(
    kind: JobKind,
    sql: string,
    pack: (params: unknown) => Packed,
    params: unknown,
    options?: ExecuteOptions,
  ): Promise<T> {
    const operation = tracedQuery(kind)
    if (operation !== undefined) {
      return traceQuery(this.#engine, operation, sql, false, false, () =>
        this.#writeUntraced<T>(kind, sql, pack, params, options),
      )
    }
    return this.#writeUntraced(kind, sql, pack, params, options)
  }

  #writeUntraced<T>(
    kind: JobKind,
    sql: string,
    pack: (params: unknown) => Packed,
    params: unknown,
    options?: ExecuteOptions,
  ): Promise<T> {
    if (this.#closing) return Promise.reject(closedError())
    let call: PreparedCall
    try {
      call = prepareCall(sql, options, pack, params, kind === JobKind.Batch ? 'batch' : 'write')
    } catch (error) {
      return rejected(error)
    }
    return this.#writePrepared(kind, sql, call)
  }

  /** A write whose arguments are checked and packed (`#write`, a Statement's call). */
  #writePrepared<T>(kind: JobKind, sql: string, { packed, arrays }: PreparedCall): Promise<T> {
    if (this.#readonly) return Promise.reject(readonlyError(sql, this.#replica))
    if (this.#turns.free) {
      // Nothing holds or waits for the writer: a bounded execute may run on the JS thread.
      const jsThread = this.#engine.jsThread
      const done = writeMayRunInline(kind) ? jsThread.writeInline<T>(sql, packed, undefined) : undefined
      const written = done ?? jsThread.inOrder(this.#engine.write<T>(kind, sql, packed, undefined, arrays), false)
      this.#issued(jsThread.takePendingWrite())
      return written
    }
    const queued = copyPacked(packed)
    const trace = this.#engine.trace
    this.#engine.placed = Where.Writer
    const written = new Promise<T>((resolve, reject) => {
      this.#turns.write(() => {
        sendAfterWaiting(this.#engine, trace, () => this.#engine.write<T>(kind, sql, queued, undefined, arrays)).then(
          resolve,
          reject,
        )
      })
    })
    this.#issued(written.then(NOTHING, NOTHING))
    // It settles in more turns than a write sent at once: one issued after it waits for it.
    return this.#engine.jsThread.inOrder(written, true)
  }
}

function readonlyError(sql: string, replica: boolean): ResqliteError {
  if (replica) {
    return new ResqliteError(
      'ERR_DATABASE_REPLICA',
      'the database is a read replica (opened with replica: true): write on the primary',
      sql,
    )
  }
  return new ResqliteError('ERR_DATABASE_READONLY', 'the database was opened with readonly: true', sql)
}

/** The last standalone write each async flow issued to each database (the code that runs after
 * it, awaits or not, and what it calls): a read in that flow waits for it (`#writesBeforeRead`).
 * Writes issued by other flows (a server's other requests) are seen once they committed, so
 * reads never wait for someone else's long write (experiments/051). One store for every
 * database, holding a flow's marks still pending: Node 24's `enterWith` copies every store the
 * flow holds, so one store a database made a flow that wrote to 1,000 databases copy 1,000
 * entries a write (experiments/074). */
const FLOWS = new AsyncLocalStorage<readonly IssuedWrite[]>()

/** This database's mark (`owner`: its `#pending`) among a flow's. */
function markOf(marks: readonly IssuedWrite[] | undefined, owner: object): IssuedWrite | undefined {
  if (marks !== undefined) for (const mark of marks) if (mark.owner === owner) return mark
  return undefined
}

/** A flow's marks with `mark` in place of its database's: those of other databases that have
 * run are dropped, so the list holds only writes not run yet. */
function marked(marks: readonly IssuedWrite[] | undefined, mark: IssuedWrite): readonly IssuedWrite[] {
  const kept = [mark]
  if (marks !== undefined) for (const m of marks) if (m.owner !== mark.owner && m.pending) kept.push(m)
  return kept
}

/** A standalone write an async flow issued: pending until it has run, counted in
 * `count.writes` until `settled`. */
class IssuedWrite {
  /** The database it was issued to (its `#pending`). */
  readonly owner: { writes: number }
  /** Settles (never rejects) once it has run. */
  readonly settled: Promise<void>
  /** The write group it joined, and the place in it of the flow's last write there; let go
   * once it has run (the flow may keep this mark long after, and the group holds its writes'
   * parameters). */
  group: WriteGroup | undefined
  last: number
  #ran = false

  constructor(source: Promise<void>, count: { writes: number }, group?: WriteGroup, last = 0) {
    this.owner = count
    this.group = group
    this.last = last
    count.writes++
    this.settled = source.then(() => {
      this.#ran = true
      this.group = undefined
      count.writes--
    })
  }

  /** Not run yet. A write its group committed on the JS thread has run, though the group's
   * promise settles later: after the group's last write, which may have gone on to the writer
   * thread as another flow's long write. Waiting for that promise held this flow's reads behind
   * that write, and made its next read commit the next group early (experiments/063). */
  get pending(): boolean {
    return !this.#ran && !(this.group !== undefined && this.group.committed > this.last)
  }
}
