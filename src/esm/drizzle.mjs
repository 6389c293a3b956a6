// ESM entry of resqlite/drizzle: the driver as an ES module (dist/esm/lib/drizzle.js), which
// imports drizzle-orm's ESM build, so the errors it throws are the classes an ES-module app
// imports from 'drizzle-orm'; the resqlite core behind it is the one CommonJS build.
export { drizzle, ResqliteDrizzleDatabase } from './lib/drizzle.js'
