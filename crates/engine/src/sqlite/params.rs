//! Binds parameters from the one buffer JS packs per call, no per-value objects crossing the
//! boundary (the Dart original's experiment 109: packing text and blob bytes into one reused
//! buffer, one allocation per call instead of one per value, took 10–16 % off bind-heavy inserts).
//!
//! Layout, little-endian, one parameter set:
//!   u8 kind (`PARAM_SET_*` in protocol.rs: 0 none, 1 positional, 2 named), u32 count, then
//!   `count` values, each [named only: u32 name length, name bytes] u8 tag, payload
//!   (`PARAM_TAG_*`): 0 null · 1 int64 (8) · 2 float64 (8) · 3 text (u32 length, UTF-8) ·
//!   4 blob (u32 length, bytes)
//! JS has already type-checked every value; this side checks the shape against the statement.

use std::os::raw::c_int;

use sqlite3mc_sys as ffi;

use crate::error::{code, DbError, DbResult};
use crate::protocol::{
    PARAM_SET_NAMED, PARAM_SET_NONE, PARAM_SET_POSITIONAL, PARAM_TAG_BLOB, PARAM_TAG_FLOAT64, PARAM_TAG_INT64,
    PARAM_TAG_NULL, PARAM_TAG_TEXT,
};
use crate::sqlite::statement_cache::Statement;

pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn take(&mut self, n: usize) -> DbResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(malformed)?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    pub fn u8(&mut self) -> DbResult<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> DbResult<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u64(&mut self) -> DbResult<[u8; 8]> {
        Ok(self.take(8)?.try_into().unwrap())
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// True when the next parameter set has no values.
    pub fn peek_is_empty_set(&self) -> bool {
        self.buf.get(self.pos).is_none_or(|&k| k == PARAM_SET_NONE)
            || self.buf.get(self.pos + 1..self.pos + 5).is_some_and(|c| c == [0, 0, 0, 0])
    }
}

fn malformed() -> DbError {
    DbError::new(code::ERR_INTERNAL, "malformed parameter buffer")
}

#[derive(Clone, Copy)]
enum Value<'a> {
    Null,
    Int(i64),
    Float(f64),
    Text(&'a [u8]),
    Blob(&'a [u8]),
}

fn read_value<'a>(r: &mut Reader<'a>) -> DbResult<Value<'a>> {
    Ok(match r.u8()? {
        PARAM_TAG_NULL => Value::Null,
        PARAM_TAG_INT64 => Value::Int(i64::from_le_bytes(r.u64()?)),
        PARAM_TAG_FLOAT64 => Value::Float(f64::from_le_bytes(r.u64()?)),
        PARAM_TAG_TEXT => {
            let n = r.u32()? as usize;
            Value::Text(r.take(n)?)
        }
        PARAM_TAG_BLOB => {
            let n = r.u32()? as usize;
            Value::Blob(r.take(n)?)
        }
        _ => return Err(malformed()),
    })
}

/// Binds one parameter set from `r` to `stmt`. Text and blob bytes are bound without a copy
/// (SQLITE_STATIC): the caller keeps the buffer alive until the statement is reset and those
/// parameters unbound (`ResetOnDrop`, told which by `stmt.pointer_params`).
pub fn bind<F>(stmt: &Statement<F>, r: &mut Reader) -> DbResult<()> {
    bind_with(stmt, r, &mut Vec::new())
}

/// `bind` with a caller-owned scratch for named parameters, so a batch binding thousands of
/// sets allocates it once.
pub fn bind_with<F>(stmt: &Statement<F>, r: &mut Reader, bound: &mut Vec<bool>) -> DbResult<()> {
    let expected = stmt.param_names.len();
    let kind = if r.is_empty() { PARAM_SET_NONE } else { r.u8()? };
    let count = if kind == PARAM_SET_NONE { 0 } else { r.u32()? as usize };
    match kind {
        PARAM_SET_NONE | PARAM_SET_POSITIONAL => {
            if count != expected {
                return Err(DbError::new(
                    code::ERR_PARAMETER_COUNT,
                    format!(
                        "the statement takes {expected} parameter{}, {count} {} given",
                        if expected == 1 { "" } else { "s" },
                        if count == 1 { "was" } else { "were" }
                    ),
                ));
            }
            for i in 0..count {
                let v = read_value(r)?;
                bind_value(stmt, i as c_int + 1, v)?;
            }
        }
        PARAM_SET_NAMED => {
            bound.clear();
            bound.resize(expected, false);
            for _ in 0..count {
                let len = r.u32()? as usize;
                let name = r.take(len)?;
                let v = read_value(r)?;
                // `{ a }` binds `:a`, `@a` and `$a`: SQLite numbers each spelling apart.
                let mut found = false;
                for (index, n) in stmt.param_names.iter().enumerate() {
                    if n.as_deref().map(str::as_bytes) == Some(name) {
                        found = true;
                        bound[index] = true;
                        bind_value(stmt, index as c_int + 1, v)?;
                    }
                }
                if !found {
                    let name = String::from_utf8_lossy(name);
                    return Err(DbError::new(
                        code::ERR_PARAMETER_NAME,
                        format!("the statement has no parameter named '{name}' (as :{name}, @{name} or ${name})"),
                    ));
                }
            }
            if let Some(missing) = bound.iter().position(|b| !b) {
                return Err(match &stmt.param_names[missing] {
                    Some(name) => DbError::new(
                        code::ERR_PARAMETER_NAME,
                        format!("missing a value for the named parameter '{name}'"),
                    ),
                    None => DbError::new(
                        code::ERR_PARAMETER_NAME,
                        format!(
                            "parameter {} is positional (?); pass the parameters as an array, not an object",
                            missing + 1
                        ),
                    ),
                });
            }
        }
        _ => return Err(malformed()),
    }
    Ok(())
}

fn bind_value<F>(stmt: &Statement<F>, index: c_int, value: Value) -> DbResult<()> {
    let s = stmt.raw;
    if matches!(value, Value::Text(_) | Value::Blob(_)) {
        let bit = (index as u32 - 1).min(63);
        stmt.pointer_params.set(stmt.pointer_params.get() | 1 << bit);
    }
    // SAFETY: s is a valid statement; text/blob pointers stay valid while the statement runs
    // (see `bind`); lengths are exact.
    let rc = unsafe {
        match value {
            Value::Null => ffi::sqlite3_bind_null(s, index),
            Value::Int(v) => ffi::sqlite3_bind_int64(s, index, v),
            Value::Float(v) => ffi::sqlite3_bind_double(s, index, v),
            Value::Text(b) => {
                ffi::sqlite3_bind_text64(s, index, b.as_ptr() as _, b.len() as u64, None, ffi::SQLITE_UTF8)
            }
            // A zero-length blob with a null pointer would bind NULL: use a dangling non-null one.
            Value::Blob(b) => ffi::sqlite3_bind_blob64(s, index, b.as_ptr() as _, b.len() as u64, None),
        }
    };
    if rc != ffi::SQLITE_OK {
        return Err(DbError::sqlite(rc, format!("cannot bind parameter {index}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::setup::Role;
    use crate::sqlite::statement_cache::ResetOnDrop;
    use crate::testing::{Opened, TempDb};

    /// A parameter buffer built by hand, per the layout in the file's header.
    struct Buf(Vec<u8>);

    impl Buf {
        fn set(kind: u8, count: u32) -> Buf {
            let mut b = vec![kind];
            b.extend_from_slice(&count.to_le_bytes());
            Buf(b)
        }
        fn positional(count: u32) -> Buf {
            Buf::set(1, count)
        }
        fn named(count: u32) -> Buf {
            Buf::set(2, count)
        }
        fn name(mut self, name: &str) -> Buf {
            self.0.extend_from_slice(&(name.len() as u32).to_le_bytes());
            self.0.extend_from_slice(name.as_bytes());
            self
        }
        fn null(mut self) -> Buf {
            self.0.push(0);
            self
        }
        fn int(mut self, v: i64) -> Buf {
            self.0.push(1);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        fn float(mut self, v: f64) -> Buf {
            self.0.push(2);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        fn bytes(mut self, tag: u8, bytes: &[u8]) -> Buf {
            self.0.push(tag);
            self.0.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            self.0.extend_from_slice(bytes);
            self
        }
        fn text(self, text: &[u8]) -> Buf {
            self.bytes(3, text)
        }
        fn blob(self, blob: &[u8]) -> Buf {
            self.bytes(4, blob)
        }
    }

    /// A value as SQLite returned it.
    #[derive(Debug, PartialEq)]
    enum V {
        Null,
        Int(i64),
        /// The bits, so -0.0 and NaN compare exactly.
        Real(u64),
        Text(Vec<u8>),
        Blob(Vec<u8>),
    }

    fn text(s: &str) -> V {
        V::Text(s.as_bytes().to_vec())
    }

    /// Prepares `sql`, binds `params` and returns its one row.
    fn run(sql: &str, params: &[u8]) -> DbResult<Vec<V>> {
        let mut db = Opened::memory();
        let stmt = db.cache.get(&db.conn, &db.hooks, sql)?;
        bind(stmt, &mut Reader::new(params))?;
        Ok(row(stmt))
    }

    /// Steps `stmt` once and reads its row, then resets it and clears its bindings.
    fn row<F>(stmt: &Statement<F>) -> Vec<V> {
        let s = stmt.raw;
        // SAFETY: a valid, bound statement; values are copied before the reset.
        unsafe {
            assert_eq!(ffi::sqlite3_step(s), ffi::SQLITE_ROW);
            let values = (0..ffi::sqlite3_column_count(s))
                .map(|i| {
                    let n = ffi::sqlite3_column_bytes(s, i) as usize;
                    let bytes =
                        |p: *const u8| if n == 0 { Vec::new() } else { std::slice::from_raw_parts(p, n).to_vec() };
                    match ffi::sqlite3_column_type(s, i) {
                        ffi::SQLITE_INTEGER => V::Int(ffi::sqlite3_column_int64(s, i)),
                        ffi::SQLITE_FLOAT => V::Real(ffi::sqlite3_column_double(s, i).to_bits()),
                        ffi::SQLITE_TEXT => V::Text(bytes(ffi::sqlite3_column_text(s, i))),
                        ffi::SQLITE_BLOB => V::Blob(bytes(ffi::sqlite3_column_blob(s, i) as *const u8)),
                        _ => V::Null,
                    }
                })
                .collect();
            ffi::sqlite3_reset(s);
            ffi::sqlite3_clear_bindings(s);
            values
        }
    }

    fn error(result: DbResult<Vec<V>>) -> (String, String) {
        match result {
            Ok(row) => panic!("expected an error, got {row:?}"),
            Err(e) => (e.code.into_owned(), e.message),
        }
    }

    /// `stmt`'s SQL with the values bound now in place.
    fn expanded<F>(stmt: &Statement<F>) -> String {
        // SAFETY: a valid statement; the string is copied, then freed.
        unsafe {
            let p = ffi::sqlite3_expanded_sql(stmt.raw);
            let sql = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
            ffi::sqlite3_free(p.cast());
            sql
        }
    }

    #[test]
    fn a_finished_job_unbinds_its_texts_and_blobs_and_keeps_its_numbers() {
        let mut db = Opened::memory();
        let stmt = db.cache.get(&db.conn, &db.hooks, "SELECT ?1, ?2, ?3, ?4").unwrap();
        let params = Buf::positional(4).int(7).text(b"hi").float(2.5).blob(&[1, 2]);
        {
            let _reset = ResetOnDrop::new(stmt);
            bind(stmt, &mut Reader::new(&params.0)).unwrap();
            assert_eq!(expanded(stmt), "SELECT 7, 'hi', 2.5, x'0102'");
        }
        // The text and the blob pointed into `params`: nothing is left bound to them.
        assert_eq!(expanded(stmt), "SELECT 7, NULL, 2.5, NULL");
        assert_eq!(stmt.pointer_params.get(), 0);
    }

    #[test]
    fn a_job_binding_a_text_past_the_63rd_parameter_unbinds_every_parameter() {
        let mut db = Opened::memory();
        let sql = format!("SELECT {}", (1..=70).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", "));
        let stmt = db.cache.get(&db.conn, &db.hooks, &sql).unwrap();
        let mut params = Buf::positional(70);
        for i in 1..70 {
            params = params.int(i);
        }
        params = params.text(b"last");
        {
            let _reset = ResetOnDrop::new(stmt);
            bind(stmt, &mut Reader::new(&params.0)).unwrap();
            assert!(expanded(stmt).ends_with("69, 'last'"));
        }
        assert_eq!(expanded(stmt), format!("SELECT {}", vec!["NULL"; 70].join(", ")));
    }

    #[test]
    fn a_statement_whose_plan_weighs_a_bound_number_is_not_compiled_again_for_the_same_number() {
        // `m.conversation = ?` beside a join and an ORDER BY: SQLite's planner reads the bound
        // value (whereLoopOutputAdjust), and a different value makes it compile the statement
        // again. Unbinding every parameter after each run (sqlite3_clear_bindings) made it do so
        // on every run (experiments/068).
        let file = TempDb::new("weighed-value");
        let mut db = Opened::open(file.as_str(), Role::Writer);
        db.exec(
            "CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT);
             CREATE TABLE m (id INTEGER PRIMARY KEY, conversation INT, user INT);
             CREATE INDEX m_conversation ON m (conversation);
             INSERT INTO u VALUES (1, 'a'); INSERT INTO m VALUES (1, 5, 1), (2, 5, 1), (3, 6, 1);",
        )
        .unwrap();
        let sql = "SELECT m.id, u.name FROM m JOIN u ON u.id = m.user WHERE m.conversation = ? ORDER BY m.id DESC";
        let stmt = db.cache.get(&db.conn, &db.hooks, sql).unwrap();
        let run = |value: i64| {
            let _reset = ResetOnDrop::new(stmt);
            bind(stmt, &mut Reader::new(&Buf::positional(1).int(value).0)).unwrap();
            // SAFETY: a valid, bound statement.
            while unsafe { ffi::sqlite3_step(stmt.raw) } == ffi::SQLITE_ROW {}
            stmt.reprepared()
        };
        let first = run(5);
        assert_eq!(run(5), first, "the same value again");
        assert_eq!(run(5), first, "and again");
        assert!(run(6) > first, "SQLite weighs the value: a new one compiles the statement again");
    }

    #[test]
    fn every_value_type_binds_as_its_sqlite_type() {
        let params = Buf::positional(5).null().int(-42).float(2.5).text(b"hi").blob(&[0, 255, 7]);
        let sql = "SELECT ?1, typeof(?1), ?2, typeof(?2), ?3, typeof(?3), ?4, typeof(?4), ?5, typeof(?5)";
        assert_eq!(
            run(sql, &params.0).unwrap(),
            vec![
                V::Null,
                text("null"),
                V::Int(-42),
                text("integer"),
                V::Real(2.5f64.to_bits()),
                text("real"),
                text("hi"),
                text("text"),
                V::Blob(vec![0, 255, 7]),
                text("blob"),
            ]
        );
    }

    #[test]
    fn integers_and_doubles_keep_every_bit() {
        let params = Buf::positional(5).int(i64::MIN).int(i64::MAX).float(-0.0).float(f64::MIN_POSITIVE).float(1e308);
        assert_eq!(
            run("SELECT ?, ?, ?, ?, ?", &params.0).unwrap(),
            vec![
                V::Int(i64::MIN),
                V::Int(i64::MAX),
                V::Real((-0.0f64).to_bits()),
                V::Real(f64::MIN_POSITIVE.to_bits()),
                V::Real(1e308f64.to_bits())
            ]
        );
    }

    #[test]
    fn text_keeps_its_length_embedded_nuls_and_non_ascii() {
        let value = "a\0b é 😀";
        let params = Buf::positional(2).text(value.as_bytes()).text("é😀".as_bytes());
        assert_eq!(
            run("SELECT ?1, length(CAST(?1 AS BLOB)), length(?2), unicode(substr(?2, 2))", &params.0).unwrap(),
            vec![text(value), V::Int(value.len() as i64), V::Int(2), V::Int(0x1F600)],
            "every byte of ?1 arrives; ?2 is two characters of UTF-8"
        );
    }

    #[test]
    fn empty_text_and_blob_are_not_null() {
        let params = Buf::positional(2).text(b"").blob(&[]);
        assert_eq!(
            run("SELECT typeof(?1), typeof(?2), length(?2)", &params.0).unwrap(),
            vec![text("text"), text("blob"), V::Int(0)]
        );
    }

    #[test]
    fn named_parameters_bind_by_name_whatever_their_prefix_and_order() {
        let params = Buf::named(3).name("c").int(3).name("a").text(b"one").name("b").float(0.5);
        assert_eq!(
            run("SELECT :a, @b, $c", &params.0).unwrap(),
            vec![text("one"), V::Real(0.5f64.to_bits()), V::Int(3)]
        );
    }

    #[test]
    fn one_name_binds_every_prefix_it_is_spelled_with() {
        let params = Buf::named(2).name("a").int(1).name("b").text(b"two");
        assert_eq!(
            run("SELECT :a, @a, $a, :b, $b", &params.0).unwrap(),
            vec![V::Int(1), V::Int(1), V::Int(1), text("two"), text("two")]
        );
    }

    #[test]
    fn named_parameters_also_bind_by_position() {
        let params = Buf::positional(2).int(1).int(2);
        assert_eq!(run("SELECT :b, :a", &params.0).unwrap(), vec![V::Int(1), V::Int(2)]);
    }

    #[test]
    fn numbered_parameters_are_positional_up_to_the_largest_number() {
        // ?3 makes three parameters; ?2 is never read.
        let params = Buf::positional(3).int(1).int(2).int(3);
        assert_eq!(run("SELECT ?3, ?1, ?3", &params.0).unwrap(), vec![V::Int(3), V::Int(1), V::Int(3)]);
        let named = Buf::named(1).name("3").int(3);
        assert_eq!(error(run("SELECT ?3", &named.0)).0, code::ERR_PARAMETER_NAME);
    }

    #[test]
    fn no_parameters() {
        assert_eq!(run("SELECT 1", &[]).unwrap(), vec![V::Int(1)], "an empty buffer");
        assert_eq!(run("SELECT 1", &[0]).unwrap(), vec![V::Int(1)], "kind 0");
        assert_eq!(run("SELECT 1", &Buf::positional(0).0).unwrap(), vec![V::Int(1)], "an empty array");
        assert_eq!(run("SELECT 1", &Buf::named(0).0).unwrap(), vec![V::Int(1)], "an empty object");
    }

    #[test]
    fn a_count_mismatch_names_both_counts() {
        let one = Buf::positional(1).int(1);
        assert_eq!(
            error(run("SELECT ?, ?", &one.0)),
            (code::ERR_PARAMETER_COUNT.into(), "the statement takes 2 parameters, 1 was given".into())
        );
        assert_eq!(
            error(run("SELECT ?", &[])),
            (code::ERR_PARAMETER_COUNT.into(), "the statement takes 1 parameter, 0 were given".into())
        );
        let three = Buf::positional(3).int(1).int(2).int(3);
        assert_eq!(
            error(run("SELECT 1", &three.0)),
            (code::ERR_PARAMETER_COUNT.into(), "the statement takes 0 parameters, 3 were given".into())
        );
    }

    #[test]
    fn named_mismatches_say_which_name() {
        let unknown = Buf::named(2).name("a").int(1).name("zz").int(2);
        assert_eq!(
            error(run("SELECT :a", &unknown.0)),
            (code::ERR_PARAMETER_NAME.into(), "the statement has no parameter named 'zz' (as :zz, @zz or $zz)".into())
        );
        let missing = Buf::named(1).name("a").int(1);
        assert_eq!(
            error(run("SELECT :a, :b", &missing.0)),
            (code::ERR_PARAMETER_NAME.into(), "missing a value for the named parameter 'b'".into())
        );
        let prefixed = Buf::named(1).name(":a").int(1);
        assert_eq!(error(run("SELECT :a", &prefixed.0)).0, code::ERR_PARAMETER_NAME, "names go without their prefix");
        let mixed = Buf::named(1).name("x").int(1);
        assert_eq!(
            error(run("SELECT ?, :x", &mixed.0)),
            (
                code::ERR_PARAMETER_NAME.into(),
                "parameter 1 is positional (?); pass the parameters as an array, not an object".into()
            )
        );
    }

    #[test]
    fn malformed_buffers_are_refused() {
        let malformed = (code::ERR_INTERNAL.to_string(), "malformed parameter buffer".to_string());
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("an unknown kind", vec![3, 0, 0, 0, 0]),
            ("a short count", vec![1, 1, 0]),
            ("a missing value", Buf::positional(1).0),
            ("an unknown tag", Buf::positional(1).0.into_iter().chain([5]).collect()),
            ("a short integer", Buf::positional(1).0.into_iter().chain([1, 0, 0, 0]).collect()),
            ("a short double", Buf::positional(1).0.into_iter().chain([2, 0]).collect()),
            ("text past the end", {
                let mut b = Buf::positional(1).text(b"abc").0;
                b.pop();
                b
            }),
            ("a blob past the end", Buf::positional(1).0.into_iter().chain([4, 255, 255, 255, 255, 1]).collect()),
            ("a short name", Buf::named(1).0.into_iter().chain([9, 0, 0, 0, b'a']).collect()),
        ];
        for (what, buf) in cases {
            assert_eq!(error(run("SELECT ?", &buf)), malformed, "{what}");
        }
    }

    #[test]
    fn sets_follow_one_another_in_one_buffer() {
        // executeBatch's shape: each set read where the last one ended, one scratch for all.
        let mut db = Opened::memory();
        let stmt = db.cache.get(&db.conn, &db.hooks, "SELECT :a, :b").unwrap();
        let mut buf = Buf::named(2).name("a").int(1).name("b").int(2).0;
        buf.extend(Buf::named(2).name("b").text(b"y").name("a").text(b"x").0);
        buf.extend(Buf::positional(2).int(5).int(6).0);
        buf.extend(Buf::named(1).name("a").int(7).0);
        let mut reader = Reader::new(&buf);
        let mut scratch = Vec::new();
        bind_with(stmt, &mut reader, &mut scratch).unwrap();
        assert_eq!(row(stmt), vec![V::Int(1), V::Int(2)]);
        bind_with(stmt, &mut reader, &mut scratch).unwrap();
        assert_eq!(row(stmt), vec![text("x"), text("y")]);
        bind_with(stmt, &mut reader, &mut scratch).unwrap();
        assert_eq!(row(stmt), vec![V::Int(5), V::Int(6)]);
        let last = bind_with(stmt, &mut reader, &mut scratch).map(|_| Vec::new());
        assert_eq!(error(last).1, "missing a value for the named parameter 'b'", "b's earlier binding does not count");
        assert!(reader.is_empty());
    }

    #[test]
    fn an_empty_set_is_recognised_without_reading_it() {
        assert!(Reader::new(&[]).peek_is_empty_set());
        assert!(Reader::new(&[0]).peek_is_empty_set());
        assert!(Reader::new(&Buf::positional(0).0).peek_is_empty_set());
        assert!(Reader::new(&Buf::named(0).0).peek_is_empty_set());
        assert!(!Reader::new(&Buf::positional(1).null().0).peek_is_empty_set());
        assert!(!Reader::new(&Buf::named(1).name("a").null().0).peek_is_empty_set());
    }
}
