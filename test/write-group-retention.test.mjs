// A write group's parameters are not kept once its writes have run: the mark a flow keeps of
// its last write (database.ts `IssuedWrite`, for the reads it issues next) keeps only what it
// needs. Measured in a child run with --expose-gc (write-group-retention-child.mjs): rounds of
// 16 writes of 30 KB blobs, until five of them ran 15 of the writes in a group.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'

const LIMIT = 128 * 1024 // one group held would be 15 copies of 30 KB

test("a flow's last write group does not keep its writes' parameters alive after they ran", () => {
  const child = new URL('./write-group-retention-child.mjs', import.meta.url).pathname
  const { kept, grouped } = JSON.parse(execFileSync(process.execPath, ['--expose-gc', child], { encoding: 'utf8' }))
  assert.equal(grouped, 5, 'five rounds ran a write group')
  assert.ok(kept < LIMIT, `${(kept / 1024).toFixed(0)} KB of parameters kept after the writes ran`)
})
