// The test suite's tiers (not a test file itself), the one place that says which test file
// needs what. The core tier (`npm run test:core`) needs only what the README's set-up needs:
// Node, Rust, a C compiler and `npm install`, and runs in a few minutes; SLOW names the files
// that need no more but take longer. Every other file is listed in NEEDS with the
// prerequisites it needs beyond that; `npm test`'s pretest (scripts/test-prerequisites.mjs)
// installs those, and names the files it could not run when it cannot. test/tiers.test.mjs
// fails on a test file that is in none of the lists, or in two.
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const TEST_DIR = fileURLToPath(new URL('.', import.meta.url))

/** What each prerequisite is: scripts/test-prerequisites.mjs checks, installs or names each. */
export const PREREQUISITES = {
  sqlcipher: "Debian's sqlcipher (its command-line tool)",
  chromium: "Debian's chromium (/usr/bin/chromium)",
  fuse3: "Debian's fuse3 (fusermount3, which LiteFS mounts with)",
  '/dev/fuse': 'the FUSE device, /dev/fuse',
  litestream: 'the pinned litestream on PATH (or $LITESTREAM)',
  'litestream-vfs': "Litestream's VFS extension, built from the pinned module (or $LITESTREAM_VFS)",
  litefs: 'the pinned litefs on PATH (or $LITEFS)',
  'bench-peers': "the benchmark's peers in bench/node_modules (better-sqlite3, sqlite3, Prisma's adapter, Node 24)",
}

/** The files outside the core tier, with what each needs. */
export const NEEDS = {
  'encryption.test.mjs': ['sqlcipher'],
  'site.test.mjs': ['chromium'],
  'web-example.test.mjs': ['chromium'],
  'replication.test.mjs': ['litestream'],
  'replicas-litestream.test.mjs': ['litestream', 'litestream-vfs'],
  'replicas.test.mjs': ['litefs', 'fuse3', '/dev/fuse'],
  'functions-differential.test.mjs': ['bench-peers'],
  'prisma.test.mjs': ['bench-peers'],
  'sqlite3-change.test.mjs': ['bench-peers'],
  'sqlite3-differential.test.mjs': ['bench-peers'],
  'sqlite3-tools.test.mjs': ['bench-peers'],
  'sqlite3.test.mjs': ['bench-peers'],
}

/** Files that need nothing beyond the core's set-up but take minutes between them (whole-system
 * runs: packing and installing the package, 1,000 databases, power cuts and killed processes,
 * a 40-million-row write, the bad-input harness's hundreds of cases, Bun and Deno): `npm test`
 * runs them, `npm run test:core` leaves them out so that it stays a few minutes' check. */
export const SLOW = [
  'bad-input-close-races.test.mjs',
  'bad-input-edges.test.mjs',
  'bad-input-open.test.mjs',
  'bad-input-queries.test.mjs',
  'bad-input-writes.test.mjs',
  'crash-safety.test.mjs',
  'durability.test.mjs',
  'many-databases.test.mjs',
  'packed-install.test.mjs',
  'power-loss.test.mjs',
  'process-exit.test.mjs',
  'read-after-write.test.mjs',
  'release-workflow.test.mjs',
  'runtimes.test.mjs',
]

/** The core tier, each file named (a new file must be put here, in SLOW or in NEEDS). */
export const CORE = [
  'abort.test.mjs',
  'api-edges.test.mjs',
  'attach.test.mjs',
  'backup.test.mjs',
  'batch.test.mjs',
  'bench-compare.test.mjs',
  'bench-counts.test.mjs',
  'bench-results.test.mjs',
  'bench-targets.test.mjs',
  'busy.test.mjs',
  'caller-stack.test.mjs',
  'check-layers.test.mjs',
  'checkpoint.test.mjs',
  'cjs.test.mjs',
  'close.test.mjs',
  'columns.test.mjs',
  'concurrency.test.mjs',
  'decode-columns.test.mjs',
  'docs-api.test.mjs',
  'docs-encryption.test.mjs',
  'docs-examples.test.mjs',
  'docs-integrations.test.mjs',
  'docs-live-queries.test.mjs',
  'docs-readme.test.mjs',
  'docs-transactions.test.mjs',
  'docs-values-and-errors.test.mjs',
  'drizzle-batch-migrator.test.mjs',
  'drizzle-esm.test.mjs',
  'drizzle.test.mjs',
  'encryption-plaintext-header.test.mjs',
  'error-codes.test.mjs',
  'errors.test.mjs',
  'extensions.test.mjs',
  'functions.test.mjs',
  'group-commit.test.mjs',
  'inline-after-thread.test.mjs',
  'inline-standalone.test.mjs',
  'inline-writes.test.mjs',
  'inline.test.mjs',
  'iterate.test.mjs',
  'kysely-esm.test.mjs',
  'kysely-migrations-log.test.mjs',
  'kysely-versions.test.mjs',
  'kysely.test.mjs',
  'large-results.test.mjs',
  'live-capacity.test.mjs',
  'live-invalidation.test.mjs',
  'live-oracle.test.mjs',
  'live-queries.test.mjs',
  'live-races.test.mjs',
  'live-rekey.test.mjs',
  'live-rxjs.test.mjs',
  'loader.test.mjs',
  'memory.test.mjs',
  'native-edges-failed-open.test.mjs',
  'native-edges-readonly-watch.test.mjs',
  'native-edges-sql.test.mjs',
  'native-edges-utf8.test.mjs',
  'open.test.mjs',
  'params.test.mjs',
  'placement.test.mjs',
  'protocol.test.mjs',
  'reads-in-a-row.test.mjs',
  'replica-option.test.mjs',
  'retention.test.mjs',
  'returning.test.mjs',
  'select-bytes.test.mjs',
  'sqlite3-backup.test.mjs',
  'statement-bad-input.test.mjs',
  'statement-docs.test.mjs',
  'statement-kinds.test.mjs',
  'statement.test.mjs',
  'step-aside.test.mjs',
  'tiers.test.mjs',
  'tracing-example.test.mjs',
  'tracing.test.mjs',
  'transactions-abort.test.mjs',
  'transactions-basics.test.mjs',
  'transactions-errors.test.mjs',
  'transactions-misuse.test.mjs',
  'transactions-routing.test.mjs',
  'transactions-savepoints.test.mjs',
  'type-declarations.test.mjs',
  'types.test.mjs',
  'values.test.mjs',
  'vfs.test.mjs',
  'watch-option.test.mjs',
  'write-group-retention.test.mjs',
  'write-groups.test.mjs',
  'write-order.test.mjs',
]

/** Every test file in test/ (what `npm test`'s test/*.test.mjs takes), by name. */
export function testFiles() {
  return readdirSync(TEST_DIR)
    .filter((f) => f.endsWith('.test.mjs'))
    .sort()
}

/** `test/<name>`, as npm test names the files (relative to the repository's root). */
export const testPath = (name) => `test/${name}`
