//! The readers' side of a rekey (writer.rs): a reader parks with its connection closed while
//! the writer swaps the file, and reopens with the key it is released with.

use std::sync::{Arc, Condvar, Mutex};

use crate::sqlite::encryption::KeyConfig;

/// The readers' side of a rekey. The writer parks every reader (each closes its connection
/// and waits), swaps the file, then releases them with the key now current; each reopens its
/// connection with it before its next read.
pub struct ReaderGate {
    state: Mutex<GateState>,
    cond: Condvar,
}

struct GateState {
    /// The key every connection opens with now.
    key: Option<Arc<KeyConfig>>,
    /// Bumped by each release: a parked reader waits for it to change.
    generation: u64,
    /// Readers parked for the current rekey.
    parked: usize,
    /// Reader threads that have ended.
    exited: usize,
}

impl ReaderGate {
    pub fn new(key: Option<Arc<KeyConfig>>) -> ReaderGate {
        ReaderGate { state: Mutex::new(GateState { key, generation: 0, parked: 0, exited: 0 }), cond: Condvar::new() }
    }

    pub fn key(&self) -> Option<Arc<KeyConfig>> {
        self.state.lock().unwrap().key.clone()
    }

    /// Reader side: called with its connection closed. Returns once released, with the key to
    /// reopen with.
    pub fn park(&self) -> Option<Arc<KeyConfig>> {
        let mut st = self.state.lock().unwrap();
        st.parked += 1;
        self.cond.notify_all();
        let generation = st.generation;
        while st.generation == generation {
            st = self.cond.wait(st).unwrap();
        }
        st.key.clone()
    }

    /// A reader thread ended (the database is closing): it will never park, count it as parked.
    pub fn reader_exited(&self) {
        self.state.lock().unwrap().exited += 1;
        self.cond.notify_all();
    }

    /// Writer side: waits until `readers` readers have parked (or ended).
    pub fn wait_parked(&self, readers: usize) {
        let mut st = self.state.lock().unwrap();
        while st.parked + st.exited < readers {
            st = self.cond.wait(st).unwrap();
        }
    }

    /// Writer side: sets the key and lets every parked reader reopen.
    pub fn release(&self, key: Option<Arc<KeyConfig>>) {
        let mut st = self.state.lock().unwrap();
        st.key = key;
        st.parked = 0;
        st.generation += 1;
        self.cond.notify_all();
    }
}
