// A write group (experiments/049, 050; when one opens: placement.ts; how it runs: js-thread.ts):
// standalone writes issued together (several clients of a server, each awaiting its own) wait in
// the group until a microtask round issues no more calls, then run on the JS thread inside one
// transaction on the writer's connection and commit together.
// The writes share one commit: its file locks and its WAL append, which cost a small write alone
// more than the write itself (bench/experiments/chat-commits.mjs).
//
// Reads issued meanwhile by other clients (async flows) do not wait: a read whose own flow put a
// write in the group makes it run first (database.ts `#writesBeforeRead`, experiments/051).
// The others run at once inside the group's deferred BEGIN, on the
// writer's connection with its warm page cache, and share one snapshot (no WAL read lock each);
// the engine begins it again when any connection has committed since (crates/engine/src/js_thread/write_group.rs
// `fresh_snapshot`), so each sees what was committed before it was issued, and none of the
// group's writes, which are not written yet. While writes come together, a read opens a group
// too, and so do reads awaited one after another (experiments/061): they then take SQLite's WAL
// read lock once for the run.
// Nothing of a group settles before its COMMIT, so no caller sees a write that is not durable.
// When SQLite ends the transaction on its own (an error that rolls it back) or the COMMIT fails,
// nothing of the group was committed: every write of it runs again on the writer thread, in call
// order, and settles as it would have alone (as the writer thread's group commit does,
// crates/engine/src/threads/group_commit.rs).
import { NOTHING } from '../nothing'
import type { Packed } from '../params'

/** A write waiting in the group (its parameters copied: the packing buffer is reused). */
export interface PendingWrite {
  sql: string
  packed: Packed
  settle: (outcome: Promise<unknown>) => void
}

export class WriteGroup {
  readonly writes: PendingWrite[] = []
  /** Settles (never rejects) once every write of the group has: what a read whose own flow put
   * a write in the group waits for (database.ts `#writesBeforeRead`). One promise a group, not
   * one a write. */
  readonly finished: Promise<void>
  #finish!: (last: Promise<unknown>) => void
  /** The outcome given to the last write settled so far (they settle in call order). */
  #last: Promise<unknown> | undefined
  /** How many of its writes, from the first, it committed on the JS thread: set as it closes.
   * Committed with them is every write sent to the writer thread before (the group began once
   * that thread had finished them), so a read whose flow's last write is among them sees all its
   * flow's writes now, though their promises settle later, in call order (database.ts
   * `IssuedWrite`). */
  committed = 0
  /** Reads run in the group's snapshot. */
  reads = 0
  /** Writes before the microtask checkpoint that did not join: one that ran alone. */
  readonly before: number
  /** Settles once the writer jobs sent before the group have (they finished before it began). */
  readonly after: Promise<void> | undefined
  /** The engine's count of reads and writes issued as the last microtask round began. */
  issued: number
  /** Microtask rounds the group has waited. */
  rounds = 0
  /** Checks at the end of each round whether the group runs (js-thread.ts `#checkGroup`). */
  check: () => void = NOTHING

  /** Opened by one flow's reads, one after another (placement.ts `readFollowsRead`). */
  readonly readsInARow: boolean

  constructor(before: number, after: Promise<void> | undefined, issued: number, readsInARow: boolean) {
    this.before = before
    this.after = after
    this.issued = issued
    this.readsInARow = readsInARow
    this.finished = new Promise((resolve) => {
      this.#finish = (last) => resolve(last.then(NOTHING, NOTHING))
    })
  }

  /** Adds a write; its promise settles when the group has run it. */
  add<T>(sql: string, packed: Packed): Promise<T> {
    return new Promise<T>((settle) => {
      this.writes.push({
        sql,
        packed,
        settle: (outcome) => {
          this.#last = outcome
          settle(outcome as T)
        },
      })
    })
  }

  /** Once every write was given its outcome: `finished` follows the last. */
  ended(): void {
    this.#finish(this.#last ?? Promise.resolve())
  }
}
