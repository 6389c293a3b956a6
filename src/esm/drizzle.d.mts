export * from '../cjs/drizzle.js'
