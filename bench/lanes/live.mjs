// Live queries as the scenarios use them: a query whose latest rows the application keeps.
//
// Today every library gets the same implementation: after each write the lane makes, the query
// runs again (`written()`), and the newest result wins (async re-runs may finish out of
// order, so a result only replaces one issued before it). When a driver offers native live
// queries (driver.live, e.g. resqlite's db.stream), openLive uses that instead; such a driver
// returns the same shape: { kind, rows(), written(), expectPerSample(writes), close() }; its
// written() resolves once the view shows that write.
export async function openLive(d, stmt, params) {
  if (d.live) return d.live(stmt, params)
  return requery(d, stmt, params)
}

async function requery(d, stmt, params) {
  let current = await stmt.all(params)
  let issued = 0
  let shown = 0
  const show = (seq, rows) => {
    if (seq > shown) {
      shown = seq
      current = rows
    }
  }
  return {
    kind: 'requery',
    rows: () => current,
    // Called by the lane after each of its writes completes; async drivers: a promise.
    written() {
      const seq = ++issued
      if (d.sync) return show(seq, stmt.all(params))
      return stmt.all(params).then((rows) => show(seq, rows))
    },
    // Operations this implementation adds to a sample of `writes` writes: one re-run each.
    expectPerSample: (writes) => ({ ops: writes }),
    close() {},
  }
}
