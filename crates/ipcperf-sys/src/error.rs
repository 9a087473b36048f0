//! One error type for every wrapper: the operation, the object it acted on, and errno.

use std::fmt;

pub use nix::errno::Errno;

/// A failed system call: which operation, on what object, and the errno it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysError {
    pub op: &'static str,
    pub object: String,
    pub errno: Errno,
}

pub type SysResult<T> = Result<T, SysError>;

impl SysError {
    pub fn new(op: &'static str, object: impl Into<String>, errno: Errno) -> Self {
        SysError {
            op,
            object: object.into(),
            errno,
        }
    }

    /// The same error from an `std::io::Error` (errno is EIO when it carries none).
    pub fn from_io(op: &'static str, object: impl Into<String>, e: &std::io::Error) -> Self {
        let errno = e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO);
        SysError::new(op, object, errno)
    }
}

impl fmt::Display for SysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.object.is_empty() {
            write!(f, "{}: {} ({})", self.op, self.errno.desc(), self.errno)
        } else {
            write!(
                f,
                "{} {}: {} ({})",
                self.op,
                self.object,
                self.errno.desc(),
                self.errno
            )
        }
    }
}

impl std::error::Error for SysError {}

/// Attach an operation and object to a nix result.
pub trait Context<T> {
    fn ctx(self, op: &'static str, object: &dyn fmt::Display) -> SysResult<T>;
}

impl<T> Context<T> for nix::Result<T> {
    fn ctx(self, op: &'static str, object: &dyn fmt::Display) -> SysResult<T> {
        self.map_err(|e| SysError::new(op, object.to_string(), e))
    }
}

impl<T> Context<T> for std::io::Result<T> {
    fn ctx(self, op: &'static str, object: &dyn fmt::Display) -> SysResult<T> {
        self.map_err(|e| SysError::from_io(op, object.to_string(), &e))
    }
}
