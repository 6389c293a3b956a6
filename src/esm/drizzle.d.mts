export * from './lib/drizzle.js'
