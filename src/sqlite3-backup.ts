// resqlite/sqlite3's Backup: sqlite3's `Database#backup` (its src/backup.cc) over the engine's
// paused backup (crates/engine/src/threads/paused_backups.rs): `step(n)` runs
// sqlite3_backup_step(n) on an engine thread, from a read-only connection of the backup's own
// that holds no transaction between steps (so a paused backup pins no WAL; a commit between
// steps starts the copy over, as SQLite does for another connection's). The queue, `idle`, `completed`, `failed`,
// `retryErrors` and the automatic finish are sqlite3's; docs/integrations.md "resqlite/sqlite3"
// lists what differs.
import { EventEmitter } from 'node:events'
import { checkBackup } from './arguments'
import { PAUSED_BACKUP, type PausedBackup } from './database'
import { NOTHING } from './nothing'
// A cycle (sqlite3.ts makes Backups), used only once both modules are loaded.
import { Database } from './sqlite3'
import { type Callback, call, inTick, site } from './sqlite3-args'
import { RESULT_CODES, refusal, type Sqlite3Error, toSqlite3Error } from './sqlite3-errors'

const { OK, BUSY, LOCKED } = RESULT_CODES
/** sqlite3_backup_step's result once every page is copied. */
const DONE = 101
/** sqlite3_backup_step takes an int: a larger count copies as many pages as that can say, and
 * any negative one every page left (-1). */
const MOST_PAGES = 2 ** 31 - 1

/** What a Backup holds of its Database while unfinished (in the Database's `backups`): the
 * engine's backup, from the first step on. Not the Backup itself, so that a Backup dropped
 * unfinished can be collected. */
interface Holds {
  paused?: PausedBackup
}

/** A Backup dropped unfinished is finished once collected, as sqlite3's destructor finishes
 * it: it then no longer keeps its Database from closing, nor its connections open. */
const dropped = new FinalizationRegistry<{ db: Database; holds: Holds }>(({ db, holds }) => {
  db.backups.delete(holds)
  // A finish resolves even once the Database closed (its close finished the backup); the catch
  // only keeps this detached promise from ever being an unhandled rejection.
  holds.paused?.finish().catch(NOTHING)
})

function typeError(message: string): TypeError {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' })
}

export class Backup extends EventEmitter {
  readonly filename: string
  readonly sourceName: string
  readonly destName: string
  readonly filenameIsDest: boolean
  readonly #db: Database
  #inited = false
  /** A step or the finish is running: calls made meanwhile wait in the queue. */
  #locked = false
  #finished = false
  /** Whether the backup still holds the database (sqlite3's backup handle): `close()` refuses
   * while it does. From a successful start until the finish, automatic or called. */
  #holding = false
  readonly #holds: Holds = {}
  #completed = false
  #failed = false
  #remaining = -1
  #pageCount = -1
  /** The last step's result code, and its error when it is not OK or DONE. */
  #status: number = OK
  #error: Sqlite3Error | undefined
  /** Why the backup could not start (a refused direction, a closed database). */
  #startError: Sqlite3Error | undefined
  #retryErrors: unknown[] = []
  readonly #queue: { run: () => Promise<void>; callback: Callback | undefined }[] = []

  /** `new Backup(db, filename, sourceName, destName, filenameIsDest, callback?)`, as sqlite3's;
   * `db.backup(…)` makes one. */
  constructor(
    db: Database,
    filename: string,
    sourceName: string,
    destName: string,
    filenameIsDest: boolean,
    callback?: Callback,
  ) {
    super()
    if (!(db instanceof Database)) throw typeError('Backup: the first argument must be a resqlite/sqlite3 Database')
    if (typeof filename !== 'string') throw typeError('backup: the filename must be a string')
    if (typeof sourceName !== 'string') throw typeError('backup: the source database name must be a string')
    if (typeof destName !== 'string') throw typeError('backup: the destination database name must be a string')
    if (typeof filenameIsDest !== 'boolean') throw typeError('backup: filenameIsDest must be a boolean')
    if (callback !== undefined && typeof callback !== 'function') throw typeError('backup: callback must be a function')
    this.#db = db
    this.filename = filename
    this.sourceName = sourceName
    this.destName = destName
    this.filenameIsDest = filenameIsDest
    const where = site(Backup)
    // Started in the Database's turn, as sqlite3 does: after the calls before it, once open;
    // in a tick of its own, so the callback runs after `db.backup()` returned the Backup.
    db.enqueue(() => inTick(() => this.#start(callback, where)))
  }

  #start(callback: Callback | undefined, where: { stack?: string }): void {
    try {
      this.#db.connection()
      this.#check()
      checkBackup(this.filename, undefined)
    } catch (error) {
      this.#startError = toSqlite3Error(error, where)
      this.#errorTo(this.#startError, callback)
      this.#finishAll()
      return
    }
    this.#inited = true
    this.#holding = true
    this.#db.backups.add(this.#holds)
    dropped.register(this, { db: this.#db, holds: this.#holds }, this.#holds)
    call(callback, this, null)
    this.#process()
  }

  /** The directions resqlite's backup cannot take, refused with the reason. */
  #check(): void {
    if (!this.filenameIsDest) {
      throw refusal(
        'ERR_INVALID_ARG_VALUE',
        "backup with filenameIsDest false (restoring into the open database) is refused: it would replace the pages under resqlite's readers and writer; copy the backup file in place while no Database has the file open",
      )
    }
    if (this.sourceName !== 'main' || this.destName !== 'main') {
      throw refusal(
        'ERR_INVALID_ARG_VALUE',
        `backup of '${this.sourceName}' into '${this.destName}': resqlite's backup copies the main database into the main database of a new file (temporary and attached databases live on the writer's connection alone)`,
      )
    }
  }

  /** True when no step or finish is running or waiting. */
  get idle(): boolean {
    return this.#inited && !this.#locked && this.#queue.length === 0
  }

  get completed(): boolean {
    return this.#completed
  }

  get failed(): boolean {
    return this.#failed
  }

  /** Pages left to copy after the last step (-1 before the first). */
  get remaining(): number {
    return this.#remaining
  }

  /** Pages in the database at the last step (-1 before the first). */
  get pageCount(): number {
    return this.#pageCount
  }

  /** Result codes after which the backup is kept to be stepped again; after any other (DONE
   * included) it finishes by itself. `[]`: it never does (call `finish`). */
  get retryErrors(): unknown[] {
    return this.#retryErrors
  }

  set retryErrors(codes: unknown[]) {
    if (!Array.isArray(codes)) throw typeError('retryErrors must be an array')
    this.#retryErrors = codes
  }

  /** Copies up to `pages` pages (every page left when negative; with 0 none, which only
   * measures `pageCount` and `remaining`). A commit since the last step starts the copy over.
   * The callback gets `(err, completed)`. */
  step(pages: number, callback?: Callback): this {
    if (!Number.isInteger(pages)) throw typeError('Backup#step: pages must be an integer')
    if (callback !== undefined && typeof callback !== 'function') {
      throw typeError('Backup#step: callback must be a function')
    }
    const retry = new Set(this.#retryErrors.filter((code) => typeof code === 'number'))
    const where = site(this.step)
    this.#schedule(async () => {
      if (this.#holding) await this.#copy(pages, where, retry)
      if (this.#status === DONE) this.#completed = true
      else if (!this.#holding) this.#failed = true
      await inTick(() => {
        if (this.#status !== OK && this.#status !== DONE) this.#errorTo(this.#error!, callback)
        else call(callback, this, null, this.#status === DONE)
      })
    }, callback)
    return this
  }

  async #copy(pages: number, where: { stack?: string }, retry: Set<unknown>): Promise<void> {
    try {
      const holds = this.#holds
      // The engine's backup begins with the first step, which creates the destination (sqlite3
      // creates it with the Backup): a destination refused fails that step, whose callback
      // takes the error, not the start, which often has none.
      holds.paused ??= await this.#db.connection().db[PAUSED_BACKUP](this.filename)
      this.#status = await holds.paused.step(Math.max(-1, Math.min(pages, MOST_PAGES)), ({ remaining, total }) => {
        this.#remaining = remaining
        this.#pageCount = total
      })
    } catch (error) {
      this.#error = toSqlite3Error(error, where)
      this.#status = this.#error.errno
    }
    // sqlite3's automatic finish: after a result the caller did not list as one to retry.
    if (this.#status !== OK && retry.size > 0 && !retry.has(this.#status)) await this.#release()
  }

  /** Ends the backup (a backup not completed is failed); the callback gets no arguments. */
  finish(callback?: Callback): this {
    if (callback !== undefined && typeof callback !== 'function') {
      throw typeError('Backup#finish: callback must be a function')
    }
    this.#schedule(async () => {
      await this.#finishAll()
      await inTick(() => call(callback, this))
    }, callback)
    return this
  }

  #schedule(run: () => Promise<void>, callback: Callback | undefined): void {
    this.#queue.push({ run, callback })
    if (this.#finished) this.#cleanQueue()
    else this.#process()
  }

  #process(): void {
    if (this.#finished) {
      this.#cleanQueue()
      return
    }
    if (!this.#inited || this.#locked) return
    const next = this.#queue.shift()
    if (next === undefined) return
    // Counted among the Database's calls, as sqlite3 counts it: a close() waits for the step
    // (and then refuses only if the backup still holds the database).
    this.#locked = true
    this.#db.alongside(() =>
      next.run().finally(() => {
        this.#locked = false
        this.#process()
      }),
    )
  }

  /** Calls made after the finish fail with sqlite3's words, an 'error' event when none of them
   * had a callback. After a failed start they get its error (sqlite3 drops them, so their
   * callbacks would never run); it was reported already, so no event then. */
  #cleanQueue(): void {
    const calls = this.#queue.splice(0)
    if (calls.length === 0) return
    const error = this.#startError ?? refusal('SQLITE_MISUSE', 'Backup is already finished')
    let called = false
    for (const { callback } of calls) {
      if (callback === undefined) continue
      call(callback, this, error)
      called = true
    }
    if (!called && this.#startError === undefined) this.emit('error', error)
  }

  #finishAll(): Promise<void> {
    if (!this.#completed && !this.#failed) this.#failed = true
    this.#finished = true
    const released = this.#release()
    this.#cleanQueue()
    return released
  }

  /** Lets the database go (sqlite3_backup_finish, in the engine): `close()` no longer waits on
   * this backup. Resolves once the engine finished it. */
  #release(): Promise<void> {
    this.#holding = false
    this.#db.backups.delete(this.#holds)
    dropped.unregister(this.#holds)
    const paused = this.#holds.paused
    this.#holds.paused = undefined
    return paused === undefined ? Promise.resolve() : paused.finish()
  }

  #errorTo(error: Sqlite3Error, callback: Callback | undefined): void {
    if (callback !== undefined) call(callback, this, error)
    else this.emit('error', error)
  }
}

/** The codes sqlite3 retries by default (sqlite3's lib/sqlite3.js sets them in `db.backup`). */
export const DEFAULT_RETRY_ERRORS = [BUSY, LOCKED]
