// The gnu packages need no glibc newer than 2.17 (scripts/platforms/build-linux-*-gnu.sh build
// against it). The check is shown to work on a binary that needs more: native/resqlite.node,
// `npm run build`'s build against this machine's own glibc.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { compareVersions, glibcNeeded, glibcVersions } from '../../scripts/platforms/glibc-floor.mjs'
import { root } from '../platform-helpers.mjs'
import { built } from './helpers.mjs'

const FLOOR = '2.17'

for (const platform of ['linux-x64-gnu', 'linux-arm64-gnu']) {
  test(`${platform} needs no glibc newer than ${FLOOR}`, { timeout: 30_000 }, (t) => {
    const versions = glibcVersions(built(platform).binary)
    t.diagnostic(`GLIBC versions referenced: ${versions.join(', ')}`)
    assert.ok(versions.length > 0, 'a gnu build references glibc symbols')
    assert.ok(compareVersions(versions.at(-1), FLOOR) <= 0, `needs glibc ${versions.at(-1)}`)
  })
}

test(`the check refuses a build against this machine's glibc`, { timeout: 30_000 }, (t) => {
  const needed = glibcNeeded(path.join(root, 'native', 'resqlite.node'))
  t.diagnostic(`native/resqlite.node needs glibc ${needed}`)
  assert.ok(compareVersions(needed, FLOOR) > 0, `native/resqlite.node needs ${needed}: the check would pass it`)
})

test('the musl packages reference no glibc symbol', { timeout: 30_000 }, () => {
  for (const platform of ['linux-x64-musl', 'linux-arm64-musl']) {
    assert.deepEqual(glibcVersions(built(platform).binary), [], platform)
  }
})

test('versions compare by number, not text', () => {
  assert.ok(compareVersions('2.17', '2.9') > 0)
  assert.ok(compareVersions('2.34', '2.17') > 0)
  assert.equal(compareVersions('2.17', '2.17.0'), 0)
})
