//! resqlite's native engine, exposed to JS as `NativeDatabase` (see src/native.ts for the
//! JS-side contract). Jobs go in through `read`/`write`; finished jobs come back in batches
//! through one thread-safe function call per batch.
//!
//! A query's path, folder by folder: `napi` (JS calls in) → `threads` (queued to the writer or
//! a reader, run there on its connection) → `sqlite` (prepared, bound, stepped) → `encode` (the
//! result as JS will read it) → `threads` (queued as a completion) → `handoff` (to the JS
//! thread). A small read may instead run on the JS thread itself, under a time budget, and so
//! may a small write, a write group, or a read calling JavaScript functions, a slice at a time:
//! `js_thread`.
//! `live` records what queries read and writes change; `threads` re-runs the live queries a
//! change touched.
//!
//! Layers, bottom to top: a module uses modules of its own layer and those below, never one
//! above, and no two files use each other, even round a loop (scripts/check-layers.mjs holds
//! both in `npm run lint`; test-only modules may use any layer).
//! - `error`, `protocol`, `js`, `spin`: what every layer reports, speaks and waits with: typed
//!   errors, the numbers both languages share, JS values, when busy-waiting pays.
//! - `functions`: JS-defined SQL functions need only JS values; every connection registers them.
//! - `sqlite`: a connection and its statements, knowing nothing of who runs them or why.
//! - `encode`, `live`: what a statement's rows become, and what it read or changed.
//! - `threads`, `js_thread`: the jobs, and the threads that run them on their connections; the
//!   JS thread's own connection and the jobs it runs, on that one or on the idle writer's.
//! - `handoff`: finished jobs back to the JS thread.
//! - `napi`: what JS calls, which reaches every layer below.

mod encode;
mod error;
// The unit tests never register a JS function (Connection::sync_functions): its calls are dead code there.
#[cfg_attr(test, allow(dead_code))]
mod functions;
mod handoff;
mod js;
mod js_thread;
mod live;
mod napi;
mod protocol;
mod spin;
mod sqlite;
#[cfg(test)]
mod testing;
mod threads;

/// The engine's own allocations (result buffers, JSON, rows in transit; not SQLite's) come from
/// mimalloc, which reuses freed memory where the system allocator handed a large result's pages
/// back and faulted them in again for the next (experiments/046).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
