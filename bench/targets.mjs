// The engine issues' targets: resqlite's medians relative to a peer's, computed from the run.
const TARGETS_DEF = [
  ['select 1,000: wall vs better-sqlite3 .all()', 'select.1000', 'better-sqlite3', 'wall', '<=', 0.8],
  ['select 10,000: wall vs better-sqlite3 .all()', 'select.10000', 'better-sqlite3', 'wall', '<=', 0.8],
  ['select 1,000: JS-thread vs better-sqlite3 .all()', 'select.1000', 'better-sqlite3', 'js', '<=', 0.2],
  ['select 10,000: JS-thread vs better-sqlite3 .all()', 'select.10000', 'better-sqlite3', 'js', '<=', 0.2],
  ['selectBytes 10,000: wall vs better-sqlite3 all+stringify+Buffer.from', 'bytes.10000', 'better-sqlite3', 'wall', '<=', 0.25],
  ['selectBytes 10,000: JS-thread vs better-sqlite3 all+stringify+Buffer.from', 'bytes.10000', 'better-sqlite3', 'js', '<=', 0.05],
  ['point query q/s vs better-sqlite3', 'point', 'better-sqlite3', 'rate', '>=', 0.8],
  ['point query q/s vs sqlite3', 'point', 'sqlite3', 'rate', '>=', 3],
  ['longest stall, 100,000-row select (p90 of runs, ms)', 'stall', null, 'stall.p90', '<=', 5],
  ['batch insert 10,000 rows: wall vs better-sqlite3', 'batch-insert.10000', 'better-sqlite3', 'wall', '<=', 1],
  ['100 concurrent single inserts: wall vs better-sqlite3 loop', 'insert-concurrent', 'better-sqlite3', 'wall', '<=', 1],
  ['100 sequential single inserts: wall vs better-sqlite3 loop', 'insert-sequential', 'better-sqlite3', 'wall', '<=', 1.5],
  ['interactive transaction (2 inserts + select): wall vs better-sqlite3', 'tx-interactive', 'better-sqlite3', 'wall', '<=', 2],
  ['batch insert 10,000 rows × 20 columns: wall vs better-sqlite3', 'batch-insert-wide', 'better-sqlite3', 'wall', '<=', 1],
]

export const TARGETS = TARGETS_DEF.map(([name, id, peer, metric, op, goal]) => ({
  name,
  evaluate(rows) {
    const get = (lib) => rows.find((c) => c.lib === lib && c.id === id)
    const a = get('resqlite')
    let value
    if (a && peer === null) value = a.stall?.p90
    else if (a && get(peer)) value = a[metric].median / get(peer)[metric].median
    const pass = value === undefined ? undefined : op === '<=' ? value <= goal : value >= goal
    return { name, case: id, peer, metric, value, op, goal, pass }
  },
}))
