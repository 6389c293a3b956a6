//! resqlite's native engine, exposed to JS as `NativeDatabase` (see src/native.ts for the
//! JS-side contract). Jobs go in through `read`/`write`; finished jobs come back in batches
//! through one thread-safe function call per batch.
//!
//! A query's path, folder by folder: `napi` (JS calls in) → `threads` (queued to the writer or
//! a reader, run there on its connection) → `sqlite` (prepared, bound, stepped) → `encode` (the
//! result as JS will read it) → `threads` (queued as a completion) → `handoff` (to the JS
//! thread). A small read may instead run on the JS thread itself, under a time budget: `inline`.
//! `live` records what queries read and writes change, and re-runs live queries.

mod encode;
mod error;
// The unit tests never register a JS function (Connection::sync_functions): its calls are dead code there.
#[cfg_attr(test, allow(dead_code))]
mod functions;
mod handoff;
mod inline;
mod live;
mod napi;
mod sqlite;
#[cfg(test)]
mod testing;
mod threads;

/// The engine's own allocations (result buffers, JSON, rows in transit; not SQLite's) come from
/// mimalloc, which reuses freed memory where the system allocator handed a large result's pages
/// back and faulted them in again for the next (experiments/046).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
