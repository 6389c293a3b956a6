export { Database } from './database'
export type {
  BatchResult,
  Diagnostics,
  LiveQuery,
  OpenOptions,
  Params,
  QueryOptions,
  Row,
  RunResult,
  StreamCounters,
  StreamObserver,
  Transaction,
  TransactionMode,
  TransactionOptions,
  Unsubscribe,
  Value,
} from './database'
export { ResqliteError } from './errors'
