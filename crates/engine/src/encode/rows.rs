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

use crate::error::{DbError, DbResult};
use crate::sqlite::connection::Connection;
use crate::sqlite::statement_cache::{ResultSize, Statement};
use crate::sqlite::step::{cell, column_names, step, Cell};

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

impl EncodedRows {
    /// The row count from the header.
    pub fn row_count(&self) -> u32 {
        self.buffer.get(..4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
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

/// A large result's first rows cross to JS in parts of about this many cells, each decoded on
/// the JS thread while the reader steps the next; after MAX_EARLY_PARTS parts the rest comes
/// as one last part, decoded when the reader is done, so a huge result does not keep a core
/// busy while the JS thread's GC needs it (experiments/009).
pub const PART_CELLS: usize = 8192;
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
            let value = unsafe { cell(stmt, i as i32, &names, rows)? };
            part.push_cell(value, safe_integers)?;
        }
        part.rows += 1;
        rows += 1;
        if rows < max_rows {
            more = step(conn, stmt)?;
        }
        let Some(emit_part) = emit_part.as_mut() else { continue };
        if more && rows < max_rows && emitted < MAX_EARLY_PARTS && part.tags.len() >= PART_CELLS {
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
    statement.last_size.set(ResultSize {
        cells: part.tags.len(),
        text: part.text.units(),
        blob: part.blobs.len(),
        json,
    });
}

/// One part of a result under construction.
struct Part {
    text: TextBlock,
    name_lens: Vec<u32>,
    tags: Vec<u8>,
    slots: Vec<u64>,
    blobs: Vec<u8>,
    rows: usize,
}

impl Part {
    fn new(names: &[String], hint: ResultSize) -> Part {
        let mut text = TextBlock::Ascii(Vec::with_capacity(hint.text));
        let name_lens = names.iter().map(|n| text.push(n).1 as u32).collect();
        let cells = hint.cells.min(PART_CELLS + names.len()); // the last part grows as needed
        Part {
            text,
            name_lens,
            tags: Vec::with_capacity(cells),
            slots: Vec::with_capacity(cells),
            blobs: Vec::with_capacity(hint.blob),
            rows: 0,
        }
    }

    fn push_cell(&mut self, value: Cell, safe_integers: bool) -> DbResult<()> {
        let (tag, slot) = match value {
            Cell::Null => (TAG_NULL, 0),
            Cell::Int(v) if !safe_integers && (-MAX_SAFE..=MAX_SAFE).contains(&v) => (TAG_NUMBER, (v as f64).to_bits()),
            Cell::Int(v) => (TAG_INT64, v as u64),
            Cell::Float(v) => (TAG_NUMBER, v.to_bits()),
            Cell::Text(s) => {
                let (start, len) = self.text.push(s);
                (TAG_TEXT, slot_pair(start, len)?)
            }
            Cell::Blob(b) => {
                let start = self.blobs.len();
                self.blobs.extend_from_slice(b);
                (TAG_BLOB, slot_pair(start, b.len())?)
            }
        };
        self.tags.push(tag);
        self.slots.push(slot);
        Ok(())
    }

    fn finish(self) -> DbResult<EncodedRows> {
        let cols = self.name_lens.len();
        let tags_offset = (HEADER_WORDS + cols) * 4;
        let slots_offset = (tags_offset + self.tags.len()).next_multiple_of(8);
        let blob_offset = slots_offset + self.slots.len() * 8;
        if blob_offset + self.blobs.len() > u32::MAX as usize {
            return Err(DbError::new("ERR_RESULT_TOO_LARGE", "the result set is larger than 4 GiB"));
        }
        let mut buffer = Vec::with_capacity(blob_offset + self.blobs.len());
        let text = self.text.finish();
        let header = [
            self.rows as u32,
            cols as u32,
            tags_offset as u32,
            slots_offset as u32,
            blob_offset as u32,
            matches!(text, Text::TwoByte(_)) as u32,
        ];
        for w in header.iter().chain(&self.name_lens) {
            buffer.extend_from_slice(&w.to_le_bytes());
        }
        buffer.extend_from_slice(&self.tags);
        buffer.resize(slots_offset, 0);
        if cfg!(target_endian = "little") {
            // SAFETY: u64 has no padding; on little-endian its bytes are already the wire layout.
            buffer.extend_from_slice(unsafe {
                std::slice::from_raw_parts(self.slots.as_ptr() as *const u8, self.slots.len() * 8)
            });
        } else {
            self.slots.iter().for_each(|s| buffer.extend_from_slice(&s.to_le_bytes()));
        }
        buffer.extend_from_slice(&self.blobs);
        Ok(EncodedRows { buffer, text })
    }
}
