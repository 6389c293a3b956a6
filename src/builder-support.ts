// What the query-builder adapters (kysely.ts, drizzle.ts) share: routing SQL that may read or
// write, and a transaction held open across separate begin / commit calls.
import type { Database } from './database.js'
import type { ResqliteError } from './errors.js'
import type { Transaction } from './transaction.js'

/** Runs a statement that may read or write (raw SQL arrives without saying which): as a read on
 * the readers first; one that writes (or holds several statements) then goes to the writer. A
 * statement that fails as a read fails before it steps, so it never runs twice. */
export async function readThenWrite<R>(read: () => Promise<R>, write: () => Promise<R>): Promise<R> {
  try {
    return await read()
  } catch (error) {
    const code = (error as ResqliteError).code
    if (code !== 'ERR_NOT_READ_ONLY' && code !== 'ERR_MULTIPLE_STATEMENTS') throw error
  }
  return write()
}

/** Rejects a held body to roll its level back (never seen outside this module). */
const ROLLBACK = Symbol('rollback')

type Body = (tx: Transaction) => Promise<void>

/** A resqlite transaction (or savepoint) held open across separate calls, for drivers that
 * begin, query, then commit or roll back in calls of their own (Kysely): `db.transaction()`
 * runs with a body that waits until `end`, and the `tx` it was given stays with the driver's
 * connection, which sends its statements there explicitly (the body's async context does not
 * reach them). */
export class Held {
  readonly tx: Transaction
  /** The savepoint's name, for drivers that address savepoints by name. */
  readonly name: string | undefined
  readonly #finish: (commit: boolean) => void
  /** The level's outcome: `db.transaction()`'s (or `tx.transaction()`'s) promise. */
  readonly #done: () => Promise<void>

  private constructor(
    tx: Transaction,
    name: string | undefined,
    finish: (commit: boolean) => void,
    done: () => Promise<void>,
  ) {
    this.tx = tx
    this.name = name
    this.#finish = finish
    this.#done = done
  }

  /** Begins a level with `start` (`db.transaction` or `tx.transaction`): resolves once its body
   * runs, or rejects with why it could not begin. */
  static begin(start: (body: Body) => Promise<void>, name?: string): Promise<Held> {
    return new Promise((resolve, reject) => {
      let held: Held | undefined
      // The body may run before `start` returns (a free writer starts it at once): `done` is
      // read only when the level ends.
      const done: Promise<void> = start(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            held = new Held(
              tx,
              name,
              (ok) => (ok ? commit() : rollback(ROLLBACK)),
              () => done,
            )
            resolve(held)
          }),
      )
      done.catch((error) => {
        if (held === undefined) reject(error)
      })
    })
  }

  /** Commits (or rolls back) `levels[at]` and every level inside it, innermost first, and
   * takes them off `levels`; rejects with the first failure once all have ended. */
  static async endFrom(levels: Held[], at: number, commit: boolean): Promise<void> {
    let failure: unknown
    for (const level of levels.splice(at).reverse()) {
      try {
        await level.end(commit)
      } catch (error) {
        failure ??= error
      }
    }
    if (failure !== undefined) throw failure
  }

  /** Commits (`commit`) or rolls back the level; resolves once it is done. A failed COMMIT
   * rejects with its error; rolling back what SQLite already rolled back succeeds. */
  async end(commit: boolean): Promise<void> {
    this.#finish(commit)
    try {
      await this.#done()
    } catch (error) {
      if (commit) throw error
      if (error !== ROLLBACK && (error as ResqliteError).code !== 'ERR_TRANSACTION_ROLLED_BACK') throw error
    }
  }
}

/** Whether `value` looks like a resqlite Database (the adapters may run over another copy of the
 * core's classes, so no instanceof). */
export function isDatabase(value: unknown): value is Database {
  const db = value as Database | null | undefined
  return typeof db?.select === 'function' && typeof db?.transaction === 'function'
}
