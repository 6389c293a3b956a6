//! SQL functions written in JavaScript (`db.function`, `db.aggregate`): their definitions,
//! registered on each connection before it prepares a statement (registry.rs, callbacks.rs),
//! and their calls, which run on the JS thread: at once when the statement runs there (a read
//! or a write on the JS thread), else handed over by the engine thread that runs it, which
//! waits (host.rs; experiments/054). Values cross as they do for parameters and rows
//! (values.rs).

mod callbacks;
mod host;
mod registry;
mod values;

pub use callbacks::Kind;
pub use host::{set_js_env, Callers, FunctionHost};
pub use registry::Functions;
