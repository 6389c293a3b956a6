// ESM entry of resqlite/sqlite3: the CommonJS build's module (it imports no peer library), so
// `import sqlite3 from 'resqlite/sqlite3'` and `require('resqlite/sqlite3')` are one object, and
// its classes one implementation.
import cjs from '../cjs/sqlite3.js'

export default cjs
export const { Database, Statement, Backup, cached, verbose } = cjs
export const { OPEN_READONLY, OPEN_READWRITE, OPEN_CREATE, OPEN_URI, OPEN_FULLMUTEX, OPEN_SHAREDCACHE } = cjs
export const { OPEN_PRIVATECACHE } = cjs
export const { OK, ERROR, INTERNAL, PERM, ABORT, BUSY, LOCKED, NOMEM, READONLY, INTERRUPT } = cjs
export const { IOERR, CORRUPT, NOTFOUND, FULL, CANTOPEN, PROTOCOL, EMPTY, SCHEMA, TOOBIG } = cjs
export const { CONSTRAINT, MISMATCH, MISUSE, NOLFS, AUTH, FORMAT, RANGE, NOTADB } = cjs
export const { LIMIT_LENGTH, LIMIT_SQL_LENGTH, LIMIT_COLUMN, LIMIT_EXPR_DEPTH, LIMIT_COMPOUND_SELECT } = cjs
export const { LIMIT_VDBE_OP, LIMIT_FUNCTION_ARG, LIMIT_ATTACHED, LIMIT_LIKE_PATTERN_LENGTH } = cjs
export const { LIMIT_VARIABLE_NUMBER, LIMIT_TRIGGER_DEPTH, LIMIT_WORKER_THREADS } = cjs
