export { Database } from './database'
export type {
  BatchResult,
  OpenOptions,
  Params,
  QueryOptions,
  Row,
  RunResult,
  Transaction,
  TransactionMode,
  TransactionOptions,
  Value,
} from './database'
export { ResqliteError } from './errors'
