// The release workflow's main package builds and works (.github/workflows/release.yml, job
// `main`): its steps after `npm install` run here, in a copy of the repository whose
// node_modules is this one's (the install itself is the one `npm install` of the README), as
// GitHub Actions runs them (GITHUB_REPOSITORY set). The tarball they make is installed offline
// with this platform's package (as test/packed-install.test.mjs makes it), and every entry
// point in its `exports` is imported through ESM and required through CommonJS.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { platformTriple } from '../dist/cjs/load-binding.js'
import { tempDir } from './helpers.mjs'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const workflow = fs.readFileSync(path.join(root, '.github', 'workflows', 'release.yml'), 'utf8')

/** The `run:` commands of one job of the workflow, in order. */
function jobRuns(job) {
  const body = workflow.split(new RegExp(`^  ${job}:\\n`, 'm'))[1]?.split(/^ {2}\S/m)[0]
  assert.ok(body, `release.yml has a job ${job}`)
  return [...body.matchAll(/^ {6}- run: (.+)$/gm)].map((m) => m[1])
}

test("the release workflow's main package builds with the build script, carries `repository`, and every entry point imports from its tarball", {
  timeout: 300_000,
}, (t) => {
  const runs = jobRuns('main')
  assert.deepEqual(runs, [
    'npm install --no-audit --no-fund',
    'npm run build -- --ts-only',
    'scripts/platforms/pack.sh main',
  ])
  const dir = tempDir(t)
  const repo = path.join(dir, 'repo')
  // The files a checkout has (tracked, and new ones not ignored), benchmark results aside.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f && !f.startsWith('bench/results/') && fs.existsSync(path.join(root, f)))
  for (const file of files) fs.cpSync(path.join(root, file), path.join(repo, file), { recursive: true })
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(repo, 'node_modules'))
  const env = { ...process.env, GITHUB_REPOSITORY: 'example/resqlite' }
  for (const command of runs.slice(1)) execFileSync('bash', ['-c', command], { cwd: repo, env, stdio: 'pipe' })

  const packs = path.join(repo, 'target', 'platforms', 'packs')
  const [tarball] = fs.readdirSync(packs).filter((f) => /^resqlite-\d/.test(f))
  assert.ok(tarball, `pack.sh made the main package's tarball in ${packs}`)
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'))
  assert.deepEqual(pkg.repository, { type: 'git', url: 'git+https://github.com/example/resqlite.git' })

  // This platform's package with the local build, as test/packed-install.test.mjs packs it.
  const triple = platformTriple()
  const platformDir = path.join(dir, 'platform')
  fs.cpSync(path.join(root, 'npm', triple), platformDir, { recursive: true })
  const { main } = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8'))
  fs.copyFileSync(path.join(root, 'native', 'resqlite.node'), path.join(platformDir, main))
  execFileSync('npm', ['pack', '--silent', '--pack-destination', packs], { cwd: platformDir, stdio: 'pipe' })
  const platformTarball = fs.readdirSync(packs).find((f) => f.startsWith(`resqlite-${triple}-`))

  const app = path.join(dir, 'app')
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n')
  const tarballs = [tarball, platformTarball].map((f) => path.join(packs, f))
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], { cwd: app, stdio: 'pipe' })
  const installed = JSON.parse(fs.readFileSync(path.join(app, 'node_modules', 'resqlite', 'package.json'), 'utf8'))
  assert.deepEqual(installed.repository, pkg.repository, 'the packed package carries `repository`')
  // The adapters' peer libraries, as an app installs them beside resqlite.
  for (const peer of Object.keys(installed.peerDependencies ?? {})) {
    const target = path.join(app, 'node_modules', peer)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.symlinkSync(path.join(root, 'node_modules', peer), target)
  }

  const entries = Object.keys(installed.exports).map((key) => `resqlite${key.slice(1)}`)
  assert.ok(entries.includes('resqlite/kysely') && entries.includes('resqlite/drizzle/migrator'), entries.join(', '))
  const script = `
    const entries = ${JSON.stringify(entries)}
    const seen = {}
    for (const entry of entries) {
      const esm = Object.keys(await import(entry)).filter((k) => k !== 'default' && k !== 'module.exports').sort()
      const cjs = Object.keys(require(entry)).sort()
      seen[entry] = { esm, cjs }
    }
    console.log(JSON.stringify(seen))`
  fs.writeFileSync(
    path.join(app, 'entries.mjs'),
    `import { createRequire } from 'node:module'\nconst require = createRequire(import.meta.url)\n${script}\n`,
  )
  const seen = JSON.parse(execFileSync(process.execPath, ['entries.mjs'], { cwd: app, encoding: 'utf8' }))
  for (const entry of entries) {
    const { esm, cjs } = seen[entry]
    assert.ok(esm.length > 0, `${entry} exports something through ESM`)
    assert.deepEqual(esm, cjs, `${entry}: the same names through ESM and CommonJS`)
  }
  assert.ok(seen.resqlite.esm.includes('Database'), 'resqlite exports Database')
  assert.ok(seen['resqlite/kysely'].esm.includes('ResqliteDialect'), 'resqlite/kysely exports ResqliteDialect')
})
