//! The pool: one writer and N readers, each owning a connection, fed by job queues, and the
//! completion queue their results go to. A job runs on its connection through `sqlite` and
//! `encode`; its completion goes on to `handoff`.

pub mod group_commit;
pub mod pool;
pub mod worker;
