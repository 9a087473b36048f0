//! The one list of mechanisms, and the trait each of them implements.
//!
//! To add a mechanism: write one file with a unit type that implements
//! [`Mechanism`] (its `INFO`, `setup` and `open`, and whichever capabilities differ
//! from the defaults); then, in `mechanism/mod.rs`, its `mod` line and one line in
//! the `registry!` invocation beside it. The kind enum and its names, `list`'s table,
//! the dispatch into monomorphized loops ([`with_mechanism!`]) and the conformance
//! suites (which walk [`MechanismKind::ALL`]) all come from that line.

use std::os::fd::OwnedFd;

use super::{ByteStream, FdStream, Link, MechOptions, MechanismInfo, PeerHandoff};
use crate::error::{Error, Result};
use crate::kind::DatagramCounts;
use crate::payload::Payload;

/// How a mechanism carries a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundTripShape {
    /// One object carries both directions.
    TwoWay,
    /// One object per direction.
    OneWayPair,
}

/// What a lossy reader saw of a stream: when the last datagram arrived, how many
/// bytes did, and the reader's datagram counts.
pub type LossyRead = (u64, u64, DatagramCounts);

/// One IPC mechanism: how its objects are made, how each side opens its end, and
/// what it can do. Every method but `setup` and `open` has a default that fits a
/// plain byte stream on a descriptor.
pub trait Mechanism: 'static {
    /// The end a workload reads and writes; both sides of a case hold one.
    type End: ByteStream + Send + std::fmt::Debug + 'static;

    /// Name, summary, modes, the named objects it makes (for `list` and refusals).
    const INFO: MechanismInfo;

    /// Create the kernel object(s) for messages or blocks of `block` bytes.
    fn setup(opts: &MechOptions, block: usize) -> Result<Link>;

    /// Open an end from its handoff (the peer's; or the owner's, for mechanisms
    /// whose both ends are opened by name or id).
    fn open(h: PeerHandoff, timeout_ms: i32) -> Result<Self::End>;

    /// Wrap the owner's end once its descriptor is open (accepted, connected).
    fn from_local_fd(fd: OwnedFd, link: &mut Link) -> Result<Self::End> {
        let _ = (fd, link);
        Err(Error::Invalid(format!(
            "{} hands its owner no descriptor",
            Self::INFO.name
        )))
    }

    /// How it carries round trips; None: it cannot.
    fn round_trip() -> Option<RoundTripShape> {
        None
    }

    /// The object(s) a round trip starts from, the owner's end asking and the
    /// peer's answering (a library with a pattern per workload, ZeroMQ's REQ/REP
    /// against its PUSH/PULL, sets them up apart); by default `setup`'s.
    fn setup_round_trip(opts: &MechOptions, block: usize) -> Result<Link> {
        Self::setup(opts, block)
    }

    /// The object for the way back of a round trip over a one-way mechanism.
    fn setup_back(opts: &MechOptions, block: usize) -> Result<Link> {
        Self::setup(opts, block)
    }

    /// Why it cannot run a stream with this payload treatment (None: it can).
    fn refuse_payload(_p: Payload) -> Option<String> {
        None
    }

    /// Why it cannot carry messages (`round_trip`) or blocks of `block` bytes
    /// (None: it can): known from the plan, said before anything runs.
    fn refuse_block(_block: usize, _round_trip: bool) -> Option<String> {
        None
    }

    /// Round-trip sizes when the user gives none (None: the command's default).
    fn default_round_trip_sizes() -> Option<&'static [usize]> {
        None
    }

    /// The options that apply to it, as name/value pairs for the record.
    fn describe(_opts: &MechOptions, _out: &mut Vec<(String, String)>) {}

    /// Non-blocking descriptors driven by poll(2) apply to it.
    const POLLS: bool = true;

    /// The ways its ends can wait (`--wait`) besides blocking, which every
    /// mechanism does its own way (the ring by its `--wake`).
    const WAITS: &'static [super::wait::Wait] = &[super::wait::Wait::Block];

    /// How a side waits, for the record's `wait` field.
    fn wait_label(opts: &MechOptions) -> String {
        if opts.nonblocking && Self::POLLS {
            "try-poll"
        } else {
            "block"
        }
        .into()
    }

    /// Refuse a series of `blocks` blocks that cannot fit where it goes (a file);
    /// `held`: bytes the case's previous series left there, which this one's
    /// start frees (a file is truncated).
    fn series_fits(_opts: &MechOptions, _block: usize, _blocks: u64, _held: u64) -> Result<()> {
        Ok(())
    }

    /// Datagram counts of this end's receiving side since the last call.
    fn take_datagram_counts(_end: &mut Self::End) -> Option<DatagramCounts> {
        None
    }

    /// A lossy mechanism reads a stream its own way (it counts what arrived);
    /// None: the plain reader, which wants every byte.
    fn read_lossy(
        _end: &mut Self::End,
        _p: Payload,
        _buf: &mut [u8],
        _total: u64,
    ) -> Option<Result<LossyRead>> {
        None
    }

    /// The descriptor stream inside an end, for single-mode capacity probing.
    fn as_fd_stream(_end: &mut Self::End) -> Option<&mut FdStream> {
        None
    }

    /// A descriptor poll(2) reports ready when a message can be read from `end`
    /// (a fan-in server waits on every client's at once); None: it has none.
    fn poll_fd(end: &mut Self::End) -> Option<std::os::fd::BorrowedFd<'_>> {
        Self::as_fd_stream(end).map(|s| s.fd())
    }

    /// Whether a message waits on `end` now, without waiting for one (a fan-in
    /// server sweeping ends that have no descriptor to poll); None: it cannot tell.
    fn has_message(_end: &mut Self::End) -> Option<Result<bool>> {
        None
    }

    /// Fan-in through one object every client sends to (None: an object per
    /// client): the link whose peer handoff is the server's end, and each
    /// client's end, in order.
    fn setup_fan_in(
        _opts: &MechOptions,
        _block: usize,
        _clients: usize,
    ) -> Option<Result<(Link, Vec<PeerHandoff>)>> {
        None
    }

    /// Fan-out through one object every reader reads whole (None: an object per
    /// reader, each written in turn): a link per reader, its peer handoff that
    /// reader's end; the first link also holds the writer's end (its local end)
    /// and the object, so it must be dropped last.
    fn setup_fan_out(
        _opts: &MechOptions,
        _block: usize,
        _readers: usize,
    ) -> Option<Result<Vec<Link>>> {
        None
    }

    /// What raises its buffer when a block does not fit in single mode.
    fn single_mode_hint() -> String {
        String::new()
    }

    /// Refuse, before anything opens, a block that one thread could not both
    /// send and receive (single mode) where no descriptor can be probed for it.
    fn single_block_fits(_block: usize) -> Result<()> {
        Ok(())
    }
}

/// Open the owner's end of a set-up link.
pub fn open_local<M: Mechanism>(link: &mut Link, timeout_ms: i32) -> Result<M::End> {
    match link.open_local_raw(timeout_ms)? {
        super::Opened::Fd(fd) => M::from_local_fd(fd, link),
        super::Opened::Handoff(h) => M::open(*h, timeout_ms),
    }
}

/// Declares the registry: the kind enum, its table and the dispatch macro.
macro_rules! registry {
    ($d:tt $( $(#[$attr:meta])* $variant:ident => $ty:ty ),* $(,)?) => {
        /// Every mechanism ipcperf knows (generated from the registry).
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize, serde::Deserialize,
        )]
        #[serde(rename_all = "kebab-case")]
        pub enum MechanismKind {
            $( $(#[$attr])* $variant, )*
        }

        impl MechanismKind {
            /// Every registered mechanism, in `list`'s order.
            pub const ALL: &'static [MechanismKind] = &[
                $( $(#[$attr])* MechanismKind::$variant, )*
            ];

            /// Their descriptions, in the same order.
            pub const INFOS: &'static [MechanismInfo] = &[
                $( $(#[$attr])* <$ty as Mechanism>::INFO, )*
            ];

            pub fn info(self) -> &'static MechanismInfo {
                match self {
                    $( $(#[$attr])* MechanismKind::$variant => &<$ty as Mechanism>::INFO, )*
                }
            }
        }

        /// Run `$body` with `$m` naming the [`Mechanism`] type of `$kind`: the one
        /// dispatch per case into monomorphized code.
        macro_rules! with_mechanism {
            ($d kind:expr, $d m:ident => $d body:expr) => {
                match $d kind {
                    $( $(#[$attr])* $crate::mechanism::MechanismKind::$variant => {
                        type $d m = $ty;
                        $d body
                    } )*
                }
            };
        }
        pub(crate) use with_mechanism;
    };
}
