// Live queries done yourself on a synchronous better-sqlite3-style binding (better-sqlite3,
// libsql): every write re-runs every watched query and calls back with its rows. The shape is
// the drivers' `live` (lanes/live-queries.mjs): watch(sql, params, tables, onRows) → stop,
// write(sql, params), counters() → { requeries, emissions }. `call` runs a statement with the
// lane's parameter array in the library's cheapest form: { all(stmt, params), run(stmt, params) }.
export function rerunEveryWatch(db, call) {
  const watchers = new Set()
  const counters = { requeries: 0, emissions: 0 }
  const statements = new Map()
  const prepared = (sql) => statements.get(sql) ?? statements.set(sql, db.prepare(sql)).get(sql)
  return {
    watch(sql, params, _tables, onRows) {
      const w = { stmt: prepared(sql), params, onRows }
      watchers.add(w)
      counters.emissions++
      onRows(call.all(w.stmt, params))
      return () => watchers.delete(w)
    },
    write(sql, params) {
      const result = call.run(prepared(sql), params)
      for (const w of watchers) {
        counters.requeries++
        counters.emissions++
        w.onRows(call.all(w.stmt, w.params))
      }
      return result
    },
    counters: () => ({ ...counters }),
  }
}
