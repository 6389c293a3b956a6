// Every lane, by name. A lane is async (driver, cfg) → cases; see measure.mjs for the rules.
import { counting } from '../measure.mjs'
import { READ_LANES } from './reads.mjs'
import { WRITE_LANES } from './writes.mjs'
import { SCENARIO_LANES } from './scenarios.mjs'
import { MEMORY_LANES } from './memory.mjs'

export const LANES = { ...READ_LANES, ...WRITE_LANES, ...SCENARIO_LANES, ...MEMORY_LANES }

// Lanes of the --quick run (under 5 minutes on 2 cores with every peer): one of each kind.
export const QUICK_LANES = ['select', 'bytes', 'shapes', 'concurrent', 'point', 'batch', 'stall', 'batch-insert', 'insert-sequential', 'tx-interactive', 'chat', 'feed', 'memory']

export function runLane(name, driver, cfg) {
  return LANES[name](counting(driver, { ops: 0 }), cfg)
}
