//! Finished jobs back to the JS thread: the mailbox they are handed over in, the poller that
//! takes them while writes are in flight. The last stop of a
//! query's path; it starts in `napi`.

pub mod mailbox;
pub mod poller;
