// Transactions (docs/transactions.md): a transaction holds the writer from BEGIN to COMMIT
// across the awaits of an async body; nested ones are savepoints. Everything that needs the
// writer waits its turn in call order (Turns), at the database level and inside each
// transaction level, so its statements reach the writer's queue in the order they were called.
import type { AsyncLocalStorage } from 'node:async_hooks'
import { whenAborted } from './abort-listeners'
import { type CallKind, checkBody, checkNestedOptions, type PreparedCall, prepareCall } from './arguments'
import { awaitedAway } from './caller-stack'
import type { Engine } from './engine'
import { abortError, describe, ResqliteError, typeError } from './errors'
import { callInFunctionError, inFunction, rejected } from './functions'
import { iteration, type RowIterator } from './iterate'
import { RESOLVED } from './js-thread/inline'
import { transactionCallInline } from './js-thread/placement'
import { JobKind } from './native'
import { copyPacked, encodeBatch, encodeParams, NO_PARAMS, noParams, type Packed, type Params } from './params'
import type { Description } from './statement'
import { sendAfterWaiting, traced, tracedQuery, traceOperation, traceQuery, transactionChannel, Where } from './tracing'
import type {
  BatchResult,
  ColumnInfo,
  ExecuteOptions,
  ExecuteResult,
  IteratedRow,
  IterateOptions,
  Queryable,
  QueryOptions,
  Row,
  SelectOneResult,
  SelectResult,
  TransactionOptions,
} from './types'

/** The options each job kind's call takes (arguments.ts `CallKind`); the rest take a read's. */
const CALLS: Partial<Record<JobKind, CallKind>> = {
  [JobKind.SelectBytes]: 'bytes',
  [JobKind.Execute]: 'write',
  [JobKind.Batch]: 'batch',
}

/** A FIFO of callers that need the writer. Plain writes pass straight through while nothing
 * holds it; a holder (a transaction, or a nested one) waits its turn and has the writer alone
 * until it releases it. */
export class Turns {
  #held = false
  #queue: { hold: boolean; start: () => void }[] = []
  /** Made when someone waits for idle (rarely: `close()`); one less array per transaction level. */
  #idle: (() => void)[] | undefined

  /** True when a write would be sent at once. */
  get free(): boolean {
    return !this.#held && this.#queue.length === 0
  }

  /** Runs `send` now if free, else when its turn comes. */
  write(send: () => void): void {
    if (this.free) send()
    else this.#queue.push({ hold: false, start: send })
  }

  /** Holds the writer now if it is free (true), without waiting; `release()` ends it. */
  tryAcquire(): boolean {
    if (!this.free) return false
    this.#held = true
    return true
  }

  /** Resolves when it is this caller's turn to hold the writer; `release()` ends it. An abort
   * while waiting gives up the place in the queue and rejects. */
  acquire(signal?: AbortSignal, sql?: string): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const entry = { hold: true, start: () => resolve() }
      if (signal) {
        const onAbort = () => {
          this.#queue.splice(this.#queue.indexOf(entry), 1)
          reject(abortError(signal, sql ?? ''))
        }
        const unlisten = whenAborted(signal, onAbort)
        entry.start = () => {
          unlisten()
          resolve()
        }
      }
      this.#queue.push(entry)
    })
  }

  release(): void {
    this.#held = false
    while (this.#queue.length > 0) {
      const next = this.#queue.shift()!
      if (next.hold) this.#held = true
      next.start()
      if (next.hold) return
    }
    const idle = this.#idle
    if (idle === undefined) return
    this.#idle = undefined
    for (const resolve of idle) resolve()
  }

  /** Resolves once nothing holds or waits for the writer. */
  idle(): Promise<void> {
    if (this.free) return Promise.resolve()
    this.#idle ??= []
    const idle = this.#idle
    return new Promise((resolve) => idle.push(resolve))
  }
}

/** What every level of one transaction shares. */
interface Root {
  /** The path the database was opened with (for tracing). */
  database: string
  /** Told of an error that left the writer outside any transaction (sets `rolledBack`). */
  onNoTransaction: (error: ResqliteError) => void
  /** SQLite rolled the transaction back on its own after this error. */
  rolledBack?: ResqliteError
  /** The transaction's signal aborted. */
  aborted?: ResqliteError
  /** The outermost level has ended: nothing of this transaction may reach the writer any more
   * (it would land in whatever runs next there). */
  ended?: boolean
}

function newRoot(database: string): Root {
  const root: Root = {
    database,
    onNoTransaction: (error) => {
      root.rolledBack ??= error
    },
  }
  return root
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown; aborted?: boolean }

/** The SQL that ends one level: COMMIT/ROLLBACK, or RELEASE/ROLLBACK TO a savepoint. */
interface Ends {
  commit: string
  rollback: string
}

const OUTERMOST: Ends = { commit: 'COMMIT', rollback: 'ROLLBACK' }

/** A savepoint level's statements, made once per depth. */
interface Level extends Ends {
  begin: string
}

const LEVELS: Level[] = []

function savepoint(depth: number): Level {
  let level = LEVELS[depth]
  if (level === undefined) {
    const name = `resqlite_sp${depth}`
    level = { begin: `SAVEPOINT ${name}`, commit: `RELEASE ${name}`, rollback: `ROLLBACK TO ${name}; RELEASE ${name}` }
    LEVELS[depth] = level
  }
  return level
}

/** A level that began. */
const BEGUN = { failed: false }

/** An open transaction, or a savepoint nested in one: the `tx` a transaction body receives
 * (docs/transactions.md). Its query methods ({@link Queryable}) run on the writer inside the
 * transaction and see its uncommitted writes; they are usable until the body's promise
 * settles, then reject with `ERR_TRANSACTION_FINISHED`. Made by `db.transaction()` and
 * `tx.transaction()`, never directly. */
export class Transaction implements Queryable {
  readonly #engine: Engine
  readonly #context: AsyncLocalStorage<Transaction>
  readonly #root: Root
  readonly #depth: number
  readonly #turns = new Turns()
  #finished = false

  /** @internal Made by `Database.transaction` and `Transaction.transaction`. */
  constructor(engine: Engine, context: AsyncLocalStorage<Transaction>, database: string, root?: Root, depth = 0) {
    this.#engine = engine
    this.#context = context
    this.#root = root ?? newRoot(database)
    this.#depth = depth
  }

  /** @internal Whether its body is still running (then `close()` would wait for it forever). */
  get running(): boolean {
    return !this.#finished && !this.#root.ended
  }

  /** On a `Transaction`: runs on the writer and sees this transaction's writes. An abort
   * rejects at once, but the statement finishes and its result is dropped.
   * @inheritDoc */
  select<T = Row, O extends QueryOptions = QueryOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<SelectResult<T, O>> {
    return this.#op(JobKind.Select, sql, encodeParams, params, options)
  }

  /** On a `Transaction`: runs on the writer and sees this transaction's writes.
   * @inheritDoc */
  selectOne<T = Row, O extends QueryOptions = QueryOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<SelectOneResult<T, O>> {
    return this.#op(JobKind.SelectOne, sql, encodeParams, params, options)
  }

  /** On a `Transaction`: runs on the writer and sees this transaction's writes.
   * @inheritDoc */
  selectBytes(sql: string, params?: Params, options?: Omit<QueryOptions, 'rowMode'>): Promise<Buffer> {
    return this.#op(JobKind.SelectBytes, sql, encodeParams, params, options)
  }

  /** On a `Transaction`: runs on the writer's connection and sees this transaction's writes;
   * it ends with the transaction (a page asked for later rejects with
   * `ERR_TRANSACTION_FINISHED`). Pages are stepped between the transaction's other statements.
   * @inheritDoc */
  iterate<T = Row, O extends IterateOptions = IterateOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): RowIterator<IteratedRow<T, O>> {
    type R = IteratedRow<T, O>
    return iteration<R>(
      sql,
      params,
      options,
      (packed, pageRows, arrays) => this.#engine.iterate<R>(sql, packed, pageRows, this.#root.onNoTransaction, arrays),
      () => this.#unusable() ?? this.#failure(),
      this.#engine,
      true,
    )
  }

  /** On a `Transaction`: runs in this transaction, after the statements called before it.
   * @inheritDoc */
  execute<T = Row, O extends ExecuteOptions = ExecuteOptions>(
    sql: string,
    params?: Params,
    options?: O,
  ): Promise<ExecuteResult<T, O>> {
    return this.#op(JobKind.Execute, sql, encodeParams, params, options)
  }

  /** On a `Transaction`: prepared on the writer's connection, so it sees this transaction's
   * schema.
   * @inheritDoc */
  columns(sql: string): Promise<ColumnInfo[]> {
    return this.#op(JobKind.Columns, sql, noParams, undefined, undefined)
  }

  /** @internal `db.prepare()` inside a transaction body: the statement described on the
   * writer's connection, so it sees this transaction's schema (statement.ts). */
  describe(sql: string): Promise<Description> {
    return this.#op(JobKind.Describe, sql, noParams, undefined, undefined)
  }

  /** On a `Transaction`: joins this transaction, in a savepoint of it that keeps the batch
   * all-or-nothing.
   * @inheritDoc */
  executeBatch(sql: string, paramSets: readonly Params[], options?: unknown): Promise<BatchResult> {
    return this.#op(JobKind.Batch, sql, encodeBatch, paramSets, options as undefined)
  }

  /** On a `Transaction`: nests `body` as a savepoint; its rejection rolls back the savepoint's
   * work only, and this transaction goes on. Savepoints started together run one after another.
   *
   * @param options - None: `mode` and `signal` belong to the outermost transaction (any key is
   *   an `ERR_INVALID_ARG_VALUE`).
   * @inheritDoc */
  transaction<T>(body: (tx: Transaction) => Promise<T>, options?: Pick<TransactionOptions, never>): Promise<T> {
    if (!traced(transactionChannel)) return this.#savepoint(body, options)
    return traceOperation(transactionChannel, { operation: 'savepoint', database: this.#root.database }, () =>
      this.#savepoint(body, options),
    )
  }

  #savepoint<T>(
    body: (tx: Transaction) => Promise<T>,
    options: Pick<TransactionOptions, never> | undefined,
  ): Promise<T> {
    if (inFunction()) return rejected(callInFunctionError())
    const unusable = this.#unusable()
    if (unusable) return Promise.reject(unusable)
    try {
      checkBody(body)
      checkNestedOptions(options)
    } catch (error) {
      return rejected(error)
    }
    return this.#nest(body)
  }

  /** @internal Runs `body` as the outermost level, then commits or rolls back; an abort of
   * `signal` rolls back at once. `begun` is the BEGIN, sent but not awaited: the body's
   * statements queue behind it, and the writer refuses them if it failed (experiments/014).
   * `turns`, the database's writer turn this transaction holds, is given back when it ends. */
  run<T>(
    body: (tx: Transaction) => Promise<T>,
    begun: Promise<unknown>,
    signal: AbortSignal | undefined,
    turns: Turns,
  ): Promise<T> {
    return this.#runLevel(body, OUTERMOST, begun, signal, turns)
  }

  // The body is awaited here rather than in a helper: every async frame is garbage on every
  // transaction (experiments/023).
  async #runLevel<T>(
    body: (tx: Transaction) => Promise<T>,
    ends: Ends,
    begun: Promise<unknown>,
    signal: AbortSignal | undefined,
    parentTurns: Turns,
  ): Promise<T> {
    try {
      // A BEGIN or SAVEPOINT run inline has already succeeded: nothing to wait for.
      let begin: { failed: boolean; error?: unknown } | undefined = begun === RESOLVED ? BEGUN : undefined
      const beginFailure =
        begin ??
        begun.then(
          () => {
            begin = BEGUN
          },
          (error: unknown) => {
            begin = { failed: true, error }
          },
        )
      let outcome: Outcome<T>
      if (signal) {
        outcome = await this.#runBodyWithSignal(body, signal)
      } else {
        const started = this.#startBody(body)
        if (isPromiseLike(started)) {
          try {
            outcome = { ok: true, value: await started }
          } catch (error) {
            outcome = { ok: false, error }
          }
        } else {
          outcome = started
        }
      }
      this.#finished = true
      if (!outcome.ok && outcome.aborted) {
        // Don't wait for the body: stop the statement it is running (the writer is this
        // transaction's), roll back behind what it already sent, refuse the rest.
        this.#root.aborted = outcome.error as ResqliteError
        this.#engine.interruptWriter()
        await this.#engine.write(JobKind.Control, ends.rollback, NO_PARAMS, () => {}).catch(() => {})
        throw outcome.error
      }
      // A level that never began has nothing to commit or roll back; its error is the answer.
      // (Awaits are skipped when there is nothing to wait for: each costs a turn of the
      // microtask queue on every transaction; experiments/021.)
      if (begin === undefined) await beginFailure
      if (begin!.failed) throw begin!.error
      // Statements and nested transactions the body started before it finished go first.
      if (!this.#turns.tryAcquire()) await this.#turns.acquire()
      const failure = this.#root.aborted ?? this.#rolledBackError()
      if (failure) throw failure
      if (!outcome.ok) {
        await this.#send(ends.rollback).catch(() => {})
        throw outcome.error
      }
      try {
        // A nested level's RELEASE writes nothing: it may run at once; so may a COMMIT with little
        // to write (then there is nothing to wait for).
        const ended = this.#depth > 0 ? this.#control(ends.commit) : this.#commit()
        if (ended !== RESOLVED) await ended
      } catch (error) {
        await this.#send(ends.rollback).catch(() => {})
        throw error
      }
      return outcome.value
    } finally {
      // The outermost level has ended the transaction, so nothing of it may reach the writer
      // any more; then it gives the database's writer back. A nested level holds its parent's
      // writer from SAVEPOINT to RELEASE.
      if (this.#depth === 0) this.#root.ended = true
      parentTurns.release()
    }
  }

  /** Calls the body in this level's context: its promise, or the outcome if it has none. */
  #startBody<T>(body: (tx: Transaction) => Promise<T>): PromiseLike<T> | Outcome<T> {
    let result: unknown
    try {
      result = this.#context.run(this, body, this)
    } catch (error) {
      return { ok: false, error }
    }
    if (isPromiseLike(result)) return result as PromiseLike<T>
    return {
      ok: false,
      error: typeError(
        `the transaction body must return a promise (make it an async function); it returned ${describe(result)}`,
        'ERR_INVALID_RETURN_VALUE',
      ),
    }
  }

  /** Runs the body; an abort of `signal` ends the wait at once, without waiting for the body. */
  #runBodyWithSignal<T>(body: (tx: Transaction) => Promise<T>, signal: AbortSignal): Promise<Outcome<T>> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve({ ok: false, aborted: true, error: abortError(signal, 'transaction') })
      const started = this.#startBody(body)
      if (!isPromiseLike(started)) return resolve(started)
      const unlisten = whenAborted(signal, () =>
        resolve({ ok: false, aborted: true, error: abortError(signal, 'transaction') }),
      )
      started.then(
        (value) => {
          unlisten()
          resolve({ ok: true, value })
        },
        (error) => {
          unlisten()
          resolve({ ok: false, error })
        },
      )
    })
  }

  /** Runs `body` as a savepoint nested in this level, once this level's writer is free; the
   * nested level gives it back when it ends. */
  #nest<T>(body: (tx: Transaction) => Promise<T>): Promise<T> {
    if (!this.#turns.tryAcquire()) return this.#turns.acquire().then(() => this.#nestNow(body))
    return this.#nestNow(body)
  }

  #nestNow<T>(body: (tx: Transaction) => Promise<T>): Promise<T> {
    const depth = this.#depth + 1
    const level = savepoint(depth)
    let begun: Promise<unknown>
    try {
      begun = this.#control(level.begin)
    } catch (error) {
      this.#turns.release()
      return Promise.reject(error)
    }
    return new Transaction(this.#engine, this.#context, this.#root.database, this.#root, depth).#runLevel(
      body,
      level,
      begun,
      undefined,
      this.#turns,
    )
  }

  #op<T>(
    kind: JobKind,
    sql: string,
    pack: (params: unknown) => Packed,
    params: unknown,
    options: QueryOptions | ExecuteOptions | undefined,
  ): Promise<T> {
    const operation = tracedQuery(kind)
    if (operation !== undefined) {
      return traceQuery(this.#engine, operation, sql, true, false, () =>
        this.#opUntraced<T>(kind, sql, pack, params, options),
      )
    }
    return this.#opUntraced(kind, sql, pack, params, options)
  }

  #opUntraced<T>(
    kind: JobKind,
    sql: string,
    pack: (params: unknown) => Packed,
    params: unknown,
    options: QueryOptions | ExecuteOptions | undefined,
  ): Promise<T> {
    const unusable = this.#unusable()
    if (unusable) return Promise.reject(unusable)
    let call: PreparedCall
    try {
      call = prepareCall(sql, options, pack, params, CALLS[kind] ?? 'read')
    } catch (error) {
      return rejected(error)
    }
    return this.#opPrepared(kind, sql, call)
  }

  /** @internal A Statement's call made inside this transaction's body (statement.ts), its
   * arguments checked and packed. */
  runPrepared<T>(kind: JobKind, sql: string, call: PreparedCall): Promise<T> {
    const unusable = this.#unusable()
    if (unusable) return Promise.reject(unusable)
    return this.#opPrepared(kind, sql, call)
  }

  #opPrepared<T>(kind: JobKind, sql: string, { packed, signal, arrays }: PreparedCall): Promise<T> {
    // Nothing ahead and nothing to abort: the engine's own promise is the answer; a read, or a
    // bounded write, may run at once on the JS thread (placement.ts).
    if (this.#turns.free && !signal) {
      const read = transactionCallInline(kind)
      if (read !== undefined) {
        const failure = this.#failure()
        if (failure) return Promise.reject(failure)
        const done = read
          ? this.#engine.jsThread.readInTransaction<T>(kind, sql, packed, arrays)
          : this.#engine.jsThread.writeInline<T>(sql, packed, this.#root.onNoTransaction)
        if (done !== undefined) return done
      }
      return this.#send<T>(sql, kind, packed, arrays)
    }
    if (!this.#turns.free) packed = copyPacked(packed)
    const trace = this.#engine.trace
    this.#engine.placed = Where.Writer
    const queued = new Promise<T>((resolve, reject) => {
      // A read on the writer is not interrupted (that could disturb the transaction); an abort
      // settles the promise at once and the result is dropped.
      const unlisten = signal ? whenAborted(signal, () => reject(abortError(signal, sql))) : () => {}
      this.#turns.write(() => {
        sendAfterWaiting(this.#engine, trace, () => this.#send<T>(sql, kind, packed, arrays))
          .then(resolve, reject)
          .finally(unlisten)
      })
    })
    return awaitedAway(queued)
  }

  /** Sends one statement of this transaction to the writer, unless the transaction is gone. */
  #send<T>(sql: string, kind = JobKind.Control, packed = NO_PARAMS, arrays = false): Promise<T> {
    const failure = this.#failure()
    if (failure) return Promise.reject(failure)
    return this.#engine.write<T>(kind, sql, packed, this.#root.onNoTransaction, arrays)
  }

  /** The outermost COMMIT: at once on the JS thread when the transaction wrote little, there
   * (experiments/036), else sent to the writer. */
  #commit(): Promise<unknown> {
    if (this.#failure() === undefined) {
      const done = this.#engine.jsThread.commitInline(this.#root.onNoTransaction)
      if (done !== undefined) return done
    }
    return this.#send(OUTERMOST.commit)
  }

  /** A control statement that takes no lock and writes nothing (SAVEPOINT, a nested RELEASE):
   * run at once on the idle writer's connection when it can be (then RESOLVED), else sent to
   * the writer. */
  #control(sql: string): Promise<unknown> {
    if (this.#failure() === undefined) {
      const done = this.#engine.jsThread.controlInline(sql, true)
      if (done !== undefined) return done
    }
    return this.#send(sql)
  }

  /** Why the transaction cannot run a statement now, if it cannot. */
  #failure(): ResqliteError | undefined {
    return this.#root.aborted ?? this.#rolledBackError() ?? (this.#root.ended ? finishedError() : undefined)
  }

  /** Why this level cannot take new statements, if it cannot. */
  #unusable(): ResqliteError | undefined {
    if (this.#finished) return finishedError()
    return this.#root.aborted ?? this.#rolledBackError()
  }

  #rolledBackError(): ResqliteError | undefined {
    const cause = this.#root.rolledBack
    if (!cause) return undefined
    return new ResqliteError(
      'ERR_TRANSACTION_ROLLED_BACK',
      `SQLite rolled the transaction back after ${cause.code}: ${cause.message}`,
      cause.sql,
      { cause },
    )
  }
}

function finishedError(): ResqliteError {
  return new ResqliteError(
    'ERR_TRANSACTION_FINISHED',
    'the transaction has finished: its body returned or threw, so it takes no more statements',
  )
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function'
}
