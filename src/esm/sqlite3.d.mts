import * as sqlite3 from '../cjs/sqlite3.js'

export * from '../cjs/sqlite3.js'
export default sqlite3
