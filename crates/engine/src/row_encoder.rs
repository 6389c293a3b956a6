//! Encodes a result set for `select` into one binary buffer plus one text block, the shape the
//! JS decoder (src/decode.ts) reads with typed-array views and `String.prototype.slice`.
//!
//! Buffer, little-endian:
//!   header  u32 × 6: rows, columns, tags offset, slots offset, blob offset, text is two-byte (0/1)
//!   u32 × columns: length of each column name in the text block (in text units)
//!   tags    u8 per cell: 0 null · 1 number (slot f64) · 2 text · 3 blob · 4 int64 (slot i64)
//!   slots   8 bytes per cell, 8-aligned: the f64/i64 value, or for text/blob two u32:
//!           start and length in the text block (units) or the blob arena (bytes)
//!   blob arena
//! Text block: the column names, then every TEXT value, one JS string for the whole result.
//! It is one-byte (Latin-1) when all of it is ASCII, else UTF-16; offsets count its units.

use crate::connection::Connection;
use crate::error::{DbError, DbResult};
use crate::statement_cache::{ResultSize, Statement};
use crate::step::{cell, column_names, step, Cell};

const TAG_NULL: u8 = 0;
const TAG_NUMBER: u8 = 1;
const TAG_TEXT: u8 = 2;
const TAG_BLOB: u8 = 3;
const TAG_INT64: u8 = 4;

const HEADER_WORDS: usize = 6;
/// Integers JS numbers hold exactly.
const MAX_SAFE: i64 = (1 << 53) - 1;

pub enum Text {
    OneByte(Vec<u8>),
    TwoByte(Vec<u16>),
}

pub struct EncodedRows {
    pub buffer: Vec<u8>,
    pub text: Text,
}

/// The result's text. It stays one-byte (ASCII, copied as is) until the first non-ASCII
/// string; from then on it is UTF-16, converted as strings arrive (experiments/006).
enum TextBlock {
    Ascii(Vec<u8>),
    Utf16(Vec<u16>),
}

impl TextBlock {
    /// Appends `s`, returning its start and length in text units.
    fn push(&mut self, s: &str) -> (usize, usize) {
        if let TextBlock::Ascii(bytes) = self {
            if s.is_ascii() {
                let start = bytes.len();
                bytes.extend_from_slice(s.as_bytes());
                return (start, s.len());
            }
            let mut wide = Vec::with_capacity((bytes.len() + s.len()) * 2);
            wide.extend(bytes.iter().map(|&b| b as u16));
            *self = TextBlock::Utf16(wide);
        }
        let TextBlock::Utf16(units) = self else { unreachable!() };
        let start = units.len();
        // UTF-8 never takes fewer bytes than UTF-16 takes units, so s.len() units suffice.
        units.resize(start + s.len(), 0);
        let len = encoding_rs::mem::convert_str_to_utf16(s, &mut units[start..]);
        units.truncate(start + len);
        (start, len)
    }

    fn units(&self) -> usize {
        match self {
            TextBlock::Ascii(b) => b.len(),
            TextBlock::Utf16(u) => u.len(),
        }
    }

    fn finish(self) -> Text {
        match self {
            TextBlock::Ascii(b) => Text::OneByte(b),
            TextBlock::Utf16(u) => Text::TwoByte(u),
        }
    }
}

fn slot_pair(start: usize, len: usize) -> DbResult<u64> {
    if start + len > u32::MAX as usize {
        return Err(DbError::new("ERR_RESULT_TOO_LARGE", "the result set is larger than 4 GiB"));
    }
    Ok((start as u64) | ((len as u64) << 32))
}

pub fn encode_rows(conn: &Connection, statement: &Statement, max_rows: usize, safe_integers: bool) -> DbResult<EncodedRows> {
    let stmt = statement.raw;
    let mut more = step(conn, stmt)?;
    let names = column_names(stmt);
    let cols = names.len();
    let hint = statement.last_size.get().capped();
    let mut text = TextBlock::Ascii(Vec::with_capacity(hint.text));
    let name_lens: Vec<u32> = names.iter().map(|n| text.push(n).1 as u32).collect();
    let mut tags: Vec<u8> = Vec::with_capacity(hint.cells);
    let mut slots: Vec<u64> = Vec::with_capacity(hint.cells);
    let mut blobs: Vec<u8> = Vec::with_capacity(hint.blob);

    let mut rows = 0;
    while more && rows < max_rows {
        for i in 0..cols {
            // SAFETY: the statement is on a row; the cell is used before the next step.
            let (tag, slot) = match unsafe { cell(stmt, i as i32, &names, rows)? } {
                Cell::Null => (TAG_NULL, 0),
                Cell::Int(v) if !safe_integers && (-MAX_SAFE..=MAX_SAFE).contains(&v) => {
                    (TAG_NUMBER, (v as f64).to_bits())
                }
                Cell::Int(v) => (TAG_INT64, v as u64),
                Cell::Float(v) => (TAG_NUMBER, v.to_bits()),
                Cell::Text(s) => {
                    let (start, len) = text.push(s);
                    (TAG_TEXT, slot_pair(start, len)?)
                }
                Cell::Blob(b) => {
                    let start = blobs.len();
                    blobs.extend_from_slice(b);
                    (TAG_BLOB, slot_pair(start, b.len())?)
                }
            };
            tags.push(tag);
            slots.push(slot);
        }
        rows += 1;
        if rows < max_rows {
            more = step(conn, stmt)?;
        }
    }

    statement.last_size.set(ResultSize { cells: tags.len(), text: text.units(), blob: blobs.len(), ..statement.last_size.get() });
    let tags_offset = (HEADER_WORDS + cols) * 4;
    let slots_offset = (tags_offset + tags.len()).next_multiple_of(8);
    let blob_offset = slots_offset + slots.len() * 8;
    if blob_offset + blobs.len() > u32::MAX as usize {
        return Err(DbError::new("ERR_RESULT_TOO_LARGE", "the result set is larger than 4 GiB"));
    }
    let mut buffer = Vec::with_capacity(blob_offset + blobs.len());
    let text = text.finish();
    let header = [
        rows as u32,
        cols as u32,
        tags_offset as u32,
        slots_offset as u32,
        blob_offset as u32,
        matches!(text, Text::TwoByte(_)) as u32,
    ];
    for w in header.iter().chain(&name_lens) {
        buffer.extend_from_slice(&w.to_le_bytes());
    }
    buffer.extend_from_slice(&tags);
    buffer.resize(slots_offset, 0);
    if cfg!(target_endian = "little") {
        // SAFETY: u64 has no padding; on little-endian its bytes are already the wire layout.
        buffer.extend_from_slice(unsafe { std::slice::from_raw_parts(slots.as_ptr() as *const u8, slots.len() * 8) });
    } else {
        slots.iter().for_each(|s| buffer.extend_from_slice(&s.to_le_bytes()));
    }
    buffer.extend_from_slice(&blobs);
    Ok(EncodedRows { buffer, text })
}
