//! Compiles the SQLite3 Multiple Ciphers amalgamation with resqlite's options.
//! This crate exists so the C compile happens once: the addon crate's own build
//! script is rerun on every napi build, this one only when its inputs change.

fn main() {
    let dir = sqlite3mc_src::source_dir();
    println!("cargo:rerun-if-changed=build.rs");
    let mut build = cc::Build::new();
    build.file(dir.join(sqlite3mc_src::SOURCE_FILE)).include(dir).warnings(false).opt_level(2);
    // Compile options. THREADSAFE=2: every connection is used by one thread at a time, so
    // SQLite skips its per-connection mutex.
    for (name, value) in [
        ("SQLITE_THREADSAFE", "2"),
        ("SQLITE_DQS", "0"),
        ("SQLITE_DEFAULT_MEMSTATUS", "0"),
        ("SQLITE_DEFAULT_WAL_SYNCHRONOUS", "1"),
        ("SQLITE_ENABLE_PREUPDATE_HOOK", "1"),
        ("SQLITE_ENABLE_FTS5", "1"),
        ("SQLITE_ENABLE_MATH_FUNCTIONS", "1"),
        ("SQLITE_ENABLE_STAT4", "1"),
        ("SQLITE_ENABLE_RTREE", "1"),
        ("SQLITE_LIKE_DOESNT_MATCH_BLOBS", "1"),
        ("SQLITE_OMIT_SHARED_CACHE", "1"),
        ("SQLITE_OMIT_DEPRECATED", "1"),
        ("SQLITE_USE_ALLOCA", "1"),
        ("SQLITE_TEMP_STORE", "2"),
        ("SQLITE_MAX_EXPR_DEPTH", "1000"),
    ] {
        build.define(name, value);
    }
    build.compile("sqlite3mc");
}
