// Work that runs away from its caller (on a native thread, queued behind a transaction, in a
// write group after the call returned) fails in a completion handler: the error's own stack
// holds only the engine's frames, not the application's that say which query failed. An error
// re-thrown from an async function that awaited the work can carry them instead: V8 lists the
// async functions awaiting the one that is running (its async stack trace), so a stack taken
// there names every caller that awaits the call, whichever thread ran it.

import { LIBRARY_FRAMES, withoutLibraryFrames } from './errors'

/** Settles as `work` does; a rejection's stack is replaced by the frames that await the call.
 * The success path costs one await of an already settling promise. */
export async function awaitedAway<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    throw withCallerFrames(error)
  }
}

/** `error` with its stack's frames replaced by those of the function awaiting here and its
 * callers, the library's own left out (`awaitedAway`, a transaction's `#runLevel` between a
 * body and the code awaiting the transaction), as ResqliteError leaves them out of its own.
 * Anything but an Error is left as it is. */
export function withCallerFrames(error: unknown): unknown {
  if (!(error instanceof Error)) return error
  const own = error.stack
  // Taken deeper, as ResqliteError's: the library's frames would take the caller's room.
  const limit = Error.stackTraceLimit
  if (typeof limit === 'number') Error.stackTraceLimit = limit + LIBRARY_FRAMES
  const here = new Error().stack
  Error.stackTraceLimit = limit
  if (typeof own !== 'string' || typeof here !== 'string') return error
  const framesAt = own.indexOf('\n    at ')
  const header = framesAt === -1 ? own : own.slice(0, framesAt)
  // `here` is "Error", then this function's frame and its callers'.
  const callers = here.slice(here.indexOf('\n') + 1)
  error.stack = withoutLibraryFrames(`${header}\n${callers}`, typeof limit === 'number' ? limit : Infinity)
  return error
}
