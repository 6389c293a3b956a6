// An async driver's `transaction(body)` when the library has no transaction API of its own:
// BEGIN, or a SAVEPOINT when one is open, through `ctl(sql)`; the body's calls are awaited
// one by one, so one transaction at a time per connection (sqlite3, Turso).
export function asyncTransactions(ctl, tx) {
  let depth = 0 // open transaction levels: 0 → BEGIN, deeper → SAVEPOINT
  return (body) => async () => {
    const level = depth
    await ctl(level ? `SAVEPOINT s${level}` : 'BEGIN')
    depth++
    try {
      const result = await body(tx)
      await ctl(level ? `RELEASE s${level}` : 'COMMIT')
      return result
    } catch (err) {
      await ctl(level ? `ROLLBACK TO s${level}` : 'ROLLBACK')
      if (level) await ctl(`RELEASE s${level}`)
      throw err
    } finally {
      depth--
    }
  }
}
