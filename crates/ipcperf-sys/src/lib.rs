//! ipcperf-sys: the only crate of ipcperf that holds `unsafe` code.
//!
//! Thin, uniform wrappers over the system calls ipcperf measures, and RAII guards
//! that own named kernel objects (paths, later SysV ids and POSIX names) and remove
//! them on drop, on error and on Ctrl-C (see [`cleanup`]). Nothing here knows about
//! benchmarking, statistics or output formats.

pub mod alloc;
pub mod cleanup;
pub mod clock;
pub mod cma;
pub mod counters;
pub mod cpu;
pub mod epoll;
pub mod error;
pub mod eventfd;
pub mod fd;
pub mod fdpass;
pub mod ftrace;
pub mod futex;
pub mod hint;
pub mod idle;
pub mod lock;
pub mod mqueue;
pub mod mutex;
pub mod names;
pub mod ns;
pub mod perfcount;
pub mod rtsig;
pub mod sem;
pub mod shm;
pub mod signal;
pub mod splice;
pub mod sysv_msg;
pub mod trace;
pub mod tracefs;
pub mod uring;
pub mod user;

pub use error::{SysError, SysResult};
