// Helpers shared by the lane groups.
import { createHash } from 'node:crypto'

export const hash = (data) => createHash('sha1').update(data).digest('hex').slice(0, 12)
// libsql's Statement#get adds a `_metadata` property (query duration) to the row it returns;
// it is not data, so checksums leave it out.
export const hashRows = (rows) => hash(JSON.stringify(rows, (k, v) => (k === '_metadata' ? undefined : v)))
export const fmtN = (n) => n.toLocaleString('en')

// A case as the orchestrator expects it: id (stable across runs: results are compared by it),
// title, group (for the dashboard), check (same for every library when they return the same
// data) and the measurement.
export const makeCase = (group, id, title, check, m, extra = {}) => ({ group, id, title, check, ...extra, ...m })

// Counts for the common result shapes.
export const rowsOf = (r) => ({ rows: r.length })
export const rowsOfMany = (rs) => ({ rows: rs.reduce((n, r) => n + r.length, 0) })
