//! SQLite's change hooks on the writer, recording into its `ChangeTracker`: the pre-update hook
//! records each changed row (merging a statement's consecutive rows in one table into one
//! entry) and, for an UPDATE that keeps the row in place, which columns' values changed; the
//! commit and rollback hooks end the open transaction's record.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

use sqlite3mc_sys as ffi;

use super::{Change, Changed, HookState, TableRef, Target, MAX_COLUMN_BITS};
use crate::live::dependencies::table_key;
use crate::sqlite::connection::Connection;

/// Installs (or removes) the pre-update, commit and rollback hooks on `conn`.
///
/// # Safety
/// `state` must outlive the hooks on `conn` (`Hooks` outlives the connection), and both are
/// used only on the connection's thread.
pub unsafe fn install(conn: &Connection, state: &HookState, on: bool) {
    let ctx = state as *const HookState as *mut c_void;
    ffi::sqlite3_preupdate_hook(conn.raw(), if on { Some(on_preupdate) } else { None }, ctx);
    ffi::sqlite3_commit_hook(conn.raw(), if on { Some(on_commit) } else { None }, ctx);
    ffi::sqlite3_rollback_hook(conn.raw(), if on { Some(on_rollback) } else { None }, ctx);
    state.tracker.borrow_mut().on = on;
}

/// SAFETY (all hooks): `ctx` is the connection's `HookState`; SQLite calls the hooks on the
/// writer's thread, inside a statement, when no Rust borrow of the tracker is held.
unsafe extern "C" fn on_preupdate(
    ctx: *mut c_void,
    db: *mut ffi::sqlite3,
    op: c_int,
    db_name: *const c_char,
    table: *const c_char,
    old_rowid: i64,
    new_rowid: i64,
) {
    let state = &*(ctx as *const HookState);
    let Ok(mut tracker) = state.tracker.try_borrow_mut() else { return };
    let merges = tracker.last == Some((db_name, table));
    let in_place_update = !(op == ffi::SQLITE_INSERT || op == ffi::SQLITE_DELETE || old_rowid != new_rowid);
    // The statement's target is needed to compare an UPDATE's columns or to start a new entry;
    // rows merging into the last entry (a batch of INSERTs) skip the lookup.
    let running = if in_place_update || !merges { tracker.running.clone() } else { None };
    let target = running.as_deref().and_then(|targets| find_target(state, targets, db_name, table));
    let changed = if in_place_update {
        let count = ffi::sqlite3_preupdate_count(db).max(0) as usize;
        let bits = match target {
            Some(Target { set: Some(set), columns, .. }) if columns.names.len() == count => {
                changed_columns(db, set.iter().copied())
            }
            _ => changed_columns(db, 0..count),
        };
        match bits {
            Some(0) => return, // an UPDATE that set every column to the value it had
            Some(bits) => Changed::Columns(bits),
            None => Changed::Rows,
        }
    } else {
        Changed::Rows
    };
    if merges {
        if let Some(Change::Table { changed: last, .. }) = tracker.pending.last_mut() {
            *last = match (&*last, changed) {
                (Changed::Columns(a), Changed::Columns(b)) => Changed::Columns(a | b),
                _ => Changed::Rows,
            };
            return;
        }
    }
    let table_ref = match target {
        Some(t) => TableRef::Known(t.columns.clone()),
        None => {
            let name = |p: *const c_char| CStr::from_ptr(p).to_string_lossy();
            TableRef::Named(table_key(&name(db_name), &name(table)))
        }
    };
    tracker.pending.push(Change::Table { table: table_ref, changed });
    tracker.last = Some((db_name, table));
}

/// The running statement's target for this table, unless SQLite compiled statements while it
/// runs: it re-prepared it after a schema change, so the SET lists learned at its prepare may
/// be out of date.
unsafe fn find_target<'a>(
    state: &HookState,
    targets: &'a [Target],
    db_name: *const c_char,
    table: *const c_char,
) -> Option<&'a Target> {
    let recompiled = state.capture.try_borrow().map_or(true, |c| !c.events.is_empty() || c.overflow);
    if recompiled {
        return None;
    }
    let (db_name, table) = (CStr::from_ptr(db_name).to_bytes(), CStr::from_ptr(table).to_bytes());
    targets.iter().find(|t| *t.db == *db_name && *t.table == *table)
}

/// Which of `columns` (indexes) the UPDATE changed the value of, as bits; None when one is
/// beyond the bits.
unsafe fn changed_columns(db: *mut ffi::sqlite3, columns: impl Iterator<Item = usize>) -> Option<u128> {
    let mut bits = 0u128;
    for i in columns {
        let (mut old, mut new) = (ptr::null_mut(), ptr::null_mut());
        if ffi::sqlite3_preupdate_old(db, i as c_int, &mut old) != ffi::SQLITE_OK
            || ffi::sqlite3_preupdate_new(db, i as c_int, &mut new) != ffi::SQLITE_OK
            || !same_value(old, new)
        {
            if i >= MAX_COLUMN_BITS {
                return None;
            }
            bits |= 1 << i;
        }
    }
    Some(bits)
}

unsafe fn same_value(a: *mut ffi::sqlite3_value, b: *mut ffi::sqlite3_value) -> bool {
    let t = ffi::sqlite3_value_type(a);
    if t != ffi::sqlite3_value_type(b) {
        return false;
    }
    match t {
        ffi::SQLITE_NULL => true,
        ffi::SQLITE_INTEGER => ffi::sqlite3_value_int64(a) == ffi::sqlite3_value_int64(b),
        ffi::SQLITE_FLOAT => ffi::sqlite3_value_double(a).to_bits() == ffi::sqlite3_value_double(b).to_bits(),
        _ => {
            let (pa, pb) = if t == ffi::SQLITE_TEXT {
                (ffi::sqlite3_value_text(a), ffi::sqlite3_value_text(b))
            } else {
                (ffi::sqlite3_value_blob(a) as *const u8, ffi::sqlite3_value_blob(b) as *const u8)
            };
            let (la, lb) = (ffi::sqlite3_value_bytes(a), ffi::sqlite3_value_bytes(b));
            if la != lb {
                return false;
            }
            if la == 0 {
                return true;
            }
            if pa.is_null() || pb.is_null() {
                return false;
            }
            std::slice::from_raw_parts(pa, la as usize) == std::slice::from_raw_parts(pb, lb as usize)
        }
    }
}

unsafe extern "C" fn on_commit(ctx: *mut c_void) -> c_int {
    if let Ok(mut tracker) = (*(ctx as *const HookState)).tracker.try_borrow_mut() {
        tracker.committed_now();
    }
    0 // let the commit proceed
}

unsafe extern "C" fn on_rollback(ctx: *mut c_void) {
    if let Ok(mut tracker) = (*(ctx as *const HookState)).tracker.try_borrow_mut() {
        tracker.rolled_back();
    }
}
