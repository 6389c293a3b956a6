// ESM entry: the same classes as the CommonJS build (one implementation, so `instanceof`
// works across both).
import cjs from '../cjs/index.js'

export const { Database, ResqliteError } = cjs
