//! How a side waits for the other on a descriptor (`--wait`): a blocking call,
//! poll(2) or epoll_wait(2) on a non-blocking descriptor as an event loop
//! waits, an io_uring completion, or a user-space spin. The shm ring's own
//! wake-ups are its `--wake` ([`super::wake::Wake`]).

use serde::{Deserialize, Serialize};

/// One side's way of waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wait {
    /// A blocking read or write: the kernel puts the caller to sleep.
    #[default]
    Block,
    /// poll(2) on the non-blocking descriptor, then the call (as libpq's client).
    Poll,
    /// epoll_wait(2) on a level-triggered instance holding the descriptor, then
    /// the call (as Redis and nginx wait).
    Epoll,
    /// The read first; poll(2) only when it would block, then the read again
    /// (libpq's client, pgbench: a read that fails with EAGAIN each time the
    /// answer is not there yet).
    TryPoll,
    /// As `TryPoll`, in epoll_wait(2) (a PostgreSQL backend).
    TryEpoll,
    /// Each read and write an io_uring submission waited for as a completion:
    /// the uring-* mechanisms (`--wait uring` on pipe, unix, tcp runs them).
    Uring,
    /// Non-blocking calls retried at once: the side never sleeps.
    Busy,
}

impl Wait {
    pub const ALL: [Wait; 7] = [
        Wait::Block,
        Wait::Poll,
        Wait::Epoll,
        Wait::TryPoll,
        Wait::TryEpoll,
        Wait::Uring,
        Wait::Busy,
    ];

    /// The waits a plain descriptor end (pipe, FIFO, socket) takes itself.
    pub const DESCRIPTOR: &'static [Wait] = &[
        Wait::Block,
        Wait::Poll,
        Wait::Epoll,
        Wait::TryPoll,
        Wait::TryEpoll,
        Wait::Busy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Wait::Block => "block",
            Wait::Poll => "poll",
            Wait::Epoll => "epoll",
            Wait::TryPoll => "try-poll",
            Wait::TryEpoll => "try-epoll",
            Wait::Uring => "uring",
            Wait::Busy => "busy",
        }
    }

    pub fn from_name(s: &str) -> Option<Wait> {
        Wait::ALL.into_iter().find(|w| w.name() == s)
    }

    /// The waits' names, `a, b and c`, for a line that lists them.
    pub fn list(ws: &[Wait]) -> String {
        ws.iter().map(|w| w.name()).collect::<Vec<_>>().join(", ")
    }
}

/// How each side waits: the client (the side that times a round trip, or writes
/// a stream) and the server (the side that answers, or reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Waits {
    pub client: Wait,
    pub server: Wait,
}

impl Waits {
    /// Both sides the same way.
    pub const fn both(w: Wait) -> Waits {
        Waits {
            client: w,
            server: w,
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Waits::default()
    }

    /// `epoll` when both sides wait alike, else `client/server` (`poll/epoll`).
    pub fn label(&self) -> String {
        if self.client == self.server {
            self.client.name().to_string()
        } else {
            format!("{}/{}", self.client.name(), self.server.name())
        }
    }

    /// `epoll`, or `CLIENT/SERVER` (`poll/epoll`: a client in poll(2), its server
    /// in epoll_wait(2)).
    pub fn parse(s: &str) -> Result<Waits, String> {
        let one = |w: &str| {
            Wait::from_name(w.trim()).ok_or_else(|| {
                format!(
                    "unknown wait '{}': expected one of {} (or CLIENT/SERVER, e.g. poll/epoll)",
                    w.trim(),
                    Wait::list(&Wait::ALL)
                )
            })
        };
        let w = match s.split_once('/') {
            None => Waits::both(one(s)?),
            Some((c, srv)) => Waits {
                client: one(c)?,
                server: one(srv)?,
            },
        };
        if (w.client == Wait::Uring) != (w.server == Wait::Uring) {
            return Err(format!(
                "'{s}': uring waits on both sides (the uring-* mechanisms), or on neither"
            ));
        }
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_name_is_both_sides_and_a_slash_parts_them() {
        assert_eq!(Waits::parse("epoll").unwrap(), Waits::both(Wait::Epoll));
        let w = Waits::parse("poll/epoll").unwrap();
        assert_eq!((w.client, w.server), (Wait::Poll, Wait::Epoll));
        assert_eq!(w.label(), "poll/epoll");
        assert_eq!(Waits::both(Wait::Busy).label(), "busy");
        for w in Wait::ALL {
            assert_eq!(Waits::parse(w.name()).unwrap().label(), w.name());
        }
    }

    #[test]
    fn bad_waits_say_what_is_expected() {
        for bad in [
            "",
            "spin",
            "poll/",
            "/poll",
            "poll/epoll/busy",
            "uring/block",
        ] {
            let e = Waits::parse(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(Waits::parse("spin")
            .unwrap_err()
            .contains("block, poll, epoll, try-poll"));
    }
}
