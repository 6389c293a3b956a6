// Finds the native addon: a local development build (`npm run build` in a clone writes
// native/resqlite.node), else the platform package npm installed from the optionalDependencies
// (napi-rs layout: npm/<triple>/, named resqlite-<triple>), else an Error saying what to do.
import { existsSync } from 'node:fs'
import * as path from 'node:path'

/** The platforms resqlite publishes a package for (npm/<triple>/, docs/install.md). */
export const PUBLISHED_PLATFORMS: readonly string[] = [
  'linux-x64-gnu',
  'linux-arm64-gnu',
  'linux-x64-musl',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64-gnu',
]

/** The platform triple of this process: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-gnu`, … (napi-rs's
 * names; the Windows package is built with MinGW-w64, so `-gnu`: any Windows Node loads it). */
export function platformTriple(): string {
  const { platform, arch } = process
  if (platform === 'linux') {
    // Node reports the glibc it runs on; on musl there is none.
    const header = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
    return `linux-${arch}-${header.glibcVersionRuntime ? 'gnu' : 'musl'}`
  }
  return platform === 'win32' ? `win32-${arch}-gnu` : `${platform}-${arch}`
}

export function loadBinding<T>(): T {
  // dist/cjs/load-binding.js → <package>/native/resqlite.node
  const local = path.join(__dirname, '..', '..', 'native', 'resqlite.node')
  if (existsSync(local)) return require(local)
  const triple = platformTriple()
  const name = `resqlite-${triple}`
  try {
    return require(name)
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String(err).includes(name)
    if (!missing) throw err // installed but not loadable (a too old glibc, …): the loader's own error says why
    const fromSource =
      `there is no local build at ${local}. Build from source in a clone of resqlite: ` +
      '`npm install && npm run build` (needs Rust and a C compiler). ' +
      "Platforms and building from source: resqlite's docs/install.md."
    if (!PUBLISHED_PLATFORMS.includes(triple)) {
      throw new Error(
        `resqlite has no native addon for this platform (${triple}): no package ${name} is published ` +
          `(prebuilt: ${PUBLISHED_PLATFORMS.join(', ')}), and ${fromSource}`,
      )
    }
    throw new Error(
      `resqlite has no native addon for this platform (${triple}): the package ${name} is not installed ` +
        `(npm skips it under --omit=optional; install it with \`npm install ${name}\`), and ${fromSource}`,
    )
  }
}
