//! Finished jobs back to the JS thread: the mailbox they are handed over in, the poller that
//! takes them while writes are in flight, and when busy-waiting pays. The last stop of a
//! query's path; it starts in `napi`.

pub mod mailbox;
pub mod poller;
pub mod spin;
