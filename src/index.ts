// The package's public surface: the classes, and every public type from the module that
// defines it.
export { Database } from './database'
export { ResqliteError, type ResqliteErrorCode } from './errors'
export type { AggregateOptions, FunctionOptions, SqlFunction } from './functions'
export type { RowIterator } from './iterate'
export type {
  LiveQuery,
  LiveQueryCounters,
  LiveQueryObserver,
  StreamCounters,
  StreamObserver,
  Unsubscribe,
} from './live-queries'
export type { Params, Value } from './params'
export type { Statement } from './statement'
export type { OperationContext, QueryContext } from './tracing'
export type { Transaction } from './transaction'
export type * from './types'
