export * from '../cjs/drizzle-migrator.js'
