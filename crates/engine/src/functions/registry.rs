//! A database's JavaScript functions, and their registration on each of its connections.

use std::cell::Cell;
use std::ffi::CString;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sqlite3mc_sys as ffi;

use super::callbacks::{self, Definition, Kind};
use super::host::{Callers, FunctionHost};

/// Every function defined on one database, for all of its connections: each registers the
/// definitions made since it last looked before it prepares a statement (`sync`), on its own
/// thread, so `db.function()` itself touches no connection.
pub struct Functions {
    host: Arc<FunctionHost>,
    definitions: Mutex<Vec<Definition>>,
    /// Bumped by every definition; a connection that has seen it has nothing to register.
    version: AtomicU64,
}

impl Functions {
    pub fn new(host: Arc<FunctionHost>) -> Self {
        Functions { host, definitions: Mutex::default(), version: AtomicU64::new(0) }
    }

    pub fn host(&self) -> &Arc<FunctionHost> {
        &self.host
    }

    /// Adds a definition, replacing one of the same name (case-insensitively) and argument count,
    /// as SQLite does.
    pub fn define(&self, name: CString, n_arg: c_int, flags: c_int, kind: Kind, callers: Arc<Callers>) {
        let mut definitions = self.definitions.lock().unwrap();
        let version = self.version.load(Ordering::Relaxed) + 1;
        definitions.retain(|d| !(d.n_arg == n_arg && d.name.as_bytes().eq_ignore_ascii_case(name.as_bytes())));
        definitions.push(Definition { name, n_arg, flags, kind, callers, version });
        self.version.store(version, Ordering::Release);
    }

    /// Whether `name` (case-insensitively) is a function defined here.
    pub fn is_defined(&self, name: &str) -> bool {
        self.definitions.lock().unwrap().iter().any(|d| d.name.as_bytes().eq_ignore_ascii_case(name.as_bytes()))
    }

    /// Registers on `db` the definitions made since version `seen`. One SQLite refuses to replace
    /// while a statement of this connection runs (SQLITE_BUSY) is tried again before the next
    /// statement is prepared; one refused for any other reason would be refused again, so it is
    /// not retried (src/functions.ts checks names and argument counts first, so none is).
    ///
    /// # Safety
    /// `db` is open and used by the calling thread only.
    pub unsafe fn sync(&self, db: *mut ffi::sqlite3, seen: &Cell<u64>) {
        if self.version.load(Ordering::Acquire) == seen.get() {
            return;
        }
        let definitions = self.definitions.lock().unwrap();
        let version = self.version.load(Ordering::Acquire);
        let mut registered = true;
        for definition in definitions.iter().filter(|d| d.version > seen.get()) {
            registered &= callbacks::register(db, definition, &self.host) != ffi::SQLITE_BUSY;
        }
        if registered {
            seen.set(version);
        }
    }
}
