//! What to run: a case is one mechanism, in one mode, at one block size and placement.

use serde::{Deserialize, Serialize};

use crate::kind::PeerCommand;
use crate::kind::Workload;
use crate::kind::{Mode, Placement};
use crate::mechanism::{MechOptions, MechanismKind};
use crate::payload::Payload;
use crate::record::{CaseRecord, CaseStatus, PlacementRecord};

/// How long each series runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Length {
    /// About this long: the block count is calibrated during the warm-up.
    Duration { ns: u64 },
    /// Exactly this many blocks.
    Count { blocks: u64 },
}

/// One case of the stream workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    pub mechanism: MechanismKind,
    pub mode: Mode,
    pub block_size: usize,
    pub placement: Placement,
    pub payload: Payload,
    pub length: Length,
    /// Series kept (each one timed on its own).
    pub repeat: u32,
    /// Time set-up and tear-down too (Stover's runs did).
    pub include_setup: bool,
    /// Many pairs at once (`--pairs`): each pair's CPUs, all run together behind a
    /// barrier. Empty: one pair, at `placement`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<Placement>,
    /// Fan-in (`--clients`): this many clients (on the placement's writer CPU)
    /// send requests to one server (on its reader CPU), which answers each. 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clients: u32,
    /// Fan-out (`--subscribers`): one writer (on the placement's writer CPU) sends
    /// every block to each of this many readers (on its reader CPU). 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subscribers: u32,
    pub opts: MechOptions,
}

/// What every case of a run shares that is not part of the measurement.
#[derive(Debug, Clone)]
pub struct RunEnv {
    /// How to start a peer process.
    pub peer: PeerCommand,
    /// A peer process that has not finished a series within this long (plus three
    /// times the series' expected length) is declared stuck and killed.
    pub stall_ns: u64,
    /// Take the series in rounds: series 1 of every case, then series 2 of every
    /// case, each on a fresh set-up, so each case's spread holds the drift of the
    /// whole run (see [`crate::runner::run_all`]). Off: each case's series one
    /// after another.
    pub interleave: bool,
    /// `--peer`: the peer runs on another machine, under its `ipcperf serve`.
    pub remote: Option<crate::mode::remote::Remote>,
}

impl RunEnv {
    /// The default stall allowance: 30 s.
    pub const STALL_NS: u64 = 30_000_000_000;

    pub fn new(peer: PeerCommand) -> RunEnv {
        RunEnv {
            peer,
            stall_ns: RunEnv::STALL_NS,
            interleave: true,
            remote: None,
        }
    }
}

/// Bradford's block sizes, 1 B to 4 KiB, exactly as his pipespeed2 script lists them
/// (62 values; the text says 61).
pub const BRADFORD_SIZES: [usize; 62] = [
    1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80, 88,
    96, 104, 112, 120, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448,
    480, 512, 576, 640, 704, 768, 832, 896, 960, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584,
    4096,
];

/// Powers of two from `lo` to `hi` inclusive; `lo` itself first even if it is not one.
pub fn pow2_range(lo: usize, hi: usize) -> Vec<usize> {
    let mut v = Vec::new();
    if lo == 0 || hi < lo {
        return v;
    }
    let mut s = lo;
    while s <= hi {
        v.push(s);
        let next = if s.is_power_of_two() {
            s * 2
        } else {
            s.next_power_of_two()
        };
        if next <= s {
            break;
        }
        s = next;
    }
    v
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl CaseSpec {
    /// A case of `mechanism` in `mode` with blocks of `block_size` bytes at
    /// `placement`: the payload touched, one series of one block, one pair, the
    /// mechanism's default options. Every case is built from here, with what
    /// differs set beside it: `CaseSpec { repeat: 5, ..CaseSpec::new(..) }`.
    pub fn new(
        mechanism: MechanismKind,
        mode: Mode,
        block_size: usize,
        placement: Placement,
    ) -> CaseSpec {
        CaseSpec {
            mechanism,
            mode,
            block_size,
            placement,
            payload: Payload::Touch,
            length: Length::Count { blocks: 1 },
            repeat: 1,
            include_setup: false,
            pairs: Vec::new(),
            clients: 0,
            subscribers: 0,
            opts: MechOptions::default(),
        }
    }

    /// Why this case cannot run, as far as its plan alone says (None: it may),
    /// as a round trip (`round_trip`) or a stream: the sessions refuse with
    /// these words, and a command asks before it measures anything, so what the
    /// plan already knows is refused up front.
    pub fn refusal(&self, round_trip: bool) -> Option<String> {
        let k = self.mechanism;
        let info = k.info();
        if round_trip {
            if k.round_trip().is_none() {
                return Some(format!(
                    "{} cannot carry round trips (it has no reader that answers)",
                    info.name
                ));
            }
            if self.mode == Mode::Single {
                return Some(
                    "a round trip needs two sides: use --mode threads or processes".into(),
                );
            }
        }
        if !info.modes.contains(&self.mode) {
            let modes: Vec<_> = info.modes.iter().map(|m| m.name()).collect();
            return Some(format!(
                "{} runs in {} mode only, not {}",
                info.name,
                modes.join("/"),
                self.mode.name()
            ));
        }
        if let Some(why) = k.refuse_wait(self.opts.wait) {
            return Some(why);
        }
        if self.mode == Mode::Single && !self.opts.wait.is_default() {
            return Some(format!(
                "--wait {} is a way for one side to wait for the other: single mode has one side",
                self.opts.wait.label()
            ));
        }
        if round_trip && self.opts.one_way && self.block_size < 8 {
            return Some(format!(
                "--one-way writes an 8-byte send time into each message: a {}-byte message \
                 has no room for it",
                self.block_size
            ));
        }
        if !round_trip {
            if let Some(why) = k.refuse_payload(self.payload) {
                return Some(why);
            }
        }
        k.refuse_block(self.block_size, round_trip)
    }

    /// How the case is placed, as records and progress lines name it: the
    /// placement's label, or for many pairs their count and how they sit, or for
    /// fan-in the clients and their one server.
    pub fn placement_label(&self) -> String {
        if self.subscribers > 0 {
            let n = self.subscribers;
            let s = if n == 1 { "" } else { "s" };
            format!("1→{n} reader{s} {}", self.placement.label())
        } else if self.clients > 0 {
            let n = self.clients;
            let s = if n == 1 { "" } else { "s" };
            format!("{n} client{s}→1 {}", self.placement.label())
        } else if self.pairs.is_empty() {
            self.placement.label().to_string()
        } else {
            crate::record::PairsRecord::label(&self.pairs)
        }
    }
}

/// The plan is above the record: a record knows nothing of the spec it came from.
impl CaseRecord {
    /// An empty record for `spec`, before it runs.
    pub fn for_spec(spec: &CaseSpec) -> CaseRecord {
        CaseRecord {
            workload: Workload::Stream,
            mechanism: spec.mechanism.name().to_string(),
            mode: spec.mode,
            block_size: spec.block_size as u64,
            placement: PlacementRecord {
                label: spec.placement_label(),
                writer_cpu: spec.placement.writer_cpu,
                reader_cpu: spec.placement.reader_cpu,
                seen_writer_cpu: None,
                seen_reader_cpu: None,
                measured_one_way_ns: spec.placement.measured_ns,
            },
            payload: spec.payload,
            wait: spec.opts.wait_label(spec.mechanism),
            include_setup: spec.include_setup,
            options: spec.opts.describe(spec.mechanism).into_iter().collect(),
            status: CaseStatus::Ok,
            message: None,
            series: Vec::new(),
            median_bytes_per_sec: None,
            min_bytes_per_sec: None,
            max_bytes_per_sec: None,
            median_blocks_per_sec: None,
            median_cpu_load: None,
            sync: None,
            latency: None,
            datagrams: None,
            pairs: None,
            peer_machine: None,
            explain: None,
            replay: None,
            idle_probe: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(pow2_range(16, 128), vec![16, 32, 64, 128]);
        assert_eq!(pow2_range(3, 8), vec![3, 4, 8]);
        assert_eq!(pow2_range(64, 64), vec![64]);
        assert!(pow2_range(8, 4).is_empty());
        assert_eq!(BRADFORD_SIZES.len(), 62);
        assert_eq!(*BRADFORD_SIZES.last().unwrap(), 4096);
    }
}
