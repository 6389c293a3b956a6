// The public option and result types, and Queryable: the query methods Database and
// Transaction share.
import type { ArrayRow, ArrayRows, Row as DecodedRow } from './decode'
import type { RowIterator } from './iterate'
import type { LiveQueryCounters } from './live-queries'
import type { Params } from './params'
import type { Transaction } from './transaction'

/** One result row: a plain object with a property per column, named by the column's name (or
 * alias), in column order. Values by SQLite type (docs/values-and-errors.md "Values"): NULL →
 * `null`, INTEGER → `number` (or `bigint` with `safeIntegers`), REAL → `number`, TEXT →
 * `string`, BLOB → `Buffer`. The query methods take a type argument (`db.select<User>(…)`) to
 * name the row's shape; it is not checked. */
export type Row = DecodedRow

export type { ArrayRow, ArrayRows }

/** How rows come back (`rowMode` of {@link QueryOptions} and {@link ExecuteOptions}): `'object'`
 * (the default) makes each row an object keyed by column name; `'array'` makes it an array of
 * its values in column order and resolves the column names beside the rows, so two columns of
 * the same name (`SELECT 1 AS a, 2 AS a`) stay apart. */
export type RowMode = 'object' | 'array'

/** What `select` resolves with: `T[]`, or {@link ArrayRows} with `rowMode: 'array'`. */
export type SelectResult<T, O> = O extends { rowMode: 'array' } ? ArrayRows : T[]
/** What `selectOne` resolves with: `T | undefined`, or {@link ArrayRow} with `rowMode: 'array'`. */
export type SelectOneResult<T, O> = O extends { rowMode: 'array' } ? ArrayRow : T | undefined
/** An iteration's row: `T`, or an array of the values with `rowMode: 'array'`. */
export type IteratedRow<T, O> = O extends { rowMode: 'array' } ? unknown[] : T
/** What `execute` resolves with: {@link RunResult}, or {@link ArrayRunResult} with
 * `rowMode: 'array'`. */
export type ExecuteResult<T, O> = O extends { rowMode: 'array' } ? ArrayRunResult : RunResult<T>

/** One result column of a statement ({@link Queryable.columns}). */
export interface ColumnInfo {
  /** The column's name (its alias, if it has one), as rows are keyed. */
  name: string
  /** The declared type of the table column it reads (`'INTEGER'`, `'TEXT'`, `'VARCHAR(20)'`,
   * …, as written in `CREATE TABLE`), or `null` for an expression or a column declared
   * without a type. */
  declaredType: string | null
}

/** The query methods a {@link Database} and a {@link Transaction} share, so one helper can take
 * either: `async function addUser(q: Queryable, name: string) { … }`.
 *
 * - On a `Database`, reads run on a reader connection (in parallel, seeing the last committed
 *   state) and writes on the writer, one at a time in call order. Called inside a transaction
 *   body, directly or from any function it calls, they are routed to that transaction.
 * - On a `Transaction`, every call runs on the writer inside the transaction and sees its
 *   uncommitted writes.
 *
 * Errors never throw synchronously: the promise rejects, with a `ResqliteError` (its `code` is a
 * {@link ResqliteErrorCode}) for what SQLite, the engine or the library refuses, or with a
 * `TypeError`/`RangeError` for a malformed argument (then nothing is sent). Calls after
 * `db.close()` reject with `ERR_DATABASE_CLOSED`; a transaction's calls after its body finished,
 * with `ERR_TRANSACTION_FINISHED`. */
export interface Queryable {
  /** Runs one read-only statement and resolves with all its rows.
   *
   * @typeParam T - The row's shape, as the caller declares it (not checked). Default {@link Row}.
   * @param sql - One statement that does not write.
   * @param params - Its parameters: an array binds by position (`?`, `?NNN`), a plain object by
   *   name (`{ id: 1 }` binds `:id`, `@id` or `$id`). Omit, or pass `[]`, for none.
   * @param options - `signal`: aborting rejects the call with `ABORT_ERR` (a read on a reader is
   *   interrupted; inside a transaction the statement finishes and its result is dropped).
   *   `rowMode: 'array'`: rows as arrays, resolved as `{ columns, rows }` ({@link ArrayRows}).
   * @returns The rows, in the order SQLite steps them; `[]` when there are none. Rejects with
   *   `ERR_NOT_READ_ONLY` (a statement that writes, begins or ends a transaction),
   *   `ERR_MULTIPLE_STATEMENTS`, `ERR_EMPTY_STATEMENT`, `ERR_PARAMETER_COUNT`,
   *   `ERR_PARAMETER_NAME`, `ERR_INVALID_UTF8`, `ERR_RESULT_TOO_LARGE`, `ABORT_ERR`, SQLite's
   *   codes (`SQLITE_ERROR` for bad SQL), or, without `safeIntegers`, a `RangeError` for an
   *   INTEGER beyond ±(2^53−1). */
  select<T = Row, O extends QueryOptions = QueryOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<SelectResult<T, O>>

  /** Like {@link Queryable.select}, but resolves with the first row only, or `undefined` when
   * there is none; SQLite stops stepping after that row.
   *
   * @typeParam T - The row's shape, as the caller declares it (not checked). Default {@link Row}.
   * @param sql - One statement that does not write.
   * @param params - Its parameters, by position (array) or by name (object); see `select`.
   * @param options - `signal`: aborting rejects the call with `ABORT_ERR`. `rowMode: 'array'`:
   *   resolves `{ columns, row }` ({@link ArrayRow}), `row` an array or `undefined`.
   * @returns The first row, or `undefined`. Rejects as `select` does. */
  selectOne<T = Row, O extends QueryOptions = QueryOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<SelectOneResult<T, O>>

  /** Like {@link Queryable.select}, but resolves with the rows as a JSON array in a `Buffer`
   * (UTF-8), built natively without making row objects: byte for byte
   * `JSON.stringify(await select(sql, params))`, ready to send as an HTTP body. Values
   * `JSON.stringify` cannot express: BLOB → base64 string, INTEGER beyond ±(2^53−1) → its exact
   * digits, non-finite REAL → `null`.
   *
   * @param sql - One statement that does not write.
   * @param params - Its parameters, by position (array) or by name (object); see `select`.
   * @param options - `signal`: aborting rejects the call with `ABORT_ERR`. No `rowMode` (a
   *   `TypeError`, `ERR_INVALID_ARG_VALUE`): the JSON always holds objects.
   * @returns The JSON text (`[]` for no rows). Rejects as `select` does (never with the
   *   `RangeError` for large integers). */
  selectBytes(sql: string, params?: Params, options?: Omit<QueryOptions, 'rowMode'>): Promise<Buffer>

  /** The rows of one read-only statement a page at a time, for results that should never be
   * whole (docs/api.md "iterate"): memory stays flat whatever the result's size. Iterate it
   * with `for await (const row of …)`, or take pages with `.pages()`; read it once. The query
   * starts when the iteration does; every row comes from one snapshot, a read transaction held
   * from the first page to the last (meanwhile the WAL cannot be checkpointed past it, so it
   * grows while writes go on). `break`, `return`, a throw out of the loop or `signal` ends it
   * and frees its statement.
   *
   * @typeParam T - The row's shape, as the caller declares it (not checked). Default {@link Row}.
   * @param sql - One statement that does not write.
   * @param params - Its parameters, by position (array) or by name (object); see `select`.
   * @param options - `signal` ends the iteration (`ABORT_ERR`); `pageRows` (1–1,000,000,
   *   default 1,000) is how many rows cross at a time; `rowMode: 'array'` makes each row an
   *   array (the iterator's `columns` names its elements).
   * @returns A {@link RowIterator}. Its first step rejects as `select` does (a bad argument
   *   with a `TypeError`/`RangeError`), or with `ERR_DATABASE_CLOSED`,
   *   `ERR_TRANSACTION_FINISHED`; reading it a second time throws `ERR_ITERATION_STARTED`. */
  iterate<T = Row, O extends IterateOptions = IterateOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): RowIterator<IteratedRow<T, O>>

  /** Runs a statement on the writer and resolves once it is done (committed, unless inside a
   * transaction). Without parameters, SQL holding several statements runs them all, in order;
   * they are not atomic (the ones before a failing statement stay applied): wrap them in
   * `transaction` for all-or-nothing.
   *
   * A single statement that returns columns (`INSERT … RETURNING`, and any statement with
   * result columns) resolves its rows too, in `rows`; they are stepped on the writer like any
   * write, so live queries see what it changed. A script's statements return no rows.
   *
   * @typeParam T - The shape of a returned row, as the caller declares it (not checked).
   * @param sql - A statement, or (without `params`) several separated by `;`.
   * @param params - Its parameters, by position (array) or by name (object); see `select`.
   * @param options - `rowMode: 'array'`: returned rows as arrays, with their `columns`
   *   ({@link ArrayRunResult}). No `signal`: a write runs to its end.
   * @returns `changes`, `lastInsertRowid` and, for a statement that returns columns, `rows`
   *   ({@link RunResult}). Rejects with SQLite's codes
   *   (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY`, …), `ERR_MULTIPLE_STATEMENTS` (several
   *   statements with parameters), `ERR_EMPTY_STATEMENT`, `ERR_PARAMETER_COUNT`,
   *   `ERR_PARAMETER_NAME`, `ERR_DATABASE_READONLY`, `ERR_OPEN_TRANSACTION` (a `BEGIN` left
   *   open: it is rolled back; use `transaction`) or, inside a transaction,
   *   `ERR_TRANSACTION_CONTROL` (a `COMMIT`/`ROLLBACK`/`SAVEPOINT`/`RELEASE` statement) and
   *   `ERR_TRANSACTION_ROLLED_BACK`. */
  execute<T = Row, O extends ExecuteOptions = ExecuteOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<ExecuteResult<T, O>>

  /** The result columns of one statement, with their declared types: the statement is
   * prepared (on a reader, or inside a transaction on the writer, so it sees the
   * transaction's schema) and never run, so any statement may be asked about, writes
   * included (their RETURNING columns; `[]` for none).
   *
   * @param sql - One statement.
   * @returns One {@link ColumnInfo} per result column, in order. Rejects with
   *   `ERR_MULTIPLE_STATEMENTS`, `ERR_EMPTY_STATEMENT` or SQLite's codes (`SQLITE_ERROR` for
   *   bad SQL or a missing table). */
  columns(sql: string): Promise<ColumnInfo[]>

  /** Runs one statement once per parameter set, in one native loop, all or nothing: inside its
   * own `BEGIN IMMEDIATE`, or, inside a transaction, a savepoint of it. A failing set rolls the
   * whole batch back; the error's message names the set.
   *
   * @param sql - One statement.
   * @param paramSets - One parameter array or object per run. `[]` runs nothing and resolves
   *   `{ changes: 0 }`.
   * @returns The rows changed, summed over every run ({@link BatchResult}). Rejects as
   *   `execute` does, and with `ERR_MULTIPLE_STATEMENTS` for SQL holding several statements. */
  executeBatch(sql: string, paramSets: readonly Params[]): Promise<BatchResult>

  /** Runs `body` in a transaction (docs/transactions.md): `BEGIN` before it, `COMMIT` after the
   * promise it returns resolves, `ROLLBACK` if it rejects. Inside a transaction it nests as a
   * `SAVEPOINT`: a rejection rolls back the savepoint's work only.
   *
   * @param body - An async function; its `tx` runs statements in the transaction (and so does
   *   `db.*` called anywhere inside it). It must return a promise (else a `TypeError`,
   *   `ERR_INVALID_RETURN_VALUE`).
   * @returns The value the body's promise resolved with, once committed. Rejects with the
   *   body's own error after rolling back, a failed `COMMIT`'s error,
   *   `ERR_TRANSACTION_ROLLED_BACK` when SQLite rolled back on its own, or
   *   `ERR_DATABASE_READONLY`. `Database.transaction` also takes `mode` and `signal`
   *   ({@link TransactionOptions}). */
  transaction<T>(body: (tx: Transaction) => Promise<T>): Promise<T>
}

/** Options of {@link Database.open}. Unknown keys are refused (`ERR_INVALID_ARG_VALUE`). */
export interface OpenOptions {
  /** Read-only connections that serve reads in parallel, opened as reads need them and run
   * by the engine's threads, which every database in the process shares: 1–64.
   * Default: the number of CPUs minus one, at least 2 and at most 4. */
  readers?: number
  /** Milliseconds a connection waits for a lock another process holds before failing with
   * `SQLITE_BUSY`: 0–2^31−1. Default 5000. */
  busyTimeout?: number
  /** Open without a writer: `execute`, `executeBatch`, `transaction` and `rekey` reject with
   * `ERR_DATABASE_READONLY`. Default false. */
  readonly?: boolean
  /** A read replica kept up to date by a replication engine such as LiteFS
   * (docs/replication.md): opened read-only; `execute`, `executeBatch`, `transaction` and
   * `rekey` reject with `ERR_DATABASE_REPLICA`; and `watchExternalChanges` defaults to
   * `{ interval: 10 }`, so live queries follow the primary's commits. Default false. */
  replica?: boolean
  /** Return every INTEGER as a `bigint` (and `lastInsertRowid` too). Default false: INTEGERs are
   * numbers, and one beyond ±(2^53−1) is a `RangeError`. */
  safeIntegers?: boolean
  /** Milliseconds a read (`select`, `selectOne`, `selectBytes` outside a transaction) may run on
   * the JS thread, on a read-only connection of its own, before it moves to a reader thread:
   * 0–10. A small query costs less there than the hop to a thread and back; one that runs past
   * the budget is interrupted, runs again on a reader (the promise settles once, with the
   * reader's result), and skips the JS thread for a while. Inside a transaction its bounded
   * writes and a small COMMIT run there too (docs/api.md, experiments/036). 0: SQLite never runs
   * on the JS thread. Default 0.1 (docs/performance.md, experiments/032). */
  inlineBudget?: number
  /** Encrypts the database (docs/encryption.md): a passphrase, or raw key bytes for the ciphers
   * that take them (chacha20, sqlcipher, ascon128: 32 bytes; aegis: 16 or 32 by algorithm;
   * optionally followed by the 16-byte KDF salt). Applied to every connection before anything
   * else; never stored in JavaScript. */
  encryptionKey?: string | Uint8Array
  /** The cipher of an encrypted database. Default `'chacha20'`. Needs `encryptionKey`. */
  cipher?: Cipher
  /** Re-run live queries when another process or connection commits to the file, checked
   * with `PRAGMA data_version` every `interval` ms (default 1000) while a live query is
   * subscribed (at least 10). Off by default: each check is one small job for the writer. */
  watchExternalChanges?: boolean | { interval?: number }
  /** Databases to attach on every connection, by schema name: `{ aux: 'aux.db' }` makes
   * `aux.t` readable everywhere (live queries included) and writable through the writer. Each
   * file is created if needed and put in WAL mode; an encrypted database's attachments use its
   * key. (An `ATTACH` run through `execute` reaches the writer only.) */
  attach?: Record<string, string>
  /** Who checkpoints the WAL into the database file. `'auto'` (default): the writer, PASSIVE
   * past 1,000 WAL pages, the WAL cut back to 16 MiB when it starts over. `'external'`: no
   * connection ever checkpoints (`wal_autocheckpoint = 0`, none on close); another process
   * must, or the WAL grows without bound: Litestream, which checkpoints itself
   * (docs/replication.md). */
  checkpoints?: 'auto' | 'external'
  /** What reading TEXT that is not valid UTF-8 does (rows, `selectBytes`, `iterate`, live
   * queries alike). `'error'` (default): the call rejects with `ERR_INVALID_UTF8` naming the
   * column and row, so no byte is lost unnoticed. `'replace'`: each invalid sequence becomes
   * U+FFFD, as better-sqlite3 and node:sqlite return it (TextDecoder's rule), so a legacy row
   * cannot make a table unreadable; the original bytes stay readable with `CAST(col AS BLOB)`. */
  invalidUtf8?: 'error' | 'replace'
  /** SQLite extensions loaded on every connection as it opens (writer, readers, the JS
   * thread's): a library path, or `{ path, entryPoint }` when the entry point is not the one
   * SQLite derives from the file name. `load_extension()` stays unavailable to SQL. A library
   * that fails to load fails the open with `ERR_EXTENSION`, naming the file. */
  extensions?: (string | Extension)[]
  /** Milliseconds a reader connection may stay open unused before it closes; the next read
   * reopens it. The JS thread's read-only connection closes the same way; the writer's stays
   * open. 0–2^31−1, or
   * `Infinity`: never; checked about every half second. Default 10000, or `Infinity` for an
   * encrypted database (reopening one derives its key again: tens of milliseconds). */
  idleTimeout?: number
  /** Open every connection through the VFS of this name instead of SQLite's default, e.g.
   * `'litestream'` for a Litestream read replica (docs/replication.md "Litestream's VFS"). A
   * VFS registers process-wide, so the extension that provides it is loaded with
   * {@link Database.loadExtension} first; an unregistered name rejects with
   * `ERR_VFS_NOT_FOUND`, naming it. With a VFS the path is read as a URI filename when it is
   * one (`file:replica.db?poll_interval=10ms`): its query parameters reach the VFS. Not
   * combined with `encryptionKey` (the encryption is SQLite3 Multiple Ciphers' default VFS). */
  vfs?: string
  /** Durability (docs/api.md "Durability"): when a commit reaches the disk, as SQLite's
   * `PRAGMA synchronous`, on every connection and kept across every reopen (`rekey`, idle
   * readers). `'normal'` (default): a killed process loses no acknowledged commit, and an OS
   * crash or power cut leaves the database consistent but may lose the last commits (the WAL is
   * synced at checkpoints). `'full'`: the WAL is synced at every commit, so a power cut loses no
   * acknowledged commit; each commit costs an fsync. */
  synchronous?: 'normal' | 'full'
}

/** An extension library for {@link OpenOptions.extensions} and {@link Database.loadExtension}. */
export interface Extension {
  /** The library's path (as `dlopen` takes it; SQLite also tries it with the platform's suffix). */
  path: string
  /** Its initialisation function. Default: the name SQLite derives from the file name
   * (`sqlite3_<name>_init`, then `sqlite3_extension_init`). */
  entryPoint?: string
}

/** What {@link Database.diagnostics} reports. */
/** What {@link Database.processDiagnostics} reports: the engine's threads, shared by every
 * database in the process, and the open databases' connections and queues. */
export interface ProcessDiagnostics {
  /** Engine threads running now, and of them waiting for work; the most that run at once
   * (4 × CPUs + 4); threads started since the process began. */
  threads: number
  idleThreads: number
  maxThreads: number
  threadsStarted: number
  /** Databases' sessions (a run of reads, or of writes) waiting for a thread. */
  sessionsWaiting: number
  /** Databases open (a closed one counts until its connections have closed). */
  databases: number
  /** Their SQLite connections open now: writers, the JS thread's, readers, iterations'. */
  connections: number
  /** Connections closed for being idle (`idleTimeout`) since they opened. */
  idleClosed: number
  /** Reads and writes waiting in the databases' queues. */
  readsQueued: number
  writesQueued: number
}

export interface Diagnostics {
  /** Live queries' counters (named `streams` after `db.stream()`). */
  streams: LiveQueryCounters
  /** SQLite's memory, summed over every connection; each connection measures it after a job, at
   * most every 250 ms (SQLite walks every table and statement to measure). */
  sqlite: { pageCacheBytes: number; schemaBytes: number; statementBytes: number }
  /** Size of the WAL file now, in bytes (0 when there is none). */
  walBytes: number
  /** How long a snapshot has kept the WAL from starting over, in ms: since the writer first
   * found the WAL past its bound and a read, transaction or iteration still in it outlived the
   * wait (docs/performance.md "Checkpoints"). The oldest snapshot holding the WAL is at least
   * this old. 0 when none holds it. */
  walHeldMs: number
  /** Standalone writes queued together and committed in one transaction (ARCHITECTURE.md
   * "Group commit"): how many such groups, and the writes in them. */
  groupCommit: { groups: number; writes: number }
  /** Times an engine thread running a long statement paused for a moment because the JS thread
   * was waiting for the CPU it ran on (Linux only; docs/performance.md "Event-loop stalls"). */
  steppedAside: number
  /** SQLite work on the JS thread (`inlineBudget`): reads that `runs` finished there; that
   * `moved` past the budget (or had too large a result) to a thread; that were `skipped` to a
   * thread because their statement overran recently; transaction `control` statements
   * (deferred BEGIN, SAVEPOINT, a nested RELEASE) run there; bounded `writes` run there, a
   * transaction's or standalone; a transaction's `commits` run there (docs/api.md); the
   * `groups` of standalone writes committed together there (docs/performance.md), and the
   * `groupReads` run in a group's snapshot (one WAL read lock for them all); `live`
   * queries whose first run ran there; and selects calling a JavaScript function run there a
   * slice at a time (`sliced`, docs/api.md "Functions"). All 0 with `inlineBudget: 0`. */
  inline: {
    runs: number
    moved: number
    skipped: number
    control: number
    writes: number
    commits: number
    groups: number
    groupReads: number
    live: number
    sliced: number
  }
}

/** Options of {@link Database.backup}. */
export interface BackupOptions {
  /** Aborting stops the copy after its current step (at most 256 pages); the promise rejects
   * with `ABORT_ERR` once the partial copy is removed. An abort after the copy finished does
   * nothing. */
  signal?: AbortSignal
  /** Called after each step of the copy (about 1 MiB) on the JS thread. A callback that throws
   * stops the backup like an abort, and the promise rejects with what it threw. */
  progress?: (progress: BackupProgress) => void
}

/** A backup's progress, in database pages. */
export interface BackupProgress {
  /** Pages still to copy. */
  remaining: number
  /** Pages in the database (the snapshot being copied). */
  total: number
}

/** Options of {@link Database.rekey}. */
export interface RekeyOptions {
  /** The cipher to re-encrypt with. Default: the cipher the database uses now
   * (`'chacha20'` for a plaintext one). */
  cipher?: Cipher
}

/** The ciphers of SQLite3 Multiple Ciphers, by name. */
export type CipherName = 'chacha20' | 'sqlcipher' | 'aes256cbc' | 'aes128cbc' | 'ascon128' | 'aegis' | 'rc4'

/** A cipher by name with its defaults, or with parameters (unset ones keep sqlite3mc's defaults). */
export type Cipher =
  | CipherName
  | ChaCha20Cipher
  | SqlCipherCipher
  | Aes256CbcCipher
  | Aes128CbcCipher
  | Ascon128Cipher
  | AegisCipher
  | Rc4Cipher

/** ChaCha20-Poly1305 with a PBKDF2-SHA256 key (sqlite3mc's default cipher). */
export interface ChaCha20Cipher {
  /** Selects this cipher. */
  name: 'chacha20'
  /** PBKDF2 iterations. Default 64007. */
  kdfIter?: number
  /** sqleet-compatible layout. Default false. */
  legacy?: boolean
  /** Page size used in legacy mode. Default 4096. */
  legacyPageSize?: number
}

/** AES-256-CBC + HMAC in SQLCipher's file format. */
export interface SqlCipherCipher {
  /** Selects this cipher. */
  name: 'sqlcipher'
  /** SQLCipher major version whose format and defaults to use (1–4); 0: sqlite3mc's own
   * defaults. For files the `sqlcipher` tool reads, give the tool's version (Debian 12: 3). */
  legacy?: 0 | 1 | 2 | 3 | 4
  /** Page size in legacy mode (SQLCipher 1–3: 1024, 4: 4096). */
  legacyPageSize?: number
  /** PBKDF2 iterations deriving the key from a passphrase (SQLCipher 4: 256000). */
  kdfIter?: number
  /** PBKDF2 iterations deriving the HMAC key (default 2). */
  fastKdfIter?: number
  /** Authenticate every page with an HMAC (default true). */
  hmacUse?: boolean
  /** Byte order of the page number in the HMAC: the machine's, little- or big-endian (default
   * `'le'`). */
  hmacPgno?: 'native' | 'le' | 'be'
  /** Byte XORed into the salt to derive the HMAC key: 0–255 (default 0x3a). */
  hmacSaltMask?: number
  /** Hash of the key derivation (SQLCipher 4: `'sha512'`; 1–3: `'sha1'`). */
  kdfAlgorithm?: 'sha1' | 'sha256' | 'sha512'
  /** Hash of the page HMAC (SQLCipher 4: `'sha512'`; 1–3: `'sha1'`). */
  hmacAlgorithm?: 'sha1' | 'sha256' | 'sha512'
}

/** AES-256-CBC without authentication (wxSQLite3 format). */
export interface Aes256CbcCipher {
  /** Selects this cipher. */
  name: 'aes256cbc'
  /** PBKDF2-SHA256 iterations. Default 4001. */
  kdfIter?: number
  /** wxSQLite3's first format (page 1 encrypted too). Default false. */
  legacy?: boolean
  /** Page size fixed in legacy mode; 0 (the default) fixes none. */
  legacyPageSize?: number
}

/** AES-128-CBC without authentication (wxSQLite3 format). */
export interface Aes128CbcCipher {
  /** Selects this cipher. */
  name: 'aes128cbc'
  /** wxSQLite3's first format (page 1 encrypted too). Default false. */
  legacy?: boolean
  /** Page size fixed in legacy mode; 0 (the default) fixes none. */
  legacyPageSize?: number
}

/** Ascon-128 AEAD with a PBKDF2-SHA3 key. */
export interface Ascon128Cipher {
  /** Selects this cipher. */
  name: 'ascon128'
  /** PBKDF2 iterations. Default 64007. */
  kdfIter?: number
}

/** AEGIS AEAD with an Argon2id key. */
export interface AegisCipher {
  /** Selects this cipher. */
  name: 'aegis'
  /** The AEGIS variant. Default `'aegis-256'`; the `128` variants take 16-byte raw keys. */
  algorithm?: 'aegis-128l' | 'aegis-128x2' | 'aegis-128x4' | 'aegis-256' | 'aegis-256x2' | 'aegis-256x4'
  /** Argon2 time cost: passes over memory. Default 2. */
  tcost?: number
  /** Argon2 memory cost in KiB. Default 19456. */
  mcost?: number
  /** Argon2 parallelism. Default 1. */
  pcost?: number
}

/** RC4 (System.Data.SQLite's legacy format): insecure, for reading old files only. */
export interface Rc4Cipher {
  /** Selects this cipher. */
  name: 'rc4'
  /** Page size of the file (RC4 is always in legacy mode); 0 (the default) fixes none. */
  legacyPageSize?: number
}

/** How an outermost transaction begins (SQLite's `BEGIN DEFERRED | IMMEDIATE | EXCLUSIVE`):
 * `'deferred'` takes the write lock at its first write; `'immediate'` and `'exclusive'` take it
 * at `BEGIN`, so a wait for another process's writer (up to `busyTimeout`) happens there,
 * before the body runs. */
export type TransactionMode = 'deferred' | 'immediate' | 'exclusive'

/** Options of `Database.transaction`; a nested transaction (a savepoint) takes none. */
export interface TransactionOptions {
  /** How the outermost transaction begins. Default `'deferred'`. */
  mode?: TransactionMode
  /** Aborting rolls the (outermost) transaction back and rejects it with `ABORT_ERR`. */
  signal?: AbortSignal
}

/** What `execute` resolves with. */
export interface RunResult<T = Row> {
  /** Rows the statement inserted, updated or deleted (SQLite's `changes()`, not counting
   * triggers' and cascades' rows); summed over the statements of a script; 0 for a statement
   * of another kind. */
  changes: number
  /** The writer connection's last inserted rowid (SQLite's `last_insert_rowid()`): this
   * statement's, if it inserted a row. A `bigint` with `safeIntegers`, or when outside
   * ±(2^53−1). */
  lastInsertRowid: number | bigint
  /** The rows a single statement returned (RETURNING), in order; absent for a statement that
   * returns no columns. */
  rows?: T[]
}

/** What `execute` resolves with in `rowMode: 'array'`. */
export interface ArrayRunResult extends Omit<RunResult, 'rows'> {
  /** The returned rows' column names; absent for a statement that returns no columns. */
  columns?: string[]
  /** The returned rows as arrays of their values, in column order. */
  rows?: unknown[][]
}

/** Options of `execute`. */
export interface ExecuteOptions {
  /** How returned rows come back ({@link RowMode}). Default `'object'`. */
  rowMode?: RowMode
}

/** What `executeBatch` resolves with. */
export interface BatchResult {
  /** Rows inserted, updated or deleted, summed over every parameter set. */
  changes: number
}

/** Options of the `select*` methods. */
/** Options of `iterate`. */
export interface IterateOptions extends QueryOptions {
  /** Rows per page, 1–1,000,000. Default 1,000. Larger pages cost fewer round trips and more
   * memory and event-loop time per page. */
  pageRows?: number
}

export interface QueryOptions {
  /** How rows come back ({@link RowMode}). Default `'object'`. */
  rowMode?: RowMode
  /** Aborting rejects the call with `ABORT_ERR` at once. A read on a reader is interrupted
   * (the connection stays usable); inside a transaction the statement finishes and its result
   * is dropped. An already-aborted signal rejects before anything runs. */
  signal?: AbortSignal
}
