// Holds the engine's layers (`npm run lint`): crates/engine/src/lib.rs states them, bottom to
// top, in its `//! - ` lines; a module may use its own layer's modules and those below, never one
// above, and no two files may use each other, directly or round a loop. Test-only modules
// (`#[cfg(test)] mod …`) are not checked: they assemble the engine from any layer.
// `node scripts/check-layers.mjs [src dir]` prints each violation and exits 1 if there is one.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

// Comments, strings and char literals blanked out (same length, newlines kept), so that neither
// a `crate::` in prose nor a brace in a string is read as code.
export function stripRust(text) {
  let out = ''
  let i = 0
  const blank = (s) => s.replace(/[^\n]/g, ' ')
  while (i < text.length) {
    const c = text[i]
    const next = text[i + 1]
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i)
      const stop = end === -1 ? text.length : end
      out += blank(text.slice(i, stop))
      i = stop
    } else if (c === '/' && next === '*') {
      let depth = 0
      let j = i
      do {
        if (text.startsWith('/*', j)) {
          depth++
          j += 2
        } else if (text.startsWith('*/', j)) {
          depth--
          j += 2
        } else j++
      } while (depth > 0 && j < text.length)
      out += blank(text.slice(i, j))
      i = j
    } else if (
      (c === 'r' || (c === 'b' && next === 'r')) &&
      /^b?r#*"/.test(text.slice(i, i + 40)) &&
      !/\w/.test(text[i - 1] ?? '')
    ) {
      const [open, hashes] = text.slice(i).match(/^b?r(#*)"/)
      const close = `"${hashes}`
      const end = text.indexOf(close, i + open.length)
      const stop = end === -1 ? text.length : end + close.length
      out += blank(text.slice(i, stop))
      i = stop
    } else if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += blank(text.slice(i, j + 1))
      i = j + 1
    } else if (c === "'") {
      // A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
      const m = text.slice(i).match(/^'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'/)
      if (m) {
        out += blank(m[0])
        i += m[0].length
      } else {
        out += c
        i++
      }
    } else {
      out += c
      i++
    }
  }
  return out
}

// The layers lib.rs states: `//! - `a`, `b`: why` lines, bottom first.
export function readLayers(libText) {
  const layers = []
  for (const line of libText.split('\n')) {
    const m = line.match(/^\/\/! - ((?:`\w+`(?:, )?)+):/)
    if (m) layers.push([...m[1].matchAll(/`(\w+)`/g)].map((x) => x[1]))
  }
  return layers
}

// Each source file as its module path ('sqlite/connection.rs' → 'sqlite::connection').
function modulePath(rel) {
  const parts = rel.split(sep).join('/').replace(/\.rs$/, '').split('/')
  if (parts.at(-1) === 'mod' || parts.at(-1) === 'lib') parts.pop()
  return parts.join('::')
}

function listRs(dir) {
  return readdirSync(dir, { recursive: true })
    .filter((f) => f.endsWith('.rs'))
    .sort()
}

// `a::{b, c::{d, self}}` → ['a::b', 'a::c::d', 'a::c'].
function expandUse(tree) {
  tree = tree.replace(/\s+/g, '')
  const brace = tree.indexOf('{')
  if (brace === -1) return [tree.replace(/::self$/, '').replace(/\bas\w+$/, '')]
  const prefix = tree.slice(0, brace)
  const inner = tree.slice(brace + 1, tree.lastIndexOf('}'))
  const items = []
  let depth = 0
  let start = 0
  for (let i = 0; i <= inner.length; i++) {
    const ch = inner[i]
    if (ch === '{') depth++
    else if (ch === '}') depth--
    else if ((ch === ',' || ch === undefined) && depth === 0) {
      if (i > start) items.push(inner.slice(start, i))
      start = i + 1
    }
  }
  return items.flatMap((item) => expandUse(prefix + item))
}

// Byte ranges of inline `mod name { … }` blocks, with whether each is `#[cfg(test)]`.
function inlineModules(code) {
  const mods = []
  for (const m of code.matchAll(/(#\[cfg\(test\)\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{/g)) {
    let depth = 0
    let j = m.index + m[0].length - 1
    for (; j < code.length; j++) {
      if (code[j] === '{') depth++
      else if (code[j] === '}' && --depth === 0) break
    }
    mods.push({ name: m[2], start: m.index + m[0].length, end: j, test: Boolean(m[1]) })
  }
  return mods
}

export function checkLayers(srcDir) {
  const problems = []
  const files = new Map() // module path → { rel, code }
  for (const rel of listRs(srcDir)) {
    files.set(modulePath(rel), {
      rel: rel.split(sep).join('/'),
      code: stripRust(readFileSync(join(srcDir, rel), 'utf8')),
    })
  }
  const lib = readFileSync(join(srcDir, 'lib.rs'), 'utf8')
  const layers = readLayers(lib)
  const layerOf = new Map()
  layers.forEach((mods, i) => {
    for (const m of mods) layerOf.set(m, i)
  })
  // Test-only file modules: declared under #[cfg(test)], and everything inside them.
  const testOnly = new Set()
  for (const [mod, { code }] of files) {
    for (const m of code.matchAll(/#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/g)) {
      testOnly.add(mod ? `${mod}::${m[1]}` : m[1])
    }
  }
  const isTestOnly = (mod) => [...testOnly].some((t) => mod === t || mod.startsWith(`${t}::`))

  const topModules = [...files.get('').code.matchAll(/^\s*(?:pub\s+)?mod\s+(\w+)\s*;/gm)]
    .map((m) => m[1])
    .filter((m) => !isTestOnly(m))
  for (const m of topModules) if (!layerOf.has(m)) problems.push(`lib.rs: module \`${m}\` is in no layer`)
  for (const m of layerOf.keys())
    if (!topModules.includes(m)) problems.push(`lib.rs: layer names \`${m}\`, no such module`)
  if (layers.length < 2) problems.push('lib.rs: states fewer than two layers (`//! - `name`: why` lines)')

  // Re-exports (`pub use child::Name`) in each module, so a path through them reaches the file
  // that defines the item.
  const reexports = new Map()
  for (const [mod, { code }] of files) {
    for (const m of code.matchAll(/\bpub(?:\([^)]*\))?\s+use\s+([^;]+);/g)) {
      for (const path of expandUse(m[1])) {
        const segs = path.split('::')
        const name = segs.at(-1)
        const base = mod ? mod.split('::') : []
        const abs =
          segs[0] === 'crate'
            ? segs.slice(1)
            : segs[0] === 'super'
              ? [...base.slice(0, -1), ...segs.slice(1)]
              : segs[0] === 'self'
                ? [...base, ...segs.slice(1)]
                : [...base, ...segs]
        reexports.set(`${mod}::${name}`, abs.join('::'))
      }
    }
  }
  const fileOf = (segs) => {
    for (let n = segs.length; n >= 0; n--) {
      const key = segs.slice(0, n).join('::')
      const via = n < segs.length ? reexports.get(`${key}::${segs[n]}`) : undefined
      if (via && via !== segs.join('::')) return fileOf(via.split('::'))
      if (files.has(key)) return key
    }
    return ''
  }

  const edges = new Map() // file module → Map(target → first line)
  for (const [mod, { rel, code }] of files) {
    if (isTestOnly(mod)) continue
    const inline = inlineModules(code)
    const base = mod ? mod.split('::') : []
    const lineAt = (i) => code.slice(0, i).split('\n').length
    const scopeAt = (i) => {
      const around = inline.filter((m) => m.start <= i && i < m.end)
      return { test: around.some((m) => m.test), segs: [...base, ...around.map((m) => m.name)] }
    }
    const found = []
    const useSpans = []
    for (const m of code.matchAll(/\buse\s+([^;]+);/g)) {
      useSpans.push([m.index, m.index + m[0].length])
      for (const path of expandUse(m[1])) found.push({ path, at: m.index, use: true })
    }
    for (const m of code.matchAll(/(?<![\w$])(?:\$?crate|super)(?:::\w+)+/g)) {
      if (useSpans.some(([s, e]) => s <= m.index && m.index < e)) continue
      found.push({ path: m[0].replace(/^\$/, ''), at: m.index, use: false })
    }
    for (const { path, at, use } of found) {
      const scope = scopeAt(at)
      if (scope.test) continue
      const segs = path.split('::')
      let abs
      if (segs[0] === 'crate') abs = segs.slice(1)
      else if (segs[0] === 'super' || segs[0] === 'self') {
        abs = [...scope.segs]
        let k = 0
        for (; segs[k] === 'super' || segs[k] === 'self'; k++) if (segs[k] === 'super') abs.pop()
        abs.push(...segs.slice(k))
      } else if (use && files.has([...scope.segs, segs[0]].join('::'))) abs = [...scope.segs, ...segs]
      else continue // an external crate or std
      if (abs.length === 0) continue
      const target = fileOf(abs)
      if (target === mod || isTestOnly(target)) continue
      // A module's own `pub use` of its children is how it shows them, not a use of them.
      if (use && target.startsWith(`${mod}::`) && /\bpub(?:\([^)]*\))?\s+use\s*$/.test(code.slice(0, at + 3))) continue
      if (!edges.has(mod)) edges.set(mod, new Map())
      if (!edges.get(mod).has(target)) edges.get(mod).set(target, `${rel}:${lineAt(at)}`)
    }
  }

  const topOf = (mod) => mod.split('::')[0]
  for (const [from, targets] of edges) {
    for (const [to, where] of targets) {
      const a = layerOf.get(topOf(from))
      const b = layerOf.get(topOf(to))
      if (a !== undefined && b !== undefined && b > a) {
        problems.push(`${where}: \`${from || 'lib'}\` uses \`${to}\`, a layer above it`)
      }
    }
  }

  // Cycles between files: each strongly connected component of more than one file (Tarjan).
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const visit = (v) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const component = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) {
        const inCycle = new Set(component)
        const links = component.flatMap((f) =>
          [...(edges.get(f) ?? [])].filter(([t]) => inCycle.has(t)).map(([t, where]) => `${where} → ${t}`),
        )
        problems.push(`files in a cycle: ${component.sort().join(', ')} (${links.sort().join('; ')})`)
      }
    }
  }
  for (const v of [...files.keys()].sort()) if (!idx.has(v)) visit(v)
  return { problems, layers, edges }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  const srcDir = process.argv[2] ?? join(root, 'crates/engine/src')
  if (!existsSync(join(srcDir, 'lib.rs'))) {
    console.error(`check-layers: no lib.rs in ${srcDir}`)
    process.exit(2)
  }
  const { problems, layers } = checkLayers(srcDir)
  for (const p of problems) console.error(`check-layers: ${p}`)
  if (problems.length > 0) process.exit(1)
  console.log(`check-layers: ${relative(root, srcDir)} holds its ${layers.length} layers, no cycles between files`)
}
