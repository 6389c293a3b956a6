// ESM entry of resqlite/kysely: the CommonJS build's dialect (one implementation).
import cjs from '../cjs/kysely.js'

export const { ResqliteDialect } = cjs
