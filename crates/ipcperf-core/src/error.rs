//! The library's error type: what went wrong in a case, in words a user can act on.

use std::fmt;
use std::time::Duration;

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

/// What a connection to another machine that timed out (ETIMEDOUT: nothing it
/// sent acknowledged within its bound, nor its keepalive probes answered) or
/// found it unreachable says of that machine.
pub const GONE: &str = "it is gone: powered off, unplugged, or the link to it down";

/// Whether a connection's `errno` says the machine at its other end is gone: a
/// time-out (data or keepalive probes unacknowledged past the bound) or no
/// route to it any more.
pub fn gone_errno(errno: ipcperf_sys::error::Errno) -> bool {
    use ipcperf_sys::error::Errno;
    matches!(
        errno,
        Errno::ETIMEDOUT
            | Errno::ENETUNREACH
            | Errno::EHOSTUNREACH
            | Errno::ENETDOWN
            | Errno::EHOSTDOWN
    )
}

/// How a handshake's error that found no `ipcperf serve` at the `--peer`
/// address begins: no connection (refused, no route, no answer) or no banner.
pub const UNREACHED: &str = "cannot reach ipcperf serve at";

/// No connection to `ipcperf serve` at `at`: `e` in errno's words (its name
/// too), or none within `bound`.
pub fn unreached(at: std::net::SocketAddr, e: &std::io::Error, bound: Duration) -> Error {
    let why = match e.raw_os_error().map(ipcperf_sys::error::Errno::from_raw) {
        Some(n) => format!("{} ({n:?})", n.desc()),
        None if e.kind() == std::io::ErrorKind::TimedOut => {
            format!("no answer within {} s", bound.as_secs())
        }
        None => e.to_string(),
    };
    Error::Peer(format!("{UNREACHED} {at}: {why}"))
}

impl Error {
    /// An I/O error on a data path: a broken pipe or reset means the peer went away;
    /// a time-out (only a connection to another machine has one short enough to
    /// meet) or an unreachable network, that its machine did.
    pub fn io(op: &'static str, what: &str, errno: ipcperf_sys::error::Errno) -> Error {
        use ipcperf_sys::error::Errno;
        match errno {
            Errno::EPIPE | Errno::ECONNRESET => Error::Peer(format!(
                "{op} on {what}: the other side closed it ({errno})"
            )),
            e if gone_errno(e) => Error::Peer(format!(
                "{op} on {what}: the other machine stopped answering ({errno}): {GONE}"
            )),
            _ => Error::Sys(SysError::new(op, what, errno)),
        }
    }

    /// The other machine is gone ([`GONE`]): nothing more will come from it,
    /// its own account of what went wrong included, so there is nothing to wait for.
    pub fn machine_gone(&self) -> bool {
        matches!(self, Error::Peer(s) if s.contains(GONE))
    }

    /// No `ipcperf serve` answered at the `--peer` address (no connection, or
    /// no banner on it): the run's later cases would find none either.
    pub fn serve_unreached(&self) -> bool {
        matches!(self, Error::Peer(s) if s.starts_with(UNREACHED))
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

    #[test]
    fn a_connection_that_timed_out_says_its_machine_is_gone() {
        use ipcperf_sys::error::Errno;
        let e = Error::io("write", "tcp", Errno::ETIMEDOUT);
        assert!(e.machine_gone(), "{e}");
        assert!(e.to_string().contains("powered off"), "{e}");
        assert!(Error::io("read", "tcp", Errno::ENETUNREACH).machine_gone());
        for other in [Errno::EPIPE, Errno::EIO, Errno::EAGAIN] {
            assert!(!Error::io("write", "tcp", other).machine_gone());
        }
        assert!(!Error::Peer("the other side closed it".into()).machine_gone());
    }
}
