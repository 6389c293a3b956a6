// One 'abort' listener per AbortSignal, however many calls wait on it. A request's signal
// handed to a Promise.all of queries would otherwise get a listener per query, and past 10 Node
// prints MaxListenersExceededWarning (issue 30 item 15). The signal's own listener list is left
// as the application made it: no setMaxListeners on a signal the library does not own.

import { abortError } from './errors'

interface Waiting {
  readonly callbacks: Set<() => void>
  readonly listener: () => void
}

const waiting = new WeakMap<AbortSignal, Waiting>()

/** Calls `callback` once when `signal` aborts (the signal must not be aborted yet). Returns the
 * function that forgets it; the signal's listener goes when its last callback is forgotten. */
export function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  let entry = waiting.get(signal)
  if (entry === undefined) {
    const callbacks = new Set<() => void>()
    const listener = () => {
      waiting.delete(signal)
      const all = [...callbacks]
      callbacks.clear()
      for (const f of all) {
        try {
          f()
        } catch (error) {
          // One failing callback does not keep the others from running.
          queueMicrotask(() => {
            throw error
          })
        }
      }
    }
    entry = { callbacks, listener }
    waiting.set(signal, entry)
    signal.addEventListener('abort', listener, { once: true })
  }
  const mine = entry
  // Each registration is its own function, so the same callback may wait twice.
  const registered = () => callback()
  mine.callbacks.add(registered)
  return () => {
    if (!mine.callbacks.delete(registered) || mine.callbacks.size > 0) return
    if (waiting.get(signal) === mine) waiting.delete(signal)
    signal.removeEventListener('abort', mine.listener)
  }
}

/** Settles as `promise` does, or rejects with `ABORT_ERR` as soon as `signal` aborts (the work
 * behind `promise` goes on; its outcome is dropped). */
export function abortable<V>(promise: Promise<V>, signal: AbortSignal, sql: string): Promise<V> {
  if (signal.aborted) return Promise.reject(abortError(signal, sql))
  return new Promise<V>((resolve, reject) => {
    const unlisten = whenAborted(signal, () => reject(abortError(signal, sql)))
    promise.then(resolve, reject).finally(unlisten)
  })
}
