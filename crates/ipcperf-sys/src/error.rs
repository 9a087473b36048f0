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

/// "op object: what errno says (its name)": the name once, by Debug, as
/// Errno's Display ("ENOENT: No such file or directory") would say the
/// description twice.
impl fmt::Display for SysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (desc, name) = (self.errno.desc(), self.errno);
        if self.object.is_empty() {
            write!(f, "{}: {desc} ({name:?})", self.op)
        } else {
            write!(f, "{} {}: {desc} ({name:?})", self.op, self.object)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The description once and the errno's name once, where it said
    /// "No such file or directory (ENOENT: No such file or directory)".
    #[test]
    fn an_error_says_its_errno_once() {
        let e = SysError::new("mkdir", "/x/y", Errno::ENOENT);
        assert_eq!(
            e.to_string(),
            "mkdir /x/y: No such file or directory (ENOENT)"
        );
        let e = SysError::new("pipe2", "", Errno::EMFILE);
        assert_eq!(e.to_string(), "pipe2: Too many open files (EMFILE)");
    }
}
