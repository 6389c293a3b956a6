//! An iteration's statement, encoded a page at a time (threads/iterate.rs): held open between
//! pages, so every page comes from the snapshot its first step took.

use crate::encode::rows::{encode_rows, EncodedRows};
use crate::error::DbResult;
use crate::live::hooks::Statement;
use crate::sqlite::connection::Connection;
use crate::sqlite::params::{bind, Reader};

/// An iteration's statement, prepared for it alone (a select of the same SQL meanwhile must not
/// reset it), and the parameter bytes its bindings point into.
pub struct Cursor {
    stmt: Statement,
    _params: Vec<u8>,
    page_rows: usize,
}

impl Cursor {
    /// `stmt` (checked to be one read-only statement) bound to `params`.
    pub fn new(stmt: Statement, params: Vec<u8>, page_rows: usize) -> DbResult<Cursor> {
        bind(&stmt, &mut Reader::new(&params))?;
        Ok(Cursor { stmt, _params: params, page_rows })
    }

    /// The next page, and whether it is full (more rows may follow; else it is the last).
    pub fn page(&self, conn: &Connection, safe_integers: bool) -> DbResult<(EncodedRows, bool)> {
        self.page_of(conn, self.page_rows, safe_integers)
    }

    /// The next `rows` rows at most, and whether they are all there (more may follow).
    pub fn page_of(&self, conn: &Connection, rows: usize, safe_integers: bool) -> DbResult<(EncodedRows, bool)> {
        let page = encode_rows(conn, &self.stmt, rows, safe_integers, None)?;
        let full = page.row_count() as usize == rows;
        Ok((page, full))
    }
}
