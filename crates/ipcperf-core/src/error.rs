//! The library's error type: what went wrong in a case, in words a user can act on.

use std::fmt;

pub use ipcperf_sys::SysError;

#[derive(Debug)]
pub enum Error {
    /// A system call failed.
    Sys(SysError),
    /// The case cannot run on this system as asked: a limit, a capacity, a permission.
    /// The text names the limit and, where there is one, how to raise it.
    Refused(String),
    /// The peer (thread or process) died, closed early, or broke the protocol.
    Peer(String),
    /// `--verify` found a byte that is not what was sent.
    Verify { offset: u64, expected: u8, got: u8 },
    /// A bounded wait ran out.
    Timeout(String),
    /// Bad input that got past the CLI.
    Invalid(String),
    /// A datagram did not arrive within its bounded wait (lossy mechanisms only):
    /// the round trip is counted lost and the run goes on.
    Lost(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Sys(e) => write!(f, "{e}"),
            Error::Refused(s) => write!(f, "cannot run: {s}"),
            // A peer's own account that came back through another peer error
            // already says so once.
            Error::Peer(s) if s.starts_with("peer failed: ") => write!(f, "{s}"),
            Error::Peer(s) => write!(f, "peer failed: {s}"),
            Error::Verify {
                offset,
                expected,
                got,
            } => write!(
                f,
                "verify failed at byte offset {offset}: expected 0x{expected:02x}, got 0x{got:02x}"
            ),
            Error::Timeout(s) => write!(f, "timed out: {s}"),
            Error::Invalid(s) => write!(f, "invalid: {s}"),
            Error::Lost(s) => write!(f, "lost: {s}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<SysError> for Error {
    fn from(e: SysError) -> Self {
        Error::Sys(e)
    }
}

impl Error {
    /// An I/O error on a data path: a broken pipe or reset means the peer went away.
    pub fn io(op: &'static str, what: &str, errno: ipcperf_sys::error::Errno) -> Error {
        use ipcperf_sys::error::Errno;
        match errno {
            Errno::EPIPE | Errno::ECONNRESET => Error::Peer(format!(
                "{op} on {what}: the other side closed it ({errno})"
            )),
            _ => Error::Sys(SysError::new(op, what, errno)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_failure_says_so_once() {
        let once = Error::Peer("msgrcv: gone".into()).to_string();
        assert_eq!(once, "peer failed: msgrcv: gone");
        assert_eq!(Error::Peer(once.clone()).to_string(), once);
    }
}
