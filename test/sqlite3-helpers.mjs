// Helpers of the resqlite/sqlite3 tests: a callback call as a promise, and an open Database.

/** Calls `target[method](...args, callback)`: resolves with the callback's `this`, its first
 * result and all of them (`results`); rejects with its error. */
export function call(target, method, ...args) {
  return new Promise((resolve, reject) => {
    target[method](...args, function (err, ...results) {
      if (err) reject(err)
      else resolve({ self: this, result: results[0], results })
    })
  })
}

/** `new module.Database(path[, mode])`, once its open callback said it opened. */
export function openWith(module, path = ':memory:', mode = undefined) {
  return new Promise((resolve, reject) => {
    const done = (e) => (e ? reject(e) : resolve(db))
    const db = mode === undefined ? new module.Database(path, done) : new module.Database(path, mode, done)
  })
}
