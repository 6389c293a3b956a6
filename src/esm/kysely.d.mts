export * from './lib/kysely.js'
