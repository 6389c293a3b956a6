//! A result as JS reads it: rows in one binary buffer and one string (`rows`), or the JSON text
//! of `selectBytes` (`json`). The encoded result goes back through `threads` to `handoff`.

pub mod json;
pub mod rows;
