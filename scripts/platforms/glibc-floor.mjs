// The newest glibc symbol version a binary needs, from its dynamic symbol table (objdump -T).
//   node scripts/platforms/glibc-floor.mjs <file.node> [floor]   exits 1 if it needs a newer glibc than floor
// Used by test/platforms/glibc-floor.test.mjs and the release workflow.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Compares dotted versions: negative, zero or positive. */
export const compareVersions = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number))
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/** Every GLIBC_x.y version the file's dynamic symbols reference, newest last. */
export function glibcVersions(file) {
  const table = execFileSync('objdump', ['-T', file], { encoding: 'utf8', maxBuffer: 64 << 20 })
  const versions = new Set([...table.matchAll(/\bGLIBC_(\d+(?:\.\d+)+)\b/g)].map((m) => m[1]))
  return [...versions].sort(compareVersions)
}

/** The newest glibc the file needs (undefined: none, e.g. a musl build). */
export const glibcNeeded = (file) => glibcVersions(file).at(-1)

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, floor = '2.17'] = process.argv.slice(2)
  if (!file) {
    console.error('usage: node scripts/platforms/glibc-floor.mjs <file.node> [floor]')
    process.exit(2)
  }
  const needed = glibcNeeded(file)
  const ok = needed === undefined || compareVersions(needed, floor) <= 0
  console.log(`${file} needs glibc ${needed ?? '(none)'}; the floor is ${floor}: ${ok ? 'ok' : 'TOO NEW'}`)
  if (!ok) process.exit(1)
}
