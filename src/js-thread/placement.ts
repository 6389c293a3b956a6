// Where a call runs, and why: the JS side's placement policy. A call runs on the JS thread
// (inline: SQLite work fits a time budget, so it costs less than the hop to a thread and back),
// in a write group (inline too, sharing one commit), in slices on the JS thread (it calls a
// JavaScript function), on a reader, or on the writer thread. This module decides which; the
// JS thread's side of the engine (js-thread.ts, which runs what it places here), the engine
// (engine.ts), the database and transactions (database.ts, transaction.ts) call it, and a
// `Statement`'s call takes the same path as the `db.*` call it mirrors (statement.ts).
//
// What only the statement and its connection can tell is decided in Rust, after the JS side
// has offered the call: whether a read fits the budget or skips the JS thread after overrunning
// (crates/engine/src/js_thread/runs.rs `run`, `back_off`), whether a write's program is bounded
// (sqlite/bounded.rs), whether a COMMIT only appends to the WAL (runs.rs `commit_only_appends`),
// and a sliced read's slice length (runs.rs SLICE). The JS side sees only the SQL text; when
// the native side declines, the call goes to a thread as if it had never been offered.
//
// The rules, in the order a call meets them (in parentheses, the experiments that set them):
// 1. A read may run on the JS thread for up to `inlineBudget`, DEFAULT_INLINE_BUDGET ms; 0 turns off rules 1-11 (032).
// 2. ...unless it is a thread's own job: serialize, columns, describe, dataVersion (`readKindMayRunInline`).
// 3. ...and for at most INLINE_BURST reads issued together: the readers run the rest in parallel (032).
// 4. ...and not while reads are on the readers, unless within AFTER_WRITE_READS reads of a write (042).
// 5. ...on the writer's connection once its thread finished every job, else the JS thread's own (`readOn`; 040, 042).
// 6. ...or, in an open write group's snapshot, up to GROUP_BURST instead of 3-4; it opens one while writes come together (050),
//    or when reads are awaited one after another in a turn of the event loop, this database's last
//    within FOLLOW_WITHIN reads (`readFollowsRead`; 061, 074).
// 7. A select calling a JS function, not run inline and without a signal, runs in slices (`readRunsSliced`; 054).
// 8. A standalone execute, with the writer free and its thread finished, may run inline (`writeMayRunInline`; 040).
// 9. ...alone when writes come one at a time, else in a write group (`writeRunsAlone`; 049).
// 10. A group runs when a microtask round issued no call, after MAX_GROUP_ROUNDS, or at MAX_GROUP_WRITES (049, 050).
// 11. A transaction's reads, bounded executes, control statements and COMMIT may use the idle writer's connection (`writerIdle`; 036).
// 12. Everything else: writes to the writer thread in call order, reads to the readers.
import { nextTick } from 'node:process'
import { JobKind, Mailbox, ReadOn } from '../native'
import type { WriteGroup } from './write-group'

/** Milliseconds a read may run on the JS thread before it moves to a reader (experiments/032). */
export const DEFAULT_INLINE_BUDGET = 0.1
/** Reads issued together that may run inline; the rest run in parallel on the readers
 * (experiments/032: with 64 point queries in flight, all inline ran at 0.84 × better-sqlite3's
 * rate, on the readers 1.36 ×: batched completions cost the JS thread less than inline runs). */
export const INLINE_BURST = 4
/** Reads issued together in a write group's snapshot that may run on the JS thread. More of
 * them than INLINE_BURST: the group's clients keep the JS thread busy, so a read sent to a reader
 * meanwhile could not settle (nor its client go on) until the JS thread yields, after the rest
 * of their work (experiments/050). */
export const GROUP_BURST = 16
/** Reads after a write during which reads in flight on the readers do not send the next one
 * there too: a commit drops the readers' page caches, not the writer's (experiments/042). */
export const AFTER_WRITE_READS = 32
/** A read opens a group of reads in a row only when this database's last read was among the last
 * FOLLOW_WITHIN reads offered to the JS thread by any database: reads rotating over many
 * databases (a server's tenants) each hold one read, whose group's BEGIN and COMMIT cost more
 * than the WAL read lock it saves (experiments/074). */
export const FOLLOW_WITHIN = 4
/** Reads offered to the JS thread by every engine on this thread (`Placement.readInline`). */
let readsOffered = 0
/** The most microtask rounds a write group waits for more calls (a client reading on and on
 * does not hold the others' writes back for long; experiments/050). */
export const MAX_GROUP_ROUNDS = 64
/** The most writes a group holds: its COMMIT then still runs on the JS thread (runs.rs
 * MAX_COMMIT_WRITES, experiments/036, 049). */
export const MAX_GROUP_WRITES = 16

/** `AT_CHECKPOINT.then(f)` runs `f` at the microtask checkpoint, as `queueMicrotask(f)` would, in
 * the same queue and order, without Node's AsyncResource and bound function per call: on the
 * path of every inline read (experiments/056). */
export const AT_CHECKPOINT: Promise<void> = Promise.resolve()

/** Whether a read of this kind may be offered to the JS thread: serialize, columns and describe
 * are the readers' jobs, and so is watchExternalChanges' check on a read-only database (it
 * publishes what it finds to the live queries, which the JS thread's readInline does not know). */
export function readKindMayRunInline(kind: JobKind): boolean {
  return (
    kind !== JobKind.Serialize && kind !== JobKind.Columns && kind !== JobKind.Describe && kind !== JobKind.DataVersion
  )
}

/** Whether a select that did not run inline runs in slices on the JS thread (slices.ts
 * `SlicedReads`): it may call a JavaScript function, which is called right there where a reader
 * would hand each call over (experiments/054). Not with a signal: a sliced read cannot be
 * interrupted the way a reader's can. */
export function readRunsSliced(kind: JobKind, signal: AbortSignal | undefined, functionsDefined: boolean): boolean {
  return kind === JobKind.Select && signal === undefined && functionsDefined
}

/** Whether a standalone write of this kind (nothing holding or waiting for the writer) is
 * offered to the JS thread; a batch always goes to the writer thread (experiments/040). */
export function writeMayRunInline(kind: JobKind): boolean {
  return kind === JobKind.Execute
}

/** Whether a transaction's statement of this kind (nothing of its level queued ahead, no signal)
 * is offered to the JS thread, as a read (`true`) or a bounded write (`false`); undefined when
 * it goes to the writer thread (experiments/032, 036). */
export function transactionCallInline(kind: JobKind): boolean | undefined {
  if (kind === JobKind.Select || kind === JobKind.SelectOne || kind === JobKind.SelectBytes) return true
  return kind === JobKind.Execute ? false : undefined
}

/** Whether an open write group waits another microtask round for more calls (counting the
 * round): the last round issued some (`issued`: the engine's count of calls issued), and it has
 * waited fewer than MAX_GROUP_ROUNDS (experiments/050). */
export function groupWaits(group: WriteGroup, issued: number): boolean {
  return issued !== group.issued && ++group.rounds < MAX_GROUP_ROUNDS
}

/** Whether a write group is full: its COMMIT must still run on the JS thread. */
export function groupFull(group: WriteGroup): boolean {
  return group.writes.length >= MAX_GROUP_WRITES
}

/** The counts the rules above look at, kept as calls are issued and complete: one per engine,
 * reading the engine's mailbox for what the writer thread has done. */
export class Placement {
  readonly #words: Int32Array
  /** Reads tried inline since the last microtask checkpoint. */
  #burst = 0
  /** Reads issued since the last write. */
  #readsSinceWrite = AFTER_WRITE_READS
  /** `readsOffered` at this engine's last read offered to the JS thread. */
  #lastRead = Number.NEGATIVE_INFINITY
  /** Reads sent to the readers and not completed yet. */
  readsInFlight = 0
  /** The last write group held one call (a write or a read): calls come one at a time. The next
   * write runs alone (its own commit costs less than a group's BEGIN and COMMIT) unless another
   * write follows it before the microtask checkpoint, and a read opens no group (experiments/049,
   * 050). */
  #oneAtATime = true
  /** A standalone write ran alone on the JS thread since the last microtask checkpoint. */
  #wroteAlone = false
  readonly #endWroteAlone = () => {
    this.#wroteAlone = false
  }
  readonly #endBurst = () => {
    this.#burst = 0
  }
  /** A read was offered to the JS thread since the microtask queue last ran dry (`nextTick`). */
  #readThisTurn = false
  readonly #endTurn = () => {
    this.#readThisTurn = false
  }

  /** `words`: the engine's mailbox words (native.ts `Mailbox`). */
  constructor(words: Int32Array) {
    this.#words = words
  }

  /** Whether one more read may run on the JS thread now (counting it if so): in a write group's
   * snapshot, not beyond GROUP_BURST issued together; else not beyond INLINE_BURST, nor while
   * others are on the readers unless a write was issued within the last AFTER_WRITE_READS
   * reads. */
  readInline(inGroup: boolean): boolean {
    this.#lastRead = ++readsOffered
    const afterWrite = this.#readsSinceWrite++ < AFTER_WRITE_READS
    if (this.#burst >= (inGroup ? GROUP_BURST : INLINE_BURST)) return false
    if (!inGroup && this.readsInFlight > 0 && !afterWrite) return false
    if (this.#burst++ === 0) AT_CHECKPOINT.then(this.#endBurst)
    return true
  }

  /** The connection an inline read outside a transaction runs on: the writer's once its thread
   * has finished every job, since after a write its page cache is warm where the JS thread's own
   * connection's was dropped (experiments/040, 042). */
  readOn(): ReadOn {
    return this.writerFinished() ? ReadOn.IdleWriter : ReadOn.Own
  }

  /** A write was issued: reads stay on the JS thread for a while (AFTER_WRITE_READS). */
  wrote(): void {
    this.#readsSinceWrite = 0
  }

  /** Whether a read that may run inline, with no write group open, opens one to read in its
   * snapshot: while writes come together, not one at a time (experiments/050). */
  readOpensGroup(): boolean {
    return !this.#oneAtATime && this.writerFinished()
  }

  /** Whether a read, with no write group open and calls coming one at a time, opens a group to
   * read in its snapshot: a read was offered to the JS thread in an earlier microtask round of
   * this turn of the event loop (an awaited loop of reads), this engine's last read was among
   * the last FOLLOW_WITHIN offered on this thread, none is on the readers, and the writer's
   * thread has finished. Reads that share a snapshot take SQLite's WAL read lock once, not each
   * (two `fcntl` calls a read, most of a point select's time: experiments/061). */
  readFollowsRead(): boolean {
    if (this.#readThisTurn)
      return (
        readsOffered - this.#lastRead < FOLLOW_WITHIN &&
        this.#burst === 0 &&
        this.readsInFlight === 0 &&
        this.writerFinished()
      )
    this.#readThisTurn = true
    nextTick(this.#endTurn)
    return false
  }

  /** Whether a standalone write offered to the JS thread runs alone (then counted until the
   * microtask checkpoint) rather than in a write group: none is open, and writes came one at a
   * time (experiments/049). */
  writeRunsAlone(groupOpen: boolean): boolean {
    if (groupOpen || this.#wroteAlone || !this.#oneAtATime) return false
    this.#wroteAlone = true
    AT_CHECKPOINT.then(this.#endWroteAlone)
    return true
  }

  /** Writes that ran alone before a group opened in the same microtask round (0 or 1). */
  wroteAloneThisRound(): number {
    return this.#wroteAlone ? 1 : 0
  }

  /** A write group ran: `calls` of it (writes before it in its round, writes it ran, its reads).
   * One call says calls come one at a time; none says nothing of how they come. */
  groupRan(before: number, ran: number, reads: number): void {
    if (ran + reads > 0) this.#oneAtATime = before + ran + reads === 1
  }

  /** Whether the writer thread has finished every job sent to it (their completions may not
   * have reached this thread yet): its connection is then free, and every write sent before
   * has committed. */
  writerFinished(): boolean {
    return Atomics.load(this.#words, Mailbox.WritesRunning) === 0
  }

  /** Whether the writer has no job in flight, so a transaction's statement may use its
   * connection from the JS thread between the writer thread's jobs (experiments/036). */
  writerIdle(): boolean {
    return this.#words[Mailbox.WritesInFlight] === 0
  }
}
