// Every lane, by name. A lane is async (driver, cfg) → cases; see measure.mjs for the rules.
// A lane runs for every library unless its module declares the libraries it supports
// (LANE_LIBRARIES): run.mjs runs a (lane, library) pair only when supports() says so, and the
// report lists which lanes ran for which libraries.
import { counting } from '../measure.mjs'
import { ENCRYPTION_LANES, ENCRYPTION_LIBRARIES } from './encryption.mjs'
import { FUNCTION_LANES, FUNCTION_LIBRARIES } from './functions.mjs'
import { INTERLEAVED_LANES } from './interleaved.mjs'
import { LIVE_QUERY_LANES, LIVE_QUERY_LIBRARIES } from './live-queries.mjs'
import { MEMORY_LANES } from './memory.mjs'
import { PRISMA_LANE_LIBRARIES, PRISMA_LANES } from './prisma.mjs'
import { READ_LANES } from './reads.mjs'
import { RESULTS_LANES, RESULTS_LIBRARIES } from './results.mjs'
import { SCENARIO_LANES } from './scenarios.mjs'
import { STATEMENT_LANES } from './statements.mjs'
import { OWN_DATABASE_LANES, TENANT_LANES } from './tenants.mjs'
import { WAL_LANES, WAL_LIBRARIES } from './wal.mjs'
import { WEB_LANES, WEB_LIBRARIES } from './web.mjs'
import { WRITE_LANES } from './writes.mjs'

export const LANES = {
  ...READ_LANES,
  ...WRITE_LANES,
  ...INTERLEAVED_LANES,
  ...STATEMENT_LANES,
  ...SCENARIO_LANES,
  ...MEMORY_LANES,
  ...RESULTS_LANES,
  ...LIVE_QUERY_LANES,
  ...ENCRYPTION_LANES,
  ...WEB_LANES,
  ...FUNCTION_LANES,
  ...TENANT_LANES,
  ...WAL_LANES,
  ...PRISMA_LANES,
}

// lane → the libraries it runs for; lanes not listed run for every library.
export const LANE_LIBRARIES = {
  ...ENCRYPTION_LIBRARIES,
  ...LIVE_QUERY_LIBRARIES,
  ...RESULTS_LIBRARIES,
  ...FUNCTION_LIBRARIES,
  ...WAL_LIBRARIES,
  ...PRISMA_LANE_LIBRARIES,
  ...WEB_LIBRARIES,
}
// library → { lane: why it cannot run it } (the report's peer note says so): for a library that
// lacks what some lanes need, where listing it out of each lane's libraries would not say why.
const NO_INTERACTIVE_TX = 'no interactive transactions: a transaction is a batch of statements given up front'
const TURSO = {
  'stall-grow': 'no recursive CTE in Turso 0.7.2, which the lane grows its table with',
  web: "Turso 0.7.2 locks the database file to one process, and the lane's server is a second process on the file",
}
export const LIBRARY_LIMITS = {
  'photostructure-pool': Object.fromEntries(
    [
      'tx-reads',
      'tx-interactive',
      'savepoints',
      'narrow-tx-reads',
      'narrow-tx-interactive',
      'interleaved.tx-interactive',
    ].map((lane) => [lane, NO_INTERACTIVE_TX]),
  ),
  turso: TURSO,
  'turso-compat': TURSO,
}
export const supports = (lane, lib) =>
  (!LANE_LIBRARIES[lane] || LANE_LIBRARIES[lane].includes(lib)) && !LIBRARY_LIMITS[lib]?.[lane]

// Lanes of the --quick run (under 5 minutes on 2 cores with every peer): one of each kind, and
// the live-query and encryption lanes (about 10 s together in --quick).
export const QUICK_LANES = [
  'select',
  'bytes',
  'shapes',
  'concurrent',
  'point',
  'point-awaited',
  'batch',
  'stall',
  'stall-grow',
  'batch-insert',
  'insert-sequential',
  'tx-interactive',
  'narrow-point-awaited',
  'narrow-tx-interactive',
  'chat',
  'feed',
  'memory',
  'retained',
  'iterate',
  ...Object.keys(LIVE_QUERY_LANES),
  'encryption',
  'tenants',
]

// Lanes that open databases of their own and count from a process with none open (threads,
// RSS): child.mjs runs them with no driver (null) and cfg.open, before opening the suite's.
export const OWN_DATABASE = new Set(OWN_DATABASE_LANES)

export function runLane(name, driver, cfg) {
  if (!LANES[name]) throw new Error(`no lane ${name}`)
  return LANES[name](driver && counting(driver, { ops: 0, watches: 0 }), cfg)
}
