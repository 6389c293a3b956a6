// `npm run test:core`: the core tier of the test suite (test/tiers.mjs says which files), the
// way `npm test` runs the whole suite: one file at a time. It needs only the README's set-up
// (Node, Rust, a C compiler, `npm install && npm run build`), none of npm test's prerequisites.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { CORE, testPath } from '../test/tiers.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The command that runs these test files (names in test/) as `npm test` does, with node --test
 * options (`npm run test:core -- --test-reporter=tap`, say) before them. */
export const testCommand = (names, options = []) => [
  process.execPath,
  '--test',
  '--test-concurrency=1',
  ...options,
  ...names.map(testPath),
]

/** Runs the test files (names in test/) from the repository's root; returns node --test's exit code. */
export function runTests(names, options) {
  const [node, ...args] = testCommand(names, options)
  const { status } = spawnSync(node, args, { stdio: 'inherit', cwd: ROOT })
  return status ?? 1
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) process.exit(runTests(CORE, process.argv.slice(2)))
