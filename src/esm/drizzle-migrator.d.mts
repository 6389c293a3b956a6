export * from './lib/drizzle-migrator.js'
