export { Database } from './database'
export type { OpenOptions, QueryOptions, RunResult, BatchResult, Row, Params, Value } from './database'
export { ResqliteError } from './errors'
