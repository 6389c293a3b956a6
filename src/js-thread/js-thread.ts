// The JS thread's side of one engine: the calls offered to the JS thread, as placement.ts
// decides, and the mechanics that run them there: inline runs (inline.ts), write groups
// (write-group.ts, their microtask rounds and their run here), sliced reads (slices.ts). What
// is not taken here goes back to the engine (engine.ts), which sends it to a thread.
import { awaitedAway } from '../caller-stack'
import type { RowsResult } from '../decode'
import type { ResqliteError } from '../errors'
import type { Functions } from '../functions'
import { type JobCalls, JobKind, Mailbox, ReadOn } from '../native'
import { NOTHING } from '../nothing'
import { copyPacked, NO_PARAMS, type Packed } from '../params'
import { type PlacementRecord, Where } from '../tracing'
import { type FirstRun, type InlineCounters, InlineRunner, NO_INLINE_COUNTS, RESOLVED } from './inline'
import { AT_CHECKPOINT, groupFull, groupWaits, Placement, readKindMayRunInline, readRunsSliced } from './placement'
import { SlicedReads } from './slices'
import { WriteGroup } from './write-group'

/** What a commit made on the JS thread runs when it makes SQLite's automatic checkpoint due
 * (the checkpoint itself is work for the writer thread). */
const CHECKPOINT = 'PRAGMA wal_checkpoint(PASSIVE)'

/** What the JS thread's side uses of the engine (engine.ts `Engine`): its threads, for what is
 * not run here, and the record of where each call went (tracing.ts). */
export interface Threads extends PlacementRecord {
  /** Sends a job to the writer thread, after every writer job sent before it. */
  write<T>(kind: JobKind, sql: string, packed: Packed, onNoTransaction?: (error: ResqliteError) => void): Promise<T>
  /** Sends a read to the readers. */
  readOnThreads<T>(
    kind: JobKind,
    sql: string,
    packed: Packed,
    signal: AbortSignal | undefined,
    arrays: boolean,
  ): Promise<T>
  /** Settles when the last job sent to the writer thread settles (holding none of its result). */
  readonly lastWrite: Promise<void>
  /** Hands the rows writes changed to resqlite/sqlite3's 'change' sink, if one is set. */
  takeRowChanges(): void
  /** A result's rows as the engine decodes them. */
  rows(buffer: unknown, names: unknown, arrays: boolean): RowsResult
}

export class JsThread {
  /** Where each call runs (placement.ts), and the counts it decides by. */
  readonly placement: Placement
  readonly #threads: Threads
  readonly #words: Int32Array
  readonly #functions: Functions
  /** SQLite work on the JS thread (inline.ts); undefined with a budget of 0. */
  readonly #inline: InlineRunner | undefined
  /** Selects calling JavaScript functions, run here in slices; undefined with a budget of 0. */
  readonly #sliced: SlicedReads | undefined
  /** The last standalone write issued, if it did not commit at once: its group, or a promise
   * that settles (never rejects) when it has run. Taken by `takePendingWrite`; the engine sets
   * it for a write it sends to the writer thread. */
  pendingWrite: Promise<void> | WriteGroup | undefined
  /** Standalone writes waiting to run together on the JS thread, with the snapshot the reads
   * beside them share (write-group.ts); undefined when none is open. */
  #group: WriteGroup | undefined
  /** Reads and writes issued while groups were open: a group runs once a microtask round
   * issued none. */
  #issued = 0
  /** Until it settles, the promise of the last standalone write whose promise takes more
   * microtask turns to settle than a later one's may (a write group's, one settled after the
   * writer's jobs, one queued behind a transaction): writes issued meanwhile settle after it
   * (`inOrder`), so that writes settle in call order whatever path each took. */
  readonly #slow = new UntilSettled()
  /** Until it settles, the last write group that settled its writes at once: a write run alone
   * or sent to the writer thread settles in fewer turns than a group's, so one issued meanwhile
   * settles after it (`inOrder`); a later group takes as many turns, so it need not wait. */
  readonly #groupSettling = new UntilSettled()

  /** `words`: the engine's mailbox words (native.ts `Mailbox`); `budgetMicros`: how long a call
   * may run here, 0: never. */
  constructor(
    threads: Threads,
    calls: JobCalls,
    words: Int32Array,
    functions: Functions,
    budgetMicros: number,
    safeIntegers: boolean,
  ) {
    this.#threads = threads
    this.#words = words
    this.#functions = functions
    this.placement = new Placement(words)
    this.#inline =
      budgetMicros > 0
        ? new InlineRunner(calls, budgetMicros, safeIntegers, () => {
            threads.write(JobKind.Control, CHECKPOINT, NO_PARAMS).catch(() => {})
          })
        : undefined
    this.#sliced = this.#inline && new SlicedReads(calls, threads, this.#inline.counters)
  }

  /** A traced call settled (tracing.ts `settle`): its caller resumes a microtask turn later, so
   * that turn counts as one that issued a call, and an open group waits for its next call as it
   * would untraced (experiments/071). */
  tracedSettled(): void {
    this.#issued++
  }

  /** A standalone write's promise (`work`, not yet through `awaitedAway`) as its caller gets it:
   * settled after the slow write before it while that one is pending (`#slow`), then slow
   * itself, as it is when `slow`. Unchanged when neither. */
  inOrder<T>(work: Promise<T>, slow: boolean): Promise<T> {
    // Anything marked slow after the group settling now was ordered after it.
    const before = this.#slow.pending ?? this.#groupSettling.pending
    if (before === undefined && !slow) return work
    let ordered = work
    if (before !== undefined) {
      work.catch(NOTHING)
      const after = () => work
      ordered = before.then(after, after)
    }
    const settled = awaitedAway(ordered)
    // Marked on `ordered`, not on the promise the caller gets: a second reaction on that one
    // would end V8's async stack trace there (caller-stack.ts). Cleared after the caller's
    // promise settled, since `awaitedAway` awaited `ordered` first.
    this.#slow.keep(ordered)
    return settled
  }

  /** A read run here when it fits the inline budget, or in slices; undefined when it goes to the
   * readers. */
  read<T>(
    kind: JobKind,
    sql: string,
    packed: Packed,
    signal: AbortSignal | undefined,
    arrays: boolean,
  ): Promise<T> | undefined {
    const inline = this.#inline
    if (inline === undefined) return undefined
    // The rules: placement.ts.
    const placement = this.placement
    if (readKindMayRunInline(kind) && placement.readInline(this.#readBesideWrites(inline))) {
      const done = inline.read<T>(kind, sql, packed.bytes, packed.length, placement.readOn(), arrays)
      if (done !== undefined) {
        this.#threads.placed = Where.JsThread
        return done
      }
    }
    if (readRunsSliced(kind, signal, this.#functions.defined)) {
      const sliced = (this.#sliced as SlicedReads).read<T>(sql, packed, arrays)
      if (sliced !== undefined) {
        this.#threads.placed = Where.Sliced
        return sliced
      }
    }
    return undefined
  }

  /** Settles when the sliced reads under way now have; undefined when none is. */
  slicesUnderWay(): Promise<unknown> | undefined {
    return this.#sliced?.underWay()
  }

  /** A transaction's read, run here on the writer's connection when the writer is idle (nothing
   * in flight: every writer job now is the transaction's own, so none is ahead of it); undefined
   * when it must go to the writer thread. */
  readInTransaction<T>(kind: JobKind, sql: string, packed: Packed, arrays: boolean): Promise<T> | undefined {
    const done = this.#writerIdle()?.read<T>(kind, sql, packed.bytes, packed.length, ReadOn.Transaction, arrays)
    if (done !== undefined) this.#threads.placed = Where.JsThread
    return done
  }

  /** A transaction's cheap control statement (a deferred BEGIN, SAVEPOINT, a nested RELEASE),
   * run at once on the idle writer's connection: none takes a lock or writes a page. Undefined
   * when it must go to the writer thread (something in flight, the writer busy, or it failed:
   * the writer thread then reports the error). */
  controlInline(sql: string, inTransaction: boolean): Promise<void> | undefined {
    return this.#writerIdle()?.control(sql, inTransaction) ? RESOLVED : undefined
  }

  /** An execute run here on the idle writer's connection when its statement is bounded
   * (crates/engine/src/sqlite/bounded.rs): a transaction's (experiments/036), or, without
   * `onNoTransaction`, one that nothing holding or waiting for the writer is ahead of: alone
   * when writes come one at a time (experiments/040), else in a write group (experiments/049,
   * 050).
   * Undefined when it must go to the writer thread. */
  writeInline<T>(
    sql: string,
    packed: Packed,
    onNoTransaction: ((error: ResqliteError) => void) | undefined,
  ): Promise<T> | undefined {
    const done = this.#writeInline<T>(sql, packed, onNoTransaction)
    if (done === undefined) return undefined
    // No completion reports a write run here: the rows it changed go to the 'change' sink now.
    this.#threads.takeRowChanges()
    return done
  }

  #writeInline<T>(
    sql: string,
    packed: Packed,
    onNoTransaction: ((error: ResqliteError) => void) | undefined,
  ): Promise<T> | undefined {
    this.placement.wrote()
    if (onNoTransaction !== undefined) {
      const done = this.#writerIdle()?.write<T>(sql, packed.bytes, packed.length, onNoTransaction)
      if (done !== undefined) this.#threads.placed = Where.JsThread
      return done
    }
    this.pendingWrite = undefined
    if (this.#inline === undefined || !this.placement.writerFinished()) return undefined
    // A group of reads in a row takes no write: it commits first, and the write runs as if it
    // had not been open.
    if (this.#group?.readsInARow) this.closeGroup()
    if (!this.placement.writeRunsAlone(this.#group !== undefined)) {
      const grouped = this.#groupWrite<T>(this.#inline, sql, packed)
      if (grouped !== null) return grouped
    }
    const done = this.#inline.write<T>(sql, packed.bytes, packed.length, undefined)
    if (done === undefined) return undefined
    this.#threads.placed = Where.JsThread
    if (this.#words[Mailbox.WritesInFlight] === 0) return this.inOrder(done, false)
    // Writes settle in call order: after the writer jobs sent before it, finished but not yet
    // delivered to this thread. A rejection reaches the caller through the chain.
    done.catch(NOTHING)
    const settled = () => done
    return this.inOrder(this.#threads.lastWrite.then(settled), true)
  }

  /** The open transaction's COMMIT, run here when every write of it ran here and there were few
   * (experiments/036); undefined when it must go to the writer thread. A checkpoint it made due
   * is sent to the writer thread, ahead of anything sent later. */
  commitInline(onNoTransaction: (error: ResqliteError) => void): Promise<void> | undefined {
    return this.#writerIdle()?.commit(onNoTransaction, 'commits')
  }

  /** Offers live query `id`'s first run to the JS thread under the rules of a read
   * (experiments/037): false when it is not offered (the engine starts it on the readers). When
   * offered, `ran` receives what the run delivers if it fitted the budget; else the engine
   * started it on the readers. */
  liveStart(id: number, sql: string, packed: Packed, ran: (id: number, first: FirstRun) => void): boolean {
    if (this.#inline === undefined || !this.placement.readInline(false)) return false
    const first = this.#inline.liveStart(id, sql, packed.bytes, packed.length)
    if (first !== undefined) ran(id, first)
    return true
  }

  /** Reads run here, moved off, or sent past (a copy). */
  counters(): InlineCounters {
    return { ...(this.#inline?.counters ?? NO_INLINE_COUNTS) }
  }

  /** The inline runner when the writer has no job in flight (its connection may then be used
   * from here, between the writer thread's jobs). */
  #writerIdle(): InlineRunner | undefined {
    this.closeGroup()
    return this.placement.writerIdle() ? this.#inline : undefined
  }

  /** After a standalone write was issued (execute, executeBatch outside a transaction): the
   * write group it joined, or a promise that settles once it has run, or undefined when it
   * committed at once (here, alone). database.ts keeps it for the reads its caller issues
   * next. */
  takePendingWrite(): Promise<void> | WriteGroup | undefined {
    const pending = this.pendingWrite
    this.pendingWrite = undefined
    return pending
  }

  /** Before a read that must see a write issued before it (database.ts `#writesBeforeRead`):
   * an open write group holding writes runs and commits now rather than at the end of its
   * rounds. */
  runGroupNow(): void {
    if (this.#group !== undefined && this.#group.writes.length > 0) this.closeGroup()
  }

  /** A standalone write added to the open write group, or to a new one (the writer thread has
   * finished its jobs): its promise, settled when the group has run; null when no group could
   * open (its COMMIT could not run here), to run alone. */
  #groupWrite<T>(inline: InlineRunner, sql: string, packed: Packed): Promise<T> | null {
    const group = this.#group ?? this.#openGroup(inline, false)
    if (group === undefined) return null
    this.#issued++
    const settled = group.add<T>(sql, copyPacked(packed))
    this.#threads.placed = Where.WriteGroup
    this.pendingWrite = group
    if (groupFull(group)) this.closeGroup()
    return awaitedAway(settled)
  }

  /** Before a read that may run here: it joins the open write group, or opens one while writes
   * come together (a server's clients), to read in its snapshot and settle at once. Whether it
   * did. */
  #readBesideWrites(inline: InlineRunner): boolean {
    let group = this.#group
    if (group === undefined) {
      const placement = this.placement
      if (placement.readOpensGroup()) group = this.#openGroup(inline, false)
      else if (placement.readFollowsRead()) group = this.#openGroup(inline, true)
    }
    if (group === undefined) return false
    group.reads++
    this.#issued++
    return true
  }

  /** Opens a write group: its deferred BEGIN on the idle writer's connection (refused when its
   * COMMIT could not run here), and the microtask rounds that run it. `readsInARow`: opened by
   * one flow's reads, one after another (placement.ts `readFollowsRead`). */
  #openGroup(inline: InlineRunner, readsInARow: boolean): WriteGroup | undefined {
    if (!inline.beginGroup(readsInARow)) return undefined
    const after = this.#words[Mailbox.WritesInFlight] === 0 ? undefined : this.#threads.lastWrite
    const group = new WriteGroup(this.placement.wroteAloneThisRound(), after, this.#issued, readsInARow)
    this.#group = group
    // One function a group, queued again each round (`AT_CHECKPOINT`: no queueMicrotask's
    // AsyncResource and bound function a round, which reads in a row pay each: experiments/061).
    group.check = () => this.#checkGroup(group)
    AT_CHECKPOINT.then(group.check)
    return group
  }

  /** At the end of a microtask round: runs the group unless it waits another round
   * (placement.ts `groupWaits`). */
  #checkGroup(group: WriteGroup): void {
    if (this.#group !== group) return
    if (groupWaits(group, this.#issued)) {
      group.issued = this.#issued
      AT_CHECKPOINT.then(group.check)
      return
    }
    this.closeGroup()
  }

  /** Runs the open write group (nothing when none is open) and settles its writes: before
   * anything else may use the writer's connection. A write that cannot run here, and every
   * write after it, go to the writer thread, in order. */
  closeGroup(): void {
    const group = this.#group
    if (group === undefined) return
    this.#group = undefined
    const inline = this.#inline!
    const outcomes = this.#runGroup(inline, group)
    const ran = outcomes.length
    group.committed = ran
    // A group none of whose calls ran in it (a script, say) says nothing of how they come; nor
    // does one flow's reads one after another (else a loop of reads would make the next writes
    // wait in groups).
    if (!group.readsInARow) this.placement.groupRan(group.before, ran, group.reads)
    inline.counters.groupReads += group.reads
    const writes = group.writes
    for (let next = ran; next < writes.length; next++) {
      const w = writes[next]!
      outcomes.push(this.#threads.write(JobKind.Execute, w.sql, w.packed))
    }
    const settle = () => {
      for (const [i, outcome] of outcomes.entries()) writes[i]!.settle(outcome)
      group.ended()
    }
    // Its writes settle after the writer jobs sent before it and after the slow write before it
    // (`inOrder`), all at once; a rejection reaches its caller through that chain.
    const before = this.#slow.pending
    const after = group.after
    if (before === undefined && after === undefined) settle()
    else {
      for (const outcome of outcomes) outcome.catch(NOTHING)
      const behind = () => after
      const waited = before === undefined ? after! : before.then(behind, behind)
      waited.then(settle)
    }
    if (writes.length === 0) return
    // Waiting, or through the writer thread, its writes may settle later than a group after it.
    if (before !== undefined || after !== undefined || ran < writes.length) this.#slow.keep(group.finished)
    else this.#groupSettling.keep(group.finished)
  }

  /** Runs the group's writes in its transaction and commits: the outcomes of those it ran, from
   * the first (the rest go to the writer thread); none when SQLite rolled the transaction back
   * or the COMMIT failed, since then nothing of it was committed. */
  #runGroup(inline: InlineRunner, group: WriteGroup): Promise<unknown>[] {
    const ran: Promise<unknown>[] = []
    let ended = false
    const onEnded = () => {
      ended = true
    }
    for (const w of group.writes) {
      const done = inline.write(w.sql, w.packed.bytes, w.packed.length, onEnded)
      if (ended) {
        // SQLite rolled the group back: every write of it runs again.
        done?.catch(NOTHING)
        for (const r of ran) r.catch(NOTHING)
        return []
      }
      if (done === undefined) break
      ran.push(done)
    }
    const committed = inline.commit(onEnded, ran.length > 0 ? 'groups' : null)
    if (committed !== RESOLVED) {
      // The COMMIT failed, or must run on the writer thread (not expected: the group's BEGIN
      // checked that it need not). What is still open is rolled back; every write runs again.
      committed?.catch(NOTHING)
      for (const r of ran) r.catch(NOTHING)
      if (!ended && !inline.control('ROLLBACK', true)) {
        this.#threads.write(JobKind.Control, 'ROLLBACK', NO_PARAMS, NOTHING).catch(NOTHING)
      }
      return []
    }
    return ran
  }
}

/** The last promise kept, until it settles (js-thread.ts `inOrder`). */
class UntilSettled {
  pending: Promise<unknown> | undefined

  keep(promise: Promise<unknown>): void {
    this.pending = promise
    const settled = () => {
      if (this.pending === promise) this.pending = undefined
    }
    promise.then(settled, settled)
  }
}
