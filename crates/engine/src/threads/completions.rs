//! The completion queue: finished jobs wait here until the JS thread takes them, and the
//! first one queued while the JS thread is neither woken nor polling wakes it.

use std::sync::Mutex;

use super::job::Outcome;

pub struct Completion {
    pub id: u32,
    pub outcome: Outcome,
}

/// Tells the JS thread about finished jobs; implemented in handoff/mailbox.rs over a napi
/// thread-safe function and two words of memory the JS thread reads while it polls
/// (experiments/021).
pub trait Waker: Send + Sync + 'static {
    /// Wakes the JS thread's event loop.
    fn wake(&self);
    /// Shows the polling JS thread whether completions are queued.
    fn set_queued(&self, queued: bool);
    /// The JS thread is polling for completions: it needs no wake-up.
    fn js_polling(&self) -> bool;
    /// A job was queued on the writer thread (on the JS thread, before it is sent).
    fn writer_started(&self);
    /// The writer thread finished a job (it released the connection; the completion follows),
    /// or one counted by `writer_started` was never sent.
    fn writer_finished(&self);
}

#[derive(Default)]
struct CompletionQueue {
    list: Vec<Completion>,
    /// A wake-up is on its way to the JS thread, which will take everything queued by then.
    wake_pending: bool,
    /// The JS environment is gone (a worker thread ended without closing the database):
    /// completions are dropped and nothing calls into it again.
    detached: bool,
}

/// The queue and what wakes the JS thread for it.
pub struct Completions {
    queue: Mutex<CompletionQueue>,
    waker: Box<dyn Waker>,
}

impl Completions {
    pub fn new(waker: Box<dyn Waker>) -> Completions {
        Completions { queue: Mutex::new(CompletionQueue::default()), waker }
    }

    /// Queues a finished job (or a part of its result), waking the JS thread if need be.
    pub fn push(&self, id: u32, outcome: Outcome) {
        self.queue_completion(id, outcome, false);
    }

    /// Queues a writer job's outcome once the writer thread released the connection. The job
    /// counts as finished first (the mailbox's writes-running word), under the same lock, so a
    /// job JS sees completed it also sees finished.
    pub fn push_writer_job(&self, id: u32, outcome: Outcome) {
        self.queue_completion(id, outcome, true);
    }

    fn queue_completion(&self, id: u32, outcome: Outcome, writer_job: bool) {
        let mut q = self.queue.lock().unwrap();
        // The JS environment is gone, and the mailbox's memory with it.
        if q.detached {
            return;
        }
        if writer_job {
            self.waker.writer_finished();
        }
        q.list.push(Completion { id, outcome });
        // Marked before reading the polling word, and the JS thread clears that word before it
        // looks at this one (both sequentially consistent): either it sees the completion or
        // it gets a wake-up. Woken under the lock, so `detach` cannot slip in between.
        self.waker.set_queued(true);
        if !q.wake_pending && !self.waker.js_polling() {
            q.wake_pending = true;
            self.waker.wake();
        }
    }

    /// A job was queued on the writer thread.
    pub fn writer_started(&self) {
        self.with_mailbox(|waker| waker.writer_started());
    }

    /// A job counted by `writer_started` never reached the writer thread.
    pub fn writer_not_sent(&self) {
        self.with_mailbox(|waker| waker.writer_finished());
    }

    /// Runs `f` on the waker unless the JS environment is gone: the mailbox's memory went with
    /// it. Under the lock, so `detach` waits for a write to it already under way.
    fn with_mailbox(&self, f: impl FnOnce(&dyn Waker)) {
        let q = self.queue.lock().unwrap();
        if !q.detached {
            f(&*self.waker);
        }
    }

    /// How many completions wait to be taken.
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.queue.lock().unwrap().list.len()
    }

    /// Called when the JS environment is torn down before `close()`. Nothing touches the mailbox
    /// after it returns: V8 frees the mailbox's memory with the environment.
    pub fn detach(&self) {
        let mut q = self.queue.lock().unwrap();
        q.detached = true;
        q.list.clear();
    }

    /// The first `max` jobs finished so far, and whether more are queued; called on the JS
    /// thread when woken or while polling.
    pub fn take(&self, max: usize) -> (Vec<Completion>, bool) {
        let mut q = self.queue.lock().unwrap();
        q.wake_pending = false;
        if q.list.len() > max {
            let rest = q.list.split_off(max);
            return (std::mem::replace(&mut q.list, rest), true);
        }
        if !q.detached {
            self.waker.set_queued(false);
        }
        (std::mem::take(&mut q.list), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts every call that touches the mailbox.
    struct CountingWaker(Arc<AtomicUsize>);

    impl Waker for CountingWaker {
        fn wake(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn set_queued(&self, _: bool) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn js_polling(&self) -> bool {
            self.0.fetch_add(1, Ordering::SeqCst);
            false
        }
        fn writer_started(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn writer_finished(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn nothing_touches_the_mailbox_once_detached() {
        let calls = Arc::new(AtomicUsize::new(0));
        let completions = Completions::new(Box::new(CountingWaker(calls.clone())));
        completions.writer_started();
        completions.writer_not_sent();
        completions.push_writer_job(1, Outcome::Done);
        assert!(calls.load(Ordering::SeqCst) >= 4, "the waker is used while attached");
        completions.detach();
        let before = calls.load(Ordering::SeqCst);
        // A writer job in flight when a worker thread's environment ends finishes afterwards.
        completions.writer_started();
        completions.writer_not_sent();
        completions.push_writer_job(2, Outcome::Done);
        completions.push(3, Outcome::Done);
        let (taken, more) = completions.take(8);
        assert!(taken.is_empty() && !more);
        assert_eq!(calls.load(Ordering::SeqCst), before, "the mailbox was written after detach");
    }
}
