// Child process for the SIGKILL-during-rekey test (encryption.test.mjs; not a test file itself).
// Opens the database in the state given on the command line, then rekeys back and forth
// between the two states of STATES forever, reporting each finished rekey on stdout, until the
// parent kills it.
import fs from 'node:fs'
import { Database } from '../dist/esm/index.mjs'

// Cheap KDFs keep each rekey short, so random kill times land in every phase of several.
export const STATES = [
  { encryptionKey: 'old key ☂', cipher: { name: 'chacha20', kdfIter: 1000 } },
  { encryptionKey: 'new key ✈', cipher: { name: 'sqlcipher', legacy: 4, kdfIter: 1000 } },
]

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [file, first] = process.argv.slice(2)
  let state = Number(first)
  const db = await Database.open(file, { ...STATES[state], readers: 2 })
  fs.writeSync(1, 'ready\n')
  for (;;) {
    const next = 1 - state
    // readers stay busy while the writer rekeys
    const reads = Array.from({ length: 4 }, () => db.select('SELECT count(*) AS n FROM t'))
    await db.rekey(STATES[next].encryptionKey, { cipher: STATES[next].cipher })
    await Promise.all(reads)
    state = next
    fs.writeSync(1, `rekeyed ${state}\n`)
  }
}
