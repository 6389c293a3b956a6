//! Encodes a result set as the JSON text `JSON.stringify(rows)` would produce for the same
//! `select` rows, for `selectBytes`. Values JSON.stringify cannot express: BLOB → base64
//! string, INTEGER outside ±(2^53−1) → exact digits, non-finite REAL → null.

use base64::Engine as _;

use crate::error::DbResult;
use crate::live::hooks::Statement;
use crate::sqlite::connection::Connection;
use crate::sqlite::step::{cell, column_names, step, Cell};

/// 2^53: every integral f64 below it is an exact integer.
const MAX_EXACT: f64 = 9007199254740992.0;
/// Magnitudes zmij prints in exponent form where ECMAScript's Number::toString uses fixed
/// notation (`7.8e-6`, not `0.0000078`).
const ZMIJ_EXPONENT_ONLY: std::ops::Range<f64> = 1e-6..1e-5;

/// The order in which a JS object built from these column names lists its keys, and the column
/// each key takes its value from. JS puts array-index keys first in ascending order, then the
/// rest in insertion order; a repeated name keeps its first position and its last value.
pub fn key_order(names: &[String]) -> Vec<(String, usize)> {
    let mut keys: Vec<(String, usize)> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        match keys.iter_mut().find(|(k, _)| k == name) {
            Some(entry) => entry.1 = i,
            None => keys.push((name.clone(), i)),
        }
    }
    let (mut indices, others): (Vec<_>, Vec<_>) = keys.into_iter().partition(|(k, _)| array_index(k).is_some());
    indices.sort_by_key(|(k, _)| array_index(k));
    indices.extend(others);
    indices
}

/// `Some(n)` when `key` is a canonical array index (0 ..= 2^32 − 2) in JS.
fn array_index(key: &str) -> Option<u32> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty() && key.len() <= 10);
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>().ok().filter(|&n| n < u32::MAX as u64).map(|n| n as u32)
}

pub fn encode_json(conn: &Connection, statement: &Statement, max_rows: usize) -> DbResult<Vec<u8>> {
    let stmt = statement.raw;
    let mut more = step(conn, stmt)?;
    let names = column_names(stmt);
    let order = key_order(&names);
    // `"name":` for each key, escaped once per query rather than once per row.
    let tokens: Vec<Vec<u8>> = order
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let mut t = Vec::with_capacity(name.len() + 4);
            if i > 0 {
                t.push(b',');
            }
            write_string(&mut t, name);
            t.push(b':');
            t
        })
        .collect();

    let mut size = statement.last_size.get();
    let mut out = Vec::with_capacity(size.capped().json.max(256));
    out.push(b'[');
    let mut numbers = Numbers::new();
    let mut row = 0;
    while more && row < max_rows {
        out.extend_from_slice(if row == 0 { b"{" } else { b",{" });
        for (token, &(_, col)) in tokens.iter().zip(&order) {
            out.extend_from_slice(token);
            // SAFETY: the statement is on a row; the cell is used before the next step.
            match unsafe { cell(stmt, col as i32, &names, row, conn.invalid_utf8())? } {
                Cell::Null => out.extend_from_slice(b"null"),
                Cell::Int(v) => numbers.int(&mut out, v),
                Cell::Float(v) => numbers.float(&mut out, v),
                Cell::Text(s, _) => write_string(&mut out, &s),
                Cell::Blob(b) => {
                    out.push(b'"');
                    let start = out.len();
                    out.resize(start + base64::encoded_len(b.len(), true).unwrap_or(0), 0);
                    let written = base64::engine::general_purpose::STANDARD
                        .encode_slice(b, &mut out[start..])
                        .expect("buffer sized by encoded_len");
                    out.truncate(start + written);
                    out.push(b'"');
                }
            }
        }
        out.push(b'}');
        row += 1;
        if row < max_rows {
            more = step(conn, stmt)?;
        }
    }
    out.push(b']');
    size.json = out.len();
    statement.last_size.set(size);
    Ok(out)
}

/// Prints numbers as JSON.stringify does.
struct Numbers {
    ints: itoa::Buffer,
    ryu: ryu_js::Buffer,
    zmij: zmij::Buffer,
}

impl Numbers {
    fn new() -> Self {
        Numbers { ints: itoa::Buffer::new(), ryu: ryu_js::Buffer::new(), zmij: zmij::Buffer::new() }
    }

    fn int(&mut self, out: &mut Vec<u8>, v: i64) {
        out.extend_from_slice(self.ints.format(v).as_bytes());
    }

    /// ECMAScript's Number::toString (ryu_js implements it), or `null` when not finite.
    fn float(&mut self, out: &mut Vec<u8>, v: f64) {
        let printed = match v {
            // A float pattern compares with ==, so this matches -0 too, which prints as 0 in JS.
            0.0 => "0",
            // Integral values below 2^53 print as their integer digits, and itoa is several
            // times cheaper than ryu (experiments/004).
            v if v.fract() == 0.0 && v.abs() < MAX_EXACT => self.ints.format(v as i64),
            v if !v.is_finite() => "null",
            // What is left: integral values from 2^53 up, and non-integral ones. zmij finds the
            // same shortest digits as ryu at about half the cost, and prints the non-integral
            // ones as ECMAScript does, except in ZMIJ_EXPONENT_ONLY (experiments/045); integral
            // ones it prints with a `.0`.
            v if v.fract() != 0.0 && !ZMIJ_EXPONENT_ONLY.contains(&v.abs()) => self.zmij.format_finite(v),
            v => self.ryu.format_finite(v),
        };
        out.extend_from_slice(printed.as_bytes());
    }
}

/// Bytes JSON.stringify escapes: `"`, `\` and the C0 controls. Everything else, including
/// non-ASCII, is copied as it is (valid UTF-8 holds no lone surrogates to escape).
const fn escape_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
}
static NEEDS_ESCAPE: [bool; 256] = escape_table();

pub fn write_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Most text needs no escape: a word-at-a-time scan, then one copy (experiments/045).
    if needs_escape(bytes) {
        write_escaped(out, bytes);
    } else {
        out.extend_from_slice(bytes);
    }
    out.push(b'"');
}

/// Whether any byte may need escaping (false positives only), 8 bytes at a time, the last
/// few padded with spaces.
fn needs_escape(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    if words.by_ref().any(|w| word_needs_escape(u64::from_le_bytes(w.try_into().unwrap()))) {
        return true;
    }
    let mut last = [b' '; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    word_needs_escape(u64::from_le_bytes(last))
}

fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Skip 8 bytes at a time while none needs escaping (experiments/010).
        if i + 8 <= bytes.len() && !word_needs_escape(u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap())) {
            i += 8;
            continue;
        }
        let b = bytes[i];
        i += 1;
        if !NEEDS_ESCAPE[b as usize] {
            continue;
        }
        out.extend_from_slice(&bytes[run..i - 1]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]),
        }
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
}

/// True when one of the 8 bytes may be `"`, `\` or below 0x20 (SWAR; false positives only,
/// which the byte loop then sorts out).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    (control | zero_byte(w ^ (ONES * b'"' as u64)) | zero_byte(w ^ (ONES * b'\\' as u64))) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_js_object_order() {
        let names: Vec<String> = ["b", "1", "a", "b", "0", "01", "4294967295"].iter().map(|s| s.to_string()).collect();
        let keys = key_order(&names);
        let order: Vec<(&str, usize)> = keys.iter().map(|(k, i)| (k.as_str(), *i)).collect();
        assert_eq!(order, vec![("0", 4), ("1", 1), ("b", 3), ("a", 2), ("01", 5), ("4294967295", 6)]);
    }

    #[test]
    fn doubles_print_as_ecmascript_number_to_string() {
        let mut numbers = Numbers::new();
        let mut ryu = ryu_js::Buffer::new();
        let mut check = |v: f64| {
            let mut out = Vec::new();
            numbers.float(&mut out, v);
            let expected = if v.is_finite() { ryu.format_finite(v) } else { "null" };
            assert_eq!(std::str::from_utf8(&out).unwrap(), expected, "{v:e} ({:#x})", v.to_bits());
        };
        // Every binary exponent (subnormals, NaN and the infinities among them), by random bits.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..1_000_000 {
            check(f64::from_bits(next()));
        }
        // Every decimal magnitude JS prints in fixed notation and around it, and the edges of
        // ZMIJ_EXPONENT_ONLY and of 2^53.
        for e in -9..=22 {
            for _ in 0..20_000 {
                let mantissa = 1.0 + (next() >> 11) as f64 / (1u64 << 53) as f64 * 9.0;
                check(mantissa * 10f64.powi(e));
                check(-mantissa * 10f64.powi(e));
            }
        }
        for edge in [1e-6, 1e-5, 1e21, MAX_EXACT, 0.1, 0.5] {
            let mut v = edge;
            for _ in 0..64 {
                v = v.next_down();
            }
            for _ in 0..128 {
                check(v);
                check(-v);
                v = v.next_up();
            }
        }
    }

    #[test]
    fn word_scan_finds_every_byte_to_escape() {
        for b in 0u8..=255 {
            for pos in 0..8 {
                let mut word = [b'a'; 8];
                word[pos] = b;
                let hit = word_needs_escape(u64::from_le_bytes(word));
                if NEEDS_ESCAPE[b as usize] {
                    assert!(hit, "byte {b:#x} at {pos} missed");
                }
            }
        }
        assert!(!word_needs_escape(u64::from_le_bytes(*b"plain ok")));
    }

    #[test]
    fn an_escape_is_found_at_every_position_of_every_length() {
        for len in 1..24 {
            for pos in 0..len {
                for (byte, escaped) in [('"', "\\\""), ('\n', "\\n"), ('\u{1f}', "\\u001f")] {
                    let text: String = (0..len).map(|i| if i == pos { byte } else { 'a' }).collect();
                    let mut out = Vec::new();
                    write_string(&mut out, &text);
                    let expected = format!("\"{}{escaped}{}\"", "a".repeat(pos), "a".repeat(len - pos - 1));
                    assert_eq!(String::from_utf8(out).unwrap(), expected);
                }
            }
        }
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        let mut out = Vec::new();
        write_string(&mut out, "a\"b\\c\n\u{1}\u{1f}\u{7f}\u{2028}😀");
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\c\\n\\u0001\\u001f\u{7f}\u{2028}😀\"");
    }
}

#[cfg(test)]
mod result_tests {
    use super::*;
    use crate::error::code;
    use crate::testing::Opened;

    /// `sql`'s result as encode_json writes it (expectations are JSON.stringify's output).
    fn json(sql: &str, max_rows: usize) -> DbResult<String> {
        let mut db = Opened::memory();
        let stmt = db.cache.get(&db.conn, &db.hooks, sql)?;
        Ok(String::from_utf8(encode_json(&db.conn, stmt, max_rows)?).expect("UTF-8"))
    }

    fn all(sql: &str) -> String {
        json(sql, usize::MAX).unwrap_or_else(|e| panic!("{sql}: {}", e.message))
    }

    #[test]
    fn rows_are_an_array_of_objects() {
        assert_eq!(all("SELECT 1 AS a WHERE 0"), "[]");
        assert_eq!(all("SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, NULL"), r#"[{"a":1,"b":"x"},{"a":2,"b":null}]"#);
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9) SELECT i FROM n";
        assert_eq!(json(sql, 2).unwrap(), r#"[{"i":1},{"i":2}]"#, "max_rows");
    }

    #[test]
    fn keys_are_escaped_and_in_js_object_order() {
        assert_eq!(all(r#"SELECT 1 AS b, 2 AS "1", 3 AS b, 4 AS "a""q""#), r#"[{"1":2,"b":3,"a\"q":4}]"#);
    }

    #[test]
    fn doubles_print_as_json_stringify_prints_them() {
        let sql = "SELECT -0.0 AS a, 0.0 AS b, 2.0 AS c, -2.0 AS d, 1.5 AS e, 0.1 AS f, 1e-7 AS g, 1e21 AS h, \
                   1e20 AS i, 9007199254740991.0 AS j, 9007199254740992.0 AS k, 1.7976931348623157e308 AS l";
        assert_eq!(
            all(sql),
            r#"[{"a":0,"b":0,"c":2,"d":-2,"e":1.5,"f":0.1,"g":1e-7,"h":1e+21,"i":100000000000000000000,"j":9007199254740991,"k":9007199254740992,"l":1.7976931348623157e+308}]"#
        );
    }

    #[test]
    fn non_finite_doubles_are_null() {
        assert_eq!(all("SELECT 9e999 AS a, -9e999 AS b"), r#"[{"a":null,"b":null}]"#);
    }

    #[test]
    fn integers_print_every_digit() {
        assert_eq!(
            all("SELECT 9007199254740993 AS a, 9223372036854775807 AS b, -9223372036854775807 - 1 AS c, 0 AS d"),
            r#"[{"a":9007199254740993,"b":9223372036854775807,"c":-9223372036854775808,"d":0}]"#
        );
    }

    #[test]
    fn blobs_are_base64_strings() {
        assert_eq!(all("SELECT x'00ff10' AS a, x'fb' AS b, x'' AS c"), r#"[{"a":"AP8Q","b":"+w==","c":""}]"#);
    }

    #[test]
    fn text_is_escaped_like_json_stringify() {
        // Past 8 bytes too, where the scan skips a word at a time.
        let sql =
            "SELECT 'ab\"cd' || char(92) || char(10, 9, 13, 8, 12, 1, 31, 127) || 'é😀 0123456789' || char(34) AS s";
        assert_eq!(all(sql), "[{\"s\":\"ab\\\"cd\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\u{7f}é😀 0123456789\\\"\"}]");
        assert_eq!(all("SELECT 'a' || char(0) || 'b' AS s"), r#"[{"s":"a\u0000b"}]"#, "an embedded NUL");
    }

    #[test]
    fn text_that_is_not_utf8_is_an_error_not_a_lone_surrogate() {
        // A UTF-16 surrogate encoded on its own (CESU-8) is not UTF-8: it is refused, never
        // written out as a lone surrogate.
        let err = json("SELECT CAST(x'eda080' AS TEXT) AS s", usize::MAX).expect_err("an error");
        assert_eq!(err.code, code::ERR_INVALID_UTF8);
    }
}
