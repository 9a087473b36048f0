//! A demonstration, compiled into the tests only: a mechanism added the way every
//! mechanism is, by this one file and, in `mechanism/mod.rs`, its `mod` line and
//! one line in the registry. It is an anonymous `socketpair(AF_UNIX, SOCK_STREAM)`, one end handed to
//! the peer; the generated conformance suite (`conformance_tests.rs`) runs it
//! with no other change anywhere.

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::Result;
use ipcperf_sys::error::Context;

/// The demonstration: a Unix stream socketpair.
pub struct DemoPair;

impl Mechanism for DemoPair {
    super::fd_stream_ends!();

    const INFO: MechanismInfo = MechanismInfo {
        names: "none (socketpair)",
        ..MechanismInfo::new(
            MechanismKind::DemoPair,
            "demo-pair",
            "test-only demonstration: an anonymous Unix stream socketpair",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        let (a, b) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .ctx("socketpair", &"demo-pair")?;
        let peer = PeerHandoff {
            kind: MechanismKind::DemoPair,
            addr: PeerAddr::Fd,
            opts: opts.clone(),
            fds: vec![b],
        };
        Ok(Link::new(
            MechanismKind::DemoPair,
            opts,
            Some(LocalEnd::Ready(a)),
            Some(peer),
            None,
        ))
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }
}
