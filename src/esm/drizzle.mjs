// ESM entry of resqlite/drizzle: the CommonJS build's driver (one implementation).
import cjs from '../cjs/drizzle.js'

export const { drizzle, ResqliteDrizzleDatabase } = cjs
