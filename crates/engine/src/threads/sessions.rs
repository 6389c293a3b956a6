//! When a database's sessions run on the engine's threads (executor.rs). A job queued for the
//! readers starts a reader session unless `readers` of them run already; a job queued for the
//! writer starts the writer session unless it runs. A session runs until its queue is empty,
//! then ends, checking the queue once more under the lock, so that a job queued meanwhile is
//! taken either by it or by the session its sender starts.
//!
//! The JS thread's connection opens here too, when a read there first needs it.
//!
//! A rekey parks the readers (no reader session starts, those running stop after their job,
//! the JS thread's connection does not open meanwhile);
//! a close lets the sessions empty their queues, then closes the connections, the writer's
//! last.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use super::executor;
use super::job::Outcome;
use super::open::open_worker;
use super::shared::{Shared, State};
use super::{reader, writer};
use crate::js_thread::connection::JsConnection;
use crate::sqlite::setup::Role;

impl Shared {
    /// Starts reader sessions for the reads waiting, up to `readers` at once.
    pub(super) fn kick_readers(&self) {
        if self.reads.is_empty() {
            return;
        }
        let mut st = self.sessions.state.lock().unwrap();
        if st.parked || st.opening {
            return;
        }
        let wanted = self.slots.len().min(st.readers + self.reads.len());
        while st.readers < wanted {
            let Some(me) = self.me.upgrade() else { return };
            st.readers += 1;
            executor::submit(move || reader::session(me));
        }
    }

    /// Starts the writer session for the writes waiting, unless it runs.
    pub(super) fn kick_writer(&self) {
        let Some(writes) = &self.writes else { return };
        if writes.is_empty() {
            return;
        }
        let mut st = self.sessions.state.lock().unwrap();
        if !st.writer && !st.opening {
            let Some(me) = self.me.upgrade() else { return };
            st.writer = true;
            executor::submit(move || writer::session(me));
        }
    }

    /// A reader session found its queue empty (or the readers parked): false if a read came
    /// meanwhile and it must go on.
    pub(super) fn reader_session_ends(&self) -> bool {
        let mut st = self.sessions.state.lock().unwrap();
        if !st.parked && !self.reads.is_empty() {
            return false;
        }
        st.readers -= 1;
        self.sessions.ended.notify_all();
        self.close_when_idle(st);
        true
    }

    /// The writer session found its queue empty: false if a write came meanwhile.
    pub(super) fn writer_session_ends(&self) -> bool {
        let mut st = self.sessions.state.lock().unwrap();
        if self.writes.as_ref().is_some_and(|w| !w.is_empty()) {
            return false;
        }
        st.writer = false;
        self.close_when_idle(st);
        true
    }

    /// The open job ended (opened or not): the jobs sent meanwhile run.
    pub(super) fn opened(&self) {
        let inline_wanted = {
            let mut st = self.sessions.state.lock().unwrap();
            st.opening = false;
            std::mem::take(&mut st.inline_wanted)
        };
        self.kick_writer();
        self.kick_readers();
        if inline_wanted {
            self.open_inline_later();
        }
        self.close_when_idle(self.sessions.state.lock().unwrap()); // closed while opening
    }

    /// A read on the JS thread found that thread's connection closed (not opened yet, or closed
    /// idle, or by a rekey): it opens on an engine thread for the reads after this one, which
    /// goes to a reader. Opening it with the database would cost every open a connection that
    /// reads on the idle writer's connection may never need (experiments/058).
    pub(crate) fn open_inline_later(&self) {
        if !self.opts.inline {
            return;
        }
        let mut st = self.sessions.state.lock().unwrap();
        if st.opening {
            st.inline_wanted = true;
            return;
        }
        if st.inline_opening || st.inline_failed || st.parked || st.closing.is_some() {
            return;
        }
        let Some(me) = self.me.upgrade() else { return };
        st.inline_opening = true;
        drop(st);
        executor::submit(move || me.open_inline());
    }

    /// Opens the JS thread's connection, not holding its lock meanwhile (an inline read waits
    /// on that lock).
    fn open_inline(&self) {
        let opened = open_worker(&self.opts, Role::Reader, self.key().as_deref());
        let failed = opened.is_err();
        if let Ok(worker) = opened {
            self.inline_used();
            let mut slot = self.inline.lock().unwrap();
            if slot.is_none() {
                *slot = Some(JsConnection::new(worker));
            }
        }
        let mut st = self.sessions.state.lock().unwrap();
        st.inline_opening = false;
        st.inline_failed |= failed;
        self.sessions.ended.notify_all();
        self.close_when_idle(st);
    }

    /// For a rekey, from the writer session: stops the reader sessions and waits for them to
    /// end, then closes the readers' connections (they hold the old key).
    pub(super) fn park_readers(&self) {
        executor::while_blocked(|| {
            let mut st = self.sessions.state.lock().unwrap();
            st.parked = true;
            self.sessions.parked.store(true, Ordering::Release);
            while st.readers > 0 || st.inline_opening {
                st = self.sessions.ended.wait(st).unwrap();
            }
        });
        for (index, worker) in self.reader_connections.lock().unwrap().take_all() {
            self.slots[index].db.store(std::ptr::null_mut(), Ordering::Release);
            drop(worker);
        }
    }

    /// After the rekey: the readers reopen with the key now current as reads come.
    pub(super) fn release_readers(&self) {
        let mut st = self.sessions.state.lock().unwrap();
        st.parked = false;
        self.sessions.parked.store(false, Ordering::Release);
        drop(st);
        self.kick_readers();
    }

    /// `close(id)`: the connections close once the sessions have emptied the queues (no new
    /// job comes: the senders are gone).
    pub(super) fn begin_close(&self, close_id: u32) {
        let mut st = self.sessions.state.lock().unwrap();
        st.closing = Some(close_id);
        self.close_when_idle(st);
    }

    fn close_when_idle(&self, mut st: MutexGuard<State>) {
        let Some(close_id) = st.closing else { return };
        if st.opening || st.readers > 0 || st.inline_opening || st.writer || st.closed {
            return;
        }
        st.closed = true;
        drop(st);
        let Some(shared) = self.me.upgrade() else { return };
        // A thread of its own: it joins the backups' threads, which may take a while.
        std::thread::Builder::new()
            .name("resqlite-close".into())
            .spawn(move || shared.close_connections(close_id))
            .expect("cannot start a thread");
    }

    /// The backups end (the paused ones finished), then the iterations' connections close, the JS thread's, the readers',
    /// the writer's last: closing the process's last connection to the file, it checkpoints the WAL and
    /// deletes it (unless checkpoints are external), so that after `close()` the database file
    /// holds every commit. A reader's, read-only, could not.
    fn close_connections(&self, close_id: u32) {
        for backup in std::mem::take(&mut *self.backups.lock().unwrap()) {
            let _ = backup.join();
        }
        self.paused_backups.finish_all();
        self.cursors.lock().unwrap().close();
        drop(self.inline.lock().unwrap().take());
        drop(self.reader_connections.lock().unwrap().take_all());
        *self.writer_db.lock().unwrap() = 0;
        drop(self.writer.lock().unwrap().take());
        // Uncounted before `close()` resolves: `processDiagnostics()` read then must not count it.
        self.gone();
        self.complete(close_id, Outcome::Done);
    }
}
