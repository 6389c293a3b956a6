export { Database, ResqliteError } from '../cjs/index.js'
export type { OpenOptions, QueryOptions, RunResult, BatchResult, Row, Params, Value } from '../cjs/index.js'
