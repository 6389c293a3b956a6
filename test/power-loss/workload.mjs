// What the power-loss child (child.mjs) and the checker (replay.mjs) both derive from a seed.
import crypto from 'node:crypto'

export { prng } from '../helpers.mjs'

/** Raw 32-byte key number i of a run (0: the one it opens with; i: its i-th rekey). Raw keys
 * skip the KDF, so the hundreds of opens of the check stay fast. */
export function keyFor(seed, i) {
  return new Uint8Array(crypto.createHash('sha256').update(`power-loss ${seed} ${i}`).digest())
}

/** How many rows transaction `txn` inserts, 1 to 16 (a write group's writes insert one each;
 * the child's `I` marks tell the checker either way). */
export function rowsFor(txn) {
  return 1 + ((Math.imul(txn, 2654435761) >>> 0) % 16)
}

/** Row k of transaction txn has v = txn * 1000 + k: the sum of v a whole transaction has. */
export function sumFor(txn, n) {
  return txn * 1000 * n + (n * (n - 1)) / 2
}
