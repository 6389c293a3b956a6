export * from '../cjs/kysely.js'
