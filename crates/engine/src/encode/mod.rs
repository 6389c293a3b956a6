//! A result as JS reads it: rows in one binary buffer and the column names (`rows`), an
//! iteration's pages of them (`pages`), or the JSON text of `selectBytes` (`json`). The encoded
//! result goes back through `threads` to `handoff`.

pub mod json;
pub mod pages;
pub mod rows;
