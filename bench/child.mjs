// One library, one lane, one process: node child.mjs <lib> <lane> <db> [--quick]
// Prints one line "RESULT <json>" on stdout.
import { runLane } from './lanes.mjs'

const [lib, lane, dbPath] = process.argv.slice(2)
const quick = process.argv.includes('--quick')
const out = { lib, lane, node: process.version }
let driver
try {
  const { open } = await import(`./drivers/${lib}.mjs`)
  driver = await open(dbPath)
  out.versions = driver.versions
  await new Promise((r) => setImmediate(r)) // event loop running before ELU is read
  out.cases = await runLane(lane, driver, quick)
} catch (err) {
  out.error = { message: String(err?.message ?? err), code: err?.code, stack: err?.stack }
}
try {
  await driver?.close()
} catch (err) {
  out.closeError = String(err?.message ?? err)
}
process.stdout.write(`RESULT ${JSON.stringify(out)}\n`)
