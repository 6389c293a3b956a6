// The one connection a `sqlite3` Database stands for, over a resqlite Database: where each
// statement runs, and the transaction the SQL sent through it holds open.
//
// sqlite3 users (and Sequelize, TypeORM, Knex on top) run transactions as SQL: `BEGIN`, then
// statements, then `COMMIT` or `ROLLBACK`, each a call of its own. resqlite refuses those
// statements in `execute` (a transaction left open would swallow every other user's writes), so
// they never reach SQLite here: `BEGIN` opens `db.transaction()` with a body that waits until
// the SQL `COMMIT`/`ROLLBACK` (builder-support's Held, as resqlite/kysely does), and every
// statement sent meanwhile goes to that transaction's `tx` explicitly. `SAVEPOINT x` nests
// `tx.transaction()`; `ROLLBACK TO x` rolls that level back and opens it again, as SQLite keeps
// the savepoint. Other users of the resqlite Database keep reading beside the transaction.
import { Held, readThenWrite } from './builder-support'
import type { Database as Resqlite } from './database'
import { ResqliteError } from './errors'
import type { Params } from './params'
import { type Control, connectionPragma, control, type Piece, readOnlyPragma, splitStatements } from './sqlite3-sql'
import type { Queryable, Row } from './types'

/** What a statement's SQL is, read once per SQL text. */
export interface Parsed {
  readonly pieces: readonly Piece[]
  /** Set when the SQL is one statement that begins or ends a transaction or a savepoint. */
  readonly control: Control | undefined
  /** Where the SQL runs: `read` tries the readers (`select`) first; `write` goes to the writer
   * (`execute`); learned on the first run of a SQL text that could be either. */
  kind: 'read' | 'write' | 'unknown'
  /** A PRAGMA that would set the writer's connection alone: the statement is refused. */
  readonly pragma: string | undefined
  /** How a PRAGMA runs on a database opened read-only (sqlite3-sql's `readOnlyPragma`). */
  readonly readOnly: 'read' | 'nothing' | undefined
}

const PARSED_KEPT = 512
/** The encryption PRAGMAs (resqlite's ERR_KEY_PRAGMA): a key is given when resqlite opens. */
const KEY_PRAGMAS = new Set(['key', 'hexkey', 'textkey', 'rekey', 'hexrekey'])
const OWN_COUNTERS = /\b(last_insert_rowid|changes|total_changes)\s*\(/i
const READS = new Set(['SELECT', 'VALUES'])
const WRITES = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'CREATE', 'DROP', 'ALTER', 'PRAGMA'])

/** What a `run` of a statement tells its callback's `this`. */
export interface Changes {
  lastID: number | bigint
  changes: number
}

const parsedKept = new Map<string, Parsed>()

/** What `sql` is (read once per SQL text, for every database). */
export function parse(sql: string): Parsed {
  let parsed = parsedKept.get(sql)
  if (parsed !== undefined) return parsed
  const pieces = splitStatements(sql)
  const tokens = pieces.length === 1 ? pieces[0]!.tokens : []
  const first = tokens[0]?.toUpperCase() ?? ''
  parsed = {
    pieces,
    control: pieces.length === 1 ? control(tokens) : undefined,
    // The connection's own counters are the writer's: a read of them runs there.
    kind: WRITES.has(first) || OWN_COUNTERS.test(sql) ? 'write' : READS.has(first) ? 'read' : 'unknown',
    pragma: pieces.length === 1 ? connectionPragma(tokens) : undefined,
    readOnly: pieces.length === 1 ? readOnlyPragma(tokens) : undefined,
  }
  // Bounded: SQL built with its values inline would otherwise grow this without end.
  if (parsedKept.size >= PARSED_KEPT) parsedKept.clear()
  parsedKept.set(sql, parsed)
  return parsed
}

export class Connection {
  readonly db: Resqlite
  /** The open transaction, then its savepoints, innermost last. */
  readonly #levels: Held[] = []
  /** The transaction was opened by a `SAVEPOINT` outside one: releasing that savepoint (level
   * 1) commits it, as in SQLite. */
  #implicit = false
  /** The connection's `last_insert_rowid()` and `changes()`, as the last write left them. */
  readonly last: Changes = { lastID: 0, changes: 0 }

  constructor(db: Resqlite) {
    this.db = db
  }

  /** Whether a transaction is open (`BEGIN` was sent, and no `COMMIT` or `ROLLBACK` yet). */
  get inTransaction(): boolean {
    return this.#levels.length > 0
  }

  /** Where statements run now: the innermost open level, or the database. */
  get target(): Queryable {
    return this.#levels.at(-1)?.tx ?? this.db
  }

  /** Refuses what resqlite/sqlite3 will not run, before it runs. */
  check(parsed: Parsed, sql: string): void {
    if (parsed.pragma !== undefined && KEY_PRAGMAS.has(parsed.pragma)) {
      throw new ResqliteError(
        'ERR_KEY_PRAGMA',
        `PRAGMA ${parsed.pragma}: resqlite/sqlite3 opens the database without a key and cannot take one later ` +
          '(Sequelize sends PRAGMA KEY when given a password: give it none for SQLite)',
        sql,
      )
    }
    if (parsed.pragma !== undefined) {
      throw new ResqliteError(
        'ERR_INVALID_ARG_VALUE',
        `PRAGMA ${parsed.pragma} would be set on the writer's connection only, while reads run on others: ` +
          'resqlite/sqlite3 refuses it (open-time settings belong in the resqlite Database)',
        sql,
      )
    }
  }

  /** Runs one statement: its rows (a read, or a write's RETURNING) and what it changed. Not an
   * async function: a small read settles with no promise of this module's around resqlite's. */
  run(parsed: Parsed, sql: string, params: Params | undefined, one: boolean, signal: AbortSignal): Promise<Row[]> {
    this.check(parsed, sql)
    const target = this.target
    const read = (): Promise<Row[]> =>
      one ? target.selectOne(sql, params, { signal }).then(asRows) : target.select(sql, params, { signal })
    const write = (): Promise<Row[]> => {
      parsed.kind = 'write'
      return target.execute(sql, params).then(
        (result) => {
          this.last.lastID = result.lastInsertRowid
          this.last.changes = result.changes
          const rows = result.rows ?? []
          // Its own, whatever other writes completed before its callback runs (parallel mode).
          written.set(rows, { lastID: result.lastInsertRowid, changes: result.changes })
          return rows
        },
        (error) => {
          // A statement that failed leaves SQLite's changes() at 0.
          this.last.changes = 0
          throw error
        },
      )
    }
    // Opened read-only, there is no writer: a PRAGMA that reads runs on the readers.
    if (parsed.readOnly !== undefined && this.db.readonly) {
      return parsed.readOnly === 'read' ? read() : Promise.resolve([])
    }
    if (parsed.kind === 'write') return write()
    if (parsed.kind === 'read') return read()
    return readThenWrite(read, write).then((rows) => {
      if (parsed.kind === 'unknown') parsed.kind = 'read'
      return rows
    })
  }

  /** Runs a script: its statements in order, those that begin or end a transaction as such. */
  async exec(parsed: Parsed, sql: string, onStatement: (text: string) => void): Promise<void> {
    if (parsed.pieces.every((piece) => control(piece.tokens) === undefined)) {
      for (const piece of parsed.pieces) {
        this.check(parse(piece.text), piece.text)
        onStatement(piece.text)
      }
      if (parsed.pieces.length > 0) await this.#execute(sql)
      return
    }
    // Statements between transaction statements run together, as one script.
    let chunk: string[] = []
    for (const piece of parsed.pieces) {
      const step = control(piece.tokens)
      if (step === undefined) {
        this.check(parse(piece.text), piece.text)
        chunk.push(piece.text)
      } else {
        if (chunk.length > 0) await this.#execute(chunk.join('\n'))
        chunk = []
        await this.control(step, piece.text)
      }
      onStatement(piece.text)
    }
    if (chunk.length > 0) await this.#execute(chunk.join('\n'))
  }

  async #execute(script: string): Promise<void> {
    const result = await this.target.execute(script)
    this.last.lastID = result.lastInsertRowid
    this.last.changes = result.changes
  }

  /** Takes a transaction step in the statement's place. SQLite's own errors for a step out of
   * place keep SQLite's messages. */
  async control(step: Control, sql: string): Promise<void> {
    const levels = this.#levels
    const db = this.db
    switch (step.kind) {
      case 'begin': {
        if (levels.length > 0) throw sqliteError('cannot start a transaction within a transaction', sql)
        const options = step.mode === 'deferred' ? undefined : { mode: step.mode }
        levels.push(await Held.begin((body) => db.transaction(body, options)))
        this.#implicit = false
        return
      }
      case 'commit':
      case 'rollback':
        if (levels.length === 0) throw sqliteError(`cannot ${step.kind} - no transaction is active`, sql)
        return this.#end(0, step.kind === 'commit')
      case 'savepoint': {
        if (levels.length === 0) {
          levels.push(await Held.begin((body) => db.transaction(body)))
          this.#implicit = true
        }
        const outer = levels.at(-1)!
        levels.push(await Held.begin((body) => outer.tx.transaction(body), step.name))
        return
      }
      case 'release': {
        await this.#end(this.#savepoint(step.name, sql), true)
        if (this.#implicit && levels.length === 1) await this.#end(0, true)
        return
      }
      case 'rollbackTo': {
        const at = this.#savepoint(step.name, sql)
        const name = levels[at]!.name
        await this.#end(at, false)
        const outer = levels.at(-1)!
        levels.push(await Held.begin((body) => outer.tx.transaction(body), name))
        return
      }
    }
  }

  /** Rolls back whatever transaction is open (the database closes). */
  async abandon(): Promise<void> {
    if (this.#levels.length > 0) await this.#end(0, false)
  }

  /** The level of savepoint `name` (SQLite compares the names without case). */
  #savepoint(name: string, sql: string): number {
    const wanted = name.toLowerCase()
    for (let at = this.#levels.length - 1; at >= 1; at--) {
      if (this.#levels[at]!.name?.toLowerCase() === wanted) return at
    }
    throw sqliteError(`no such savepoint: ${name}`, sql)
  }

  /** Commits (or rolls back) level `at` and every level inside it, innermost first. */
  async #end(at: number, commit: boolean): Promise<void> {
    await Held.endFrom(this.#levels, at, commit)
  }
}

const written = new WeakMap<Row[], Changes>()

/** What the write that returned `rows` changed; `undefined` for a read's rows. */
export function changesOf(rows: Row[]): Changes | undefined {
  return written.get(rows)
}

const asRows = (row: Row | undefined): Row[] => (row === undefined ? [] : [row])

function sqliteError(message: string, sql: string): ResqliteError {
  return new ResqliteError('SQLITE_ERROR', message, sql)
}
