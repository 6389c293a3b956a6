// The public option and result types.

export interface OpenOptions {
  /** Read-only connections reading in parallel. Default: clamp(cpus − 1, 2, 4). */
  readers?: number
  /** Milliseconds a connection waits for a lock held by another process. Default 5000. */
  busyTimeout?: number
  /** Open without a writer: `execute`, `executeBatch` and `transaction` reject. Default false. */
  readonly?: boolean
  /** Return every INTEGER as a bigint. Default false. */
  safeIntegers?: boolean
  /** Re-run live queries when another process or connection commits to the file, checked
   * with `PRAGMA data_version` every `interval` ms (default 1000) while a live query is
   * subscribed. Off by default: each check is one small job for the writer. */
  watchExternalChanges?: boolean | { interval?: number }
}

export interface Diagnostics {
  streams: import('./streams').StreamCounters
  /** SQLite's memory, summed over every connection, as of each one's last job. */
  sqlite: { pageCacheBytes: number; schemaBytes: number; statementBytes: number }
  /** Size of the WAL file now (0 when there is none). */
  walBytes: number
}

export type TransactionMode = 'deferred' | 'immediate' | 'exclusive'

export interface TransactionOptions {
  /** How the outermost transaction begins. Default `'deferred'`. */
  mode?: TransactionMode
  /** Aborting rolls the (outermost) transaction back and rejects it with `ABORT_ERR`. */
  signal?: AbortSignal
}

export interface RunResult {
  changes: number
  lastInsertRowid: number | bigint
}

export interface BatchResult {
  changes: number
}

export interface QueryOptions {
  /** Aborting cancels the query; the promise rejects with `ABORT_ERR`. */
  signal?: AbortSignal
}
