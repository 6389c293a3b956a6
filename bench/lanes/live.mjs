// Live queries as the scenarios use them: a query whose latest rows the application keeps.
// (The live-query lanes of issue 4 are lanes/live-queries.mjs.)
//
// A driver with native live queries offers liveView(stmt, params) (resqlite: db.stream); every
// other library gets the same implementation here: after each write the lane makes, the query
// runs again (`written()`), and the newest result wins (async re-runs may finish out of
// order, so a result only replaces one issued before it). Both return the same shape:
//   { kind, rows(), written(shows), expectPerSample(writes), close() }
// The lane calls written(shows) after each of its writes is acknowledged; it resolves once the
// view shows that write. shows(rows) → true when rows show it: a native view needs it (it
// cannot otherwise tell which delivery, if any, reflects a write); the re-run ignores it (its
// re-run starts after the write, so it shows it by construction).
export async function openLive(d, stmt, params) {
  if (d.liveView) return d.liveView(stmt, params)
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
