export { Database, ResqliteError } from '../cjs/index.js'
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
} from '../cjs/index.js'
