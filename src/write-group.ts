// A write group (experiments/049): standalone writes issued once the writer thread has finished
// its jobs run on the JS thread inside one transaction on the writer's connection, with the
// reads issued beside them, until the microtask checkpoint commits it. The writes share one
// commit: its file locks and its WAL append, which cost a small write alone more than the write
// itself (bench/experiments/chat-commits.mjs).
//
// Nothing of a group settles before its COMMIT, so no caller sees a write that is not durable,
// or a read of one. When SQLite ends the transaction on its own (an error that rolls it back)
// or the COMMIT fails, nothing of the group was committed: every operation of it runs again the
// usual way, in call order, and settles as it would have alone (as the writer thread's group
// commit does, crates/engine/src/threads/group_commit.rs).

/** The most writes a group holds: its COMMIT then still runs on the JS thread (inline.rs
 * MAX_COMMIT_WRITES). */
export const MAX_GROUP_WRITES = 16

interface Op {
  /** What the operation's run in the group gave: its settled promise. */
  ran: Promise<unknown>
  /** Runs it again the usual way. */
  again: () => Promise<unknown>
  settle: (outcome: Promise<unknown>) => void
}

export class WriteGroup {
  readonly #ops: Op[] = []
  writes = 0
  /** Operations before the microtask checkpoint that did not join: a write that ran alone. */
  readonly #before: number
  /** Settles once the writer jobs sent before the group have (they finished before it began). */
  readonly #after: Promise<void> | undefined

  constructor(before: number, after: Promise<void> | undefined) {
    this.#before = before
    this.#after = after
  }

  /** How many operations the group and those before it in the same microtask generation held. */
  get size(): number {
    return this.#before + this.#ops.length
  }

  /** Adds an operation that ran in the group; its promise settles when the group ends. */
  add<T>(ran: Promise<T>, again: () => Promise<T>, write: boolean): Promise<T> {
    ran.catch(() => {}) // handled when the group ends
    if (write) this.writes++
    return new Promise<T>((settle) => {
      this.#ops.push({ ran, again, settle: settle as Op['settle'] })
    })
  }

  /** The group committed: each operation settles with what it gave. */
  committed(): void {
    const after = this.#after
    for (const op of this.#ops) op.settle(after === undefined ? op.ran : after.then(() => op.ran))
  }

  /** Nothing of the group was committed: each operation runs again, in order. */
  undone(): void {
    for (const op of this.#ops) op.settle(op.again())
  }
}
