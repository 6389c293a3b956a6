//! Encodes a result set for `select` into one binary buffer, the shape the JS decoder
//! (src/decode.ts) reads with typed-array views, plus the column names.
//!
//! Buffer, little-endian:
//!   header  u32 × 6: rows, columns, tags offset, slots offset, arena offset, TEXT cells
//!   arena   every TEXT value (ASCII or UTF-16) and BLOB value, in cell order; written in place as rows
//!           are stepped, so the values are copied once on the reader
//!   tags    u8 per cell (TAG_* in protocol.rs), 8-aligned: 0 null · 1 number (slot f64) ·
//!           2 text · 3 blob · 4 int64 (slot i64) · 5 short text; then u8 per column: bit
//!           `1 << tag` set for every tag among the column's cells, so the decoder reads a column
//!           of numbers straight from its slots (experiments/041)
//!   slots   8 bytes per cell, 8-aligned: the f64/i64 value, or for text/blob two u32: start
//!           and length in the arena (bytes). A text is ASCII (its length's top bit set), copied
//!           into a JS string as Latin-1, or else UTF-16 (2-aligned), converted here on the
//!           reader so the JS thread only copies it (V8's UTF-8 decoder cost the JS thread
//!           ~1,100 instructions a string; experiments/033)
//! Each TEXT cell becomes its own JS string on the JS thread (napi/texts.rs), so a value a user
//! keeps keeps only itself alive (experiments/033).

use crate::error::{code, DbError, DbResult};
use crate::js::MAX_SAFE;
use crate::live::hooks::Statement;
use crate::protocol::{TAG_BLOB, TAG_INT64, TAG_NULL, TAG_NUMBER, TAG_SHORT_TEXT, TAG_TEXT};
use crate::sqlite::connection::Connection;
use crate::sqlite::statement_cache::ResultSize;
use crate::sqlite::step::{cell, column_names, step, Cell};

pub const HEADER_WORDS: usize = 6;
/// ASCII text this short crosses as TAG_SHORT_TEXT: JS slices it out of one string made for
/// the short texts of many cells, and V8 copies a slice shorter than 13 characters (its
/// SlicedString::kMinLength), so the slice keeps nothing else alive; one string per value
/// cost the JS thread more than the value (experiments/033).
pub const SHORT_TEXT_MAX: usize = 12;
/// In a TEXT cell's slot: the text is ASCII (else UTF-16).
pub const ASCII: u64 = 1 << 63;

pub struct EncodedRows {
    pub buffer: Vec<u8>,
    /// The column names, joined by NUL (a column name cannot hold one).
    pub names: String,
}

impl EncodedRows {
    /// The row count from the header.
    pub fn row_count(&self) -> u32 {
        self.buffer.get(..4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

fn slot_pair(start: usize, len: usize) -> DbResult<u64> {
    // A value is at most 1 GB (SQLITE_MAX_LENGTH), so the length's top bit is free for ASCII.
    if start + len > u32::MAX as usize {
        return Err(DbError::new(code::ERR_RESULT_TOO_LARGE, "the result set is larger than 4 GiB"));
    }
    Ok((start as u64) | ((len as u64) << 32))
}

/// A large result's first rows cross to JS in parts of about this many cells (or arena bytes),
/// each decoded on the JS thread while the reader steps the next; after MAX_EARLY_PARTS parts
/// the rest comes as one last part, decoded when the reader is done, so a huge result does not
/// keep a core busy while the JS thread's GC needs it (experiments/009, 033). Arena bytes: text
/// rows fill 64 KB long before 8,192 cells, and their last part then held most of the result
/// (experiments/039).
pub const PART_CELLS: usize = 8192;
const PART_BYTES: usize = 192 * 1024;
const MAX_EARLY_PARTS: usize = 3;

/// Encodes the rows of `statement`; with `emit_part`, every full part but the last goes to it
/// as soon as it is complete, and the last is returned (without, one part holds them all). Each part is self-contained (column names
/// included), so JS decodes them one by one.
pub fn encode_rows(
    conn: &Connection,
    statement: &Statement,
    max_rows: usize,
    safe_integers: bool,
    mut emit_part: Option<&mut dyn FnMut(EncodedRows)>,
) -> DbResult<EncodedRows> {
    let stmt = statement.raw;
    let mut more = step(conn, stmt)?;
    let names = column_names(stmt);
    let hint = statement.last_size.get().capped();
    let mut part = Part::new(&names, hint);
    let mut rows = 0;
    let mut emitted = 0;
    while more && rows < max_rows {
        for i in 0..names.len() {
            // SAFETY: the statement is on a row; the cell is used before the next step.
            let value = unsafe { cell(stmt, i as i32, &names, rows, conn.invalid_utf8())? };
            part.push_cell(value, safe_integers)?;
        }
        part.rows += 1;
        rows += 1;
        if rows < max_rows {
            more = step(conn, stmt)?;
        }
        let Some(emit_part) = emit_part.as_mut() else { continue };
        if more && rows < max_rows && emitted < MAX_EARLY_PARTS && part.is_full() {
            emitted += 1;
            let full = std::mem::replace(&mut part, Part::new(&names, hint));
            if rows == full.rows {
                remember_size(statement, &full); // the first part sizes the next query's parts
            }
            emit_part(full.finish()?);
        }
    }
    if rows == part.rows {
        remember_size(statement, &part);
    }
    part.finish()
}

fn remember_size(statement: &Statement, part: &Part) {
    let json = statement.last_size.get().json;
    statement.last_size.set(ResultSize { cells: part.tags.len(), arena: part.buffer.len() - ARENA_OFFSET, json });
}

/// One part of a result under construction.
struct Part {
    names: String,
    cols: usize,
    /// The header's room, then the arena; the tags and slots are appended when it is finished.
    buffer: Vec<u8>,
    tags: Vec<u8>,
    slots: Vec<u64>,
    /// Per column, a bit per tag among its cells.
    column_tags: Vec<u8>,
    /// The column of the next cell.
    column: usize,
    texts: usize,
    rows: usize,
    /// Scratch for converting text to UTF-16.
    units: Vec<u16>,
}

const ARENA_OFFSET: usize = HEADER_WORDS * 4;

impl Part {
    fn new(names: &[String], hint: ResultSize) -> Part {
        let cells = hint.cells.min(PART_CELLS + names.len()); // the last part grows as needed
        Part {
            names: names.join("\0"),
            cols: names.len(),
            buffer: {
                let mut buffer = Vec::with_capacity(ARENA_OFFSET + hint.arena + cells * 9 + 16);
                buffer.resize(ARENA_OFFSET, 0);
                buffer
            },
            tags: Vec::with_capacity(cells),
            slots: Vec::with_capacity(cells),
            column_tags: vec![0; names.len()],
            column: 0,
            texts: 0,
            rows: 0,
            units: Vec::new(),
        }
    }

    fn push_cell(&mut self, value: Cell, safe_integers: bool) -> DbResult<()> {
        let (tag, slot) = match value {
            Cell::Null => (TAG_NULL, 0),
            Cell::Int(v) if !safe_integers && (-MAX_SAFE..=MAX_SAFE).contains(&v) => (TAG_NUMBER, (v as f64).to_bits()),
            Cell::Int(v) => (TAG_INT64, v as u64),
            Cell::Float(v) => (TAG_NUMBER, v.to_bits()),
            Cell::Text(s, ascii) => {
                self.texts += 1;
                if ascii && s.len() <= SHORT_TEXT_MAX {
                    (TAG_SHORT_TEXT, self.append_to_arena(s.as_bytes())?)
                } else if ascii {
                    (TAG_TEXT, self.append_to_arena(s.as_bytes())? | ASCII)
                } else {
                    (TAG_TEXT, self.append_utf16(&s)?)
                }
            }
            Cell::Blob(b) => (TAG_BLOB, self.append_to_arena(b)?),
        };
        self.tags.push(tag);
        self.slots.push(slot);
        self.column_tags[self.column] |= 1 << tag;
        self.column += 1;
        if self.column == self.cols {
            self.column = 0;
        }
        Ok(())
    }

    /// Appends a value's bytes to the arena: its slot.
    fn append_to_arena(&mut self, bytes: &[u8]) -> DbResult<u64> {
        let start = self.buffer.len() - ARENA_OFFSET;
        self.buffer.extend_from_slice(bytes);
        slot_pair(start, bytes.len())
    }

    /// Appends non-ASCII text to the arena as UTF-16LE, 2-aligned: its slot (length in bytes).
    fn append_utf16(&mut self, s: &str) -> DbResult<u64> {
        if !self.buffer.len().is_multiple_of(2) {
            self.buffer.push(0);
        }
        // UTF-8 never takes fewer bytes than UTF-16 takes units, so s.len() units suffice.
        self.units.resize(s.len(), 0);
        let units = encoding_rs::mem::convert_str_to_utf16(s, &mut self.units);
        let start = self.buffer.len() - ARENA_OFFSET;
        self.buffer.extend(self.units[..units].iter().flat_map(|u| u.to_le_bytes()));
        slot_pair(start, units * 2)
    }

    fn is_full(&self) -> bool {
        self.tags.len() >= PART_CELLS || self.buffer.len() >= PART_BYTES
    }

    fn finish(self) -> DbResult<EncodedRows> {
        let mut buffer = self.buffer;
        let tags_offset = buffer.len().next_multiple_of(8);
        let slots_offset = (tags_offset + self.tags.len() + self.cols).next_multiple_of(8);
        if slots_offset + self.slots.len() * 8 > u32::MAX as usize {
            return Err(DbError::new(code::ERR_RESULT_TOO_LARGE, "the result set is larger than 4 GiB"));
        }
        buffer.resize(tags_offset, 0);
        buffer.extend_from_slice(&self.tags);
        buffer.extend_from_slice(&self.column_tags);
        buffer.resize(slots_offset, 0);
        if cfg!(target_endian = "little") {
            // SAFETY: u64 has no padding; on little-endian its bytes are already the wire layout.
            buffer.extend_from_slice(unsafe {
                std::slice::from_raw_parts(self.slots.as_ptr() as *const u8, self.slots.len() * 8)
            });
        } else {
            self.slots.iter().for_each(|s| buffer.extend_from_slice(&s.to_le_bytes()));
        }
        let header = [self.rows, self.cols, tags_offset, slots_offset, ARENA_OFFSET, self.texts];
        for (i, w) in header.into_iter().enumerate() {
            buffer[i * 4..i * 4 + 4].copy_from_slice(&(w as u32).to_le_bytes());
        }
        Ok(EncodedRows { buffer, names: self.names })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Opened;

    /// A cell decoded from the buffer.
    #[derive(Debug, PartialEq)]
    enum D {
        Null,
        /// A JS number, as the f64's bits.
        Number(u64),
        Text(String),
        Blob(Vec<u8>),
        Int64(i64),
    }

    fn number(v: f64) -> D {
        D::Number(v.to_bits())
    }

    fn text(s: &str) -> D {
        D::Text(s.into())
    }

    #[derive(Debug, PartialEq)]
    struct Decoded {
        names: Vec<String>,
        rows: Vec<Vec<D>>,
    }

    fn word(buffer: &[u8], at: usize) -> usize {
        u32::from_le_bytes(buffer[at..at + 4].try_into().unwrap()) as usize
    }

    /// Decodes a part per the layout in the file's header, checking its offsets, the TEXT
    /// count and the ASCII marks on the way.
    fn decode(part: &EncodedRows) -> Decoded {
        let b = &part.buffer;
        let (rows, cols, tags, slots, arena, texts) =
            (word(b, 0), word(b, 4), word(b, 8), word(b, 12), word(b, 16), word(b, 20));
        let cells = rows * cols;
        assert_eq!(part.row_count() as usize, rows);
        assert_eq!(arena, HEADER_WORDS * 4, "the arena follows the header");
        assert!(tags % 8 == 0 && tags >= arena && tags < arena + 8 + b.len(), "tags follow the arena, 8-aligned");
        assert_eq!(slots % 8, 0, "slots are 8-aligned");
        assert!(slots >= tags + cells + cols && slots < tags + cells + cols + 8, "slots follow the tags");
        assert_eq!(b.len(), slots + cells * 8, "the slots end the buffer");
        for c in 0..cols {
            let seen = (0..rows).fold(0u8, |bits, r| bits | 1 << b[tags + r * cols + c]);
            assert_eq!(b[tags + cells + c], seen, "column {c}'s tags, after the cells'");
        }
        let names: Vec<String> = if cols == 0 { vec![] } else { part.names.split('\0').map(String::from).collect() };
        assert_eq!(names.len(), cols);
        let text_tags = b[tags..tags + cells].iter().filter(|&&t| t == TAG_TEXT || t == TAG_SHORT_TEXT).count();
        assert_eq!(text_tags, texts, "the TEXT count");
        let mut cells = (0..cells).map(|i| {
            let slot = u64::from_le_bytes(b[slots + i * 8..slots + i * 8 + 8].try_into().unwrap());
            let (start, len) = ((slot & 0xffff_ffff) as usize, ((slot & !ASCII) >> 32) as usize);
            let bytes = || b[arena + start..arena + start + len].to_vec();
            match b[tags + i] {
                TAG_NULL => D::Null,
                TAG_NUMBER => D::Number(slot),
                TAG_TEXT if slot & ASCII != 0 => {
                    let s = String::from_utf8(bytes()).unwrap();
                    assert!(s.is_ascii() && s.len() > SHORT_TEXT_MAX, "{s:?} marked ASCII, not short");
                    D::Text(s)
                }
                TAG_TEXT => {
                    assert_eq!((arena + start) % 2, 0, "UTF-16 is 2-aligned");
                    let units: Vec<u16> = bytes().chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
                    let s = String::from_utf16(&units).expect("UTF-16");
                    assert!(!s.is_ascii(), "{s:?}: ASCII is sent as ASCII");
                    D::Text(s)
                }
                TAG_SHORT_TEXT => {
                    let s = String::from_utf8(bytes()).unwrap();
                    assert!(s.is_ascii() && s.len() <= SHORT_TEXT_MAX, "{s:?} marked short");
                    D::Text(s)
                }
                TAG_BLOB => D::Blob(bytes()),
                TAG_INT64 => D::Int64(slot as i64),
                tag => panic!("unknown tag {tag}"),
            }
        });
        let rows = (0..rows).map(|_| cells.by_ref().take(cols).collect()).collect();
        Decoded { names, rows }
    }

    /// Encodes `sql`'s result; with `parts`, the early parts come first in the list.
    fn encode(sql: &str, max_rows: usize, safe_integers: bool, parts: bool) -> DbResult<Vec<EncodedRows>> {
        let mut db = Opened::memory();
        let stmt = db.cache.get(&db.conn, &db.hooks, sql)?;
        let mut early = Vec::new();
        let mut emit = |part: EncodedRows| early.push(part);
        let last = encode_rows(&db.conn, stmt, max_rows, safe_integers, if parts { Some(&mut emit) } else { None })?;
        early.push(last);
        Ok(early)
    }

    fn one(sql: &str, safe_integers: bool) -> Decoded {
        let parts = encode(sql, usize::MAX, safe_integers, true).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
        assert_eq!(parts.len(), 1);
        decode(&parts[0])
    }

    #[test]
    fn every_sqlite_type_has_its_tag_and_slot() {
        let d = one("SELECT NULL AS n, 7 AS i, -2.5 AS f, 'abc' AS t, x'00ff10' AS b, -0.0 AS z", false);
        assert_eq!(d.names, ["n", "i", "f", "t", "b", "z"]);
        assert_eq!(
            d.rows,
            vec![vec![D::Null, number(7.0), number(-2.5), text("abc"), D::Blob(vec![0, 255, 16]), number(-0.0)]]
        );
    }

    #[test]
    fn integers_beyond_2_pow_53_are_int64_and_with_safe_integers_all_are() {
        let sql = "SELECT 9007199254740991, -9007199254740991, 9007199254740992, -9007199254740992, \
                   9223372036854775807, -9223372036854775807 - 1, 0";
        let d = one(sql, false);
        assert_eq!(
            d.rows[0],
            vec![
                number(9007199254740991.0),
                number(-9007199254740991.0),
                D::Int64(1 << 53),
                D::Int64(-(1 << 53)),
                D::Int64(i64::MAX),
                D::Int64(i64::MIN),
                number(0.0)
            ]
        );
        let safe = one(sql, true);
        assert_eq!(
            safe.rows[0],
            vec![
                D::Int64((1 << 53) - 1),
                D::Int64(1 - (1 << 53)),
                D::Int64(1 << 53),
                D::Int64(-(1 << 53)),
                D::Int64(i64::MAX),
                D::Int64(i64::MIN),
                D::Int64(0)
            ]
        );
        assert_eq!(one("SELECT 1.0", true).rows[0], vec![number(1.0)], "a REAL stays a number");
    }

    #[test]
    fn an_empty_result_still_names_its_columns() {
        let d = one("SELECT 1 AS a, 'x' AS bb WHERE 0", false);
        assert_eq!(d, Decoded { names: vec!["a".into(), "bb".into()], rows: vec![] });
        let parts = encode("SELECT 1 AS a WHERE 0", usize::MAX, false, false).unwrap();
        let end = (HEADER_WORDS * 4 + 1).next_multiple_of(8);
        assert_eq!(parts[0].buffer.len(), end, "the header, the column's tags (8-aligned), no values, no cells");
    }

    #[test]
    fn empty_text_and_blob_are_not_null() {
        assert_eq!(one("SELECT '', x''", false).rows[0], vec![text(""), D::Blob(vec![])]);
    }

    #[test]
    fn ascii_text_is_marked_ascii_and_other_text_is_utf16() {
        // Each value is marked on its own: non-ASCII text does not change how others are sent.
        let d = one("SELECT 'ab' AS x, 'é😀z' AS \"ñ\", 'cd' AS y UNION ALL SELECT 'q', NULL, '😀'", false);
        assert_eq!(d.names, ["x", "ñ", "y"]);
        assert_eq!(d.rows, vec![vec![text("ab"), text("é😀z"), text("cd")], vec![text("q"), D::Null, text("😀")]]);
        assert_eq!(one("SELECT 'é' AS a", false).rows[0], vec![text("é")], "Latin-1 is not ASCII");
        // Short ASCII (up to SHORT_TEXT_MAX) and longer ASCII take their own tags.
        let tags = |sql: &str| {
            let part = &encode(sql, usize::MAX, false, false).unwrap()[0];
            let at = word(&part.buffer, 8);
            part.buffer[at..at + 3].to_vec()
        };
        assert_eq!(tags("SELECT '', 'abcdefghijkl', 'abcdefghijklm'"), vec![TAG_SHORT_TEXT, TAG_SHORT_TEXT, TAG_TEXT]);
        assert_eq!(tags("SELECT 'é', 'x', '0123456789abcdef'"), vec![TAG_TEXT, TAG_SHORT_TEXT, TAG_TEXT]);
    }

    #[test]
    fn text_and_blobs_of_many_rows_keep_their_offsets() {
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) \
                   SELECT i, printf('t%d', i), CAST(zeroblob(i % 3) || i AS BLOB) FROM n";
        let d = one(sql, false);
        assert_eq!(d.rows.len(), 50);
        for (i, row) in (1..=50).zip(&d.rows) {
            let mut blob = vec![0; i % 3];
            blob.extend(i.to_string().bytes());
            assert_eq!(row, &vec![number(i as f64), D::Text(format!("t{i}")), D::Blob(blob)]);
        }
    }

    #[test]
    fn max_rows_stops_the_result() {
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT i FROM n";
        let parts = encode(sql, 3, false, true).unwrap();
        assert_eq!(decode(&parts[0]).rows, vec![vec![number(1.0)], vec![number(2.0)], vec![number(3.0)]]);
    }

    /// `rows` rows of `cols` columns; cell (r, c) holds r * cols + c.
    fn counting(rows: usize, cols: usize) -> String {
        let columns: Vec<String> = (0..cols).map(|c| format!("i * {cols} + {c} AS c{c}")).collect();
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {}) SELECT {} FROM n",
            rows - 1,
            columns.join(", ")
        )
    }

    /// The parts' row counts, checking each is self-contained and the values run on.
    fn part_rows(parts: &[EncodedRows], cols: usize) -> Vec<usize> {
        let mut next = 0;
        parts
            .iter()
            .map(|part| {
                let d = decode(part);
                assert_eq!(d.names.len(), cols, "every part names its columns");
                for row in &d.rows {
                    for cell in row {
                        assert_eq!(cell, &number(next as f64));
                        next += 1;
                    }
                }
                d.rows.len()
            })
            .collect()
    }

    #[test]
    fn a_large_result_comes_in_parts_then_one_last_part() {
        let rows = PART_CELLS * 5 + 1;
        let parts = encode(&counting(rows, 1), usize::MAX, false, true).unwrap();
        let p = PART_CELLS;
        assert_eq!(part_rows(&parts, 1), vec![p, p, p, 2 * p + 1], "three early parts, the rest in the last");

        let parts = encode(&counting(PART_CELLS, 2), usize::MAX, false, true).unwrap();
        assert_eq!(part_rows(&parts, 2), vec![p / 2, p / 2], "parts count cells, not rows");

        let parts = encode(&counting(rows, 1), usize::MAX, false, false).unwrap();
        assert_eq!(part_rows(&parts, 1), vec![rows], "without emit_part, one part holds all");
    }

    #[test]
    fn a_result_of_long_values_comes_in_parts_by_bytes() {
        // 100 rows of 10,000-byte texts: a part is full once its arena holds PART_BYTES.
        let sql = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99) \
                   SELECT i, printf('%.*c', 10000, 'x') AS t FROM n";
        let parts = encode(sql, usize::MAX, false, true).unwrap();
        let rows: Vec<usize> = parts.iter().map(|p| p.row_count() as usize).collect();
        let per_part = PART_BYTES.div_ceil(10_000);
        assert!(4 * per_part < 100, "enough rows for three early parts and a last one");
        assert_eq!(rows, vec![per_part, per_part, per_part, 100 - 3 * per_part], "three early parts, then the rest");
        let ids: Vec<D> = parts.iter().flat_map(|p| decode(p).rows).map(|mut r| r.remove(0)).collect();
        assert_eq!(ids, (0..100).map(|i| number(i as f64)).collect::<Vec<_>>(), "in order, none lost");
    }

    #[test]
    fn a_result_that_ends_with_a_full_part_is_one_part() {
        let parts = encode(&counting(PART_CELLS, 1), usize::MAX, false, true).unwrap();
        assert_eq!(part_rows(&parts, 1), vec![PART_CELLS], "no empty last part");
        let parts = encode(&counting(PART_CELLS * 3, 1), PART_CELLS * 2, false, true).unwrap();
        assert_eq!(part_rows(&parts, 1), vec![PART_CELLS, PART_CELLS], "max_rows ends it");
    }

    #[test]
    fn text_that_is_not_utf8_is_an_error_naming_its_cell() {
        let err = encode("SELECT 1 AS ok UNION ALL SELECT CAST(x'61ff' AS TEXT)", usize::MAX, false, true)
            .err()
            .expect("an error");
        assert_eq!(err.code, code::ERR_INVALID_UTF8);
        assert_eq!(
            err.message,
            "column 'ok' of row 2 holds TEXT that is not valid UTF-8 (at byte 1); read it as bytes with CAST(ok AS BLOB), or open with invalidUtf8: 'replace'"
        );
    }

    #[test]
    fn row_count_reads_the_header() {
        assert_eq!(EncodedRows { buffer: vec![], names: String::new() }.row_count(), 0);
        let parts = encode(&counting(5, 1), usize::MAX, false, true).unwrap();
        assert_eq!(parts[0].row_count(), 5);
    }
}
