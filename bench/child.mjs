// One library, one lane, one process: node --expose-gc child.mjs <lib> <lane> <db> <config>
// Prints one line "RESULT <json>" on stdout, with the raw samples (the orchestrator summarizes).
import { OWN_DATABASE, runLane } from './lanes/index.mjs'
import { CONFIGS } from './measure.mjs'

const [lib, lane, dbPath, config = 'full'] = process.argv.slice(2)
const out = { lib, lane, node: process.version }
let driver
try {
  const { open } = await import(`./drivers/${lib}.mjs`)
  if (OWN_DATABASE.has(lane)) {
    // The lane opens its own databases (lanes/tenants.mjs) and counts threads and RSS from a
    // process with none open; the suite's database is opened after it, for the versions.
    await new Promise((r) => setImmediate(r))
    out.cases = await runLane(lane, null, { ...CONFIGS[config], lib, db: dbPath, open })
    driver = await open(dbPath)
    out.versions = driver.versions
    out.sync = driver.sync
  } else {
    driver = await open(dbPath)
    out.versions = driver.versions
    out.sync = driver.sync
    if (driver.notes) out.notes = driver.notes
    await new Promise((r) => setImmediate(r)) // event loop running before ELU is read
    // (lib and db: for lanes that start processes of their own on the same file, lanes/web.mjs)
    out.cases = await runLane(lane, driver, { ...CONFIGS[config], lib, db: dbPath })
  }
} catch (err) {
  out.error = { message: String(err?.message ?? err), code: err?.code, stack: err?.stack }
}
try {
  await driver?.close()
} catch (err) {
  out.closeError = String(err?.message ?? err)
}
process.stdout.write(`RESULT ${JSON.stringify(out)}\n`)
