//! `ipcperf run`'s arguments and the stream cases they plan (advise plans with
//! them too).

use crate::export::Format;
use crate::fail::Fail;
use crate::shared::args::{parse_size_list, MechArgs, ModeArg, SizeList};
use crate::shared::plan::{parse_mechanisms, placements, series_length};
use crate::units;
use clap::Args;
use ipcperf_core::mechanism::MechanismKind;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::plan::CaseSpec;
use ipcperf_core::topology::PlacementClass;

/// The default suite's mechanisms, block sizes and series length.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf run\n  ipcperf run pipe unix --sizes 64,4k,64k --mode threads --pin 0,1\n  ipcperf run pipe --mode single --sizes bradford\n  ipcperf run tcp --sizes 16..1M --nodelay --sndbuf 1M --rcvbuf 1M\n  ipcperf run shm --wake futex,spin --verify\n  ipcperf run --label nightly --export-json nightly.json"
)]
pub struct RunArgs {
    /// Mechanisms to measure (see `ipcperf list`); none means the default suite.
    #[arg(value_name = "MECHANISM")]
    pub mechanisms: Vec<String>,

    /// Where the two sides run: single (one thread writes then reads back), threads,
    /// processes. Repeat or comma-separate for several.
    #[arg(long, short, value_enum, value_delimiter = ',')]
    pub mode: Vec<ModeArg>,

    /// Block sizes: a list (64,1k,64k), a power-of-two range (16..1M) or `bradford`
    /// (his 1 B to 4 KiB sizes). k = 1024, kB = 1000.
    #[arg(long, short, value_parser = parse_size_list)]
    pub sizes: Option<SizeList>,

    #[command(flatten)]
    pub series: crate::shared::args::SeriesArgs,

    #[command(flatten)]
    pub case: crate::shared::args::CaseArgs,

    /// Fan-out: one writer sends every block to each of N readers (a list 1,4 or a
    /// range 1..8), each over its own descriptor; per-reader rates and the slowest.
    /// Writer on the placement's first CPU, readers on its second. pipe, fifo,
    /// unix, tcp, unix-seqpacket, unix-dgram.
    #[arg(long, value_parser = parse_subscribers, value_name = "N[,N...]", conflicts_with = "pairs")]
    pub subscribers: Option<crate::shared::args::PairsList>,

    /// Where the time goes, per block: after the timed series, traced series
    /// (up to 20,000 blocks each) with the scheduler's and the system calls'
    /// tracepoints (root): each side's time in its calls running (the copy),
    /// asleep for room or data, woken and waiting to run, and between calls,
    /// per block, in a table per case. Without the rights one line says so.
    #[arg(long, conflicts_with_all = ["subscribers", "include_setup"])]
    pub explain: bool,

    #[command(flatten)]
    pub tracer: crate::shared::tracer::TracerArg,

    /// Time set-up and tear-down (connection, peer start) with the transfer, as Stover did.
    #[arg(long)]
    pub include_setup: bool,

    #[command(flatten)]
    pub mech: MechArgs,

    /// Start the writer's buffer this many bytes past a page boundary (0..4095;
    /// default 0, page-aligned like dd's). Copies slow down when source and
    /// destination are out of line: `memcpy --buffer-offset 16` lays its buffers
    /// out as `perf bench mem memcpy`'s malloc does.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..4096))]
    pub buffer_offset: u16,

    /// Block size for the closing ranking (default: 64 KiB if measured, else the largest).
    #[arg(long, value_parser = units::parse_size)]
    pub rank_size: Option<usize>,

    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub save: crate::shared::db::SaveArgs,
}

pub const DEFAULT_MECHANISMS: &[MechanismKind] = &[
    MechanismKind::Pipe,
    MechanismKind::Fifo,
    MechanismKind::Unix,
    MechanismKind::Tcp,
    MechanismKind::File,
    MechanismKind::Null,
    MechanismKind::Memcpy,
];

pub const DEFAULT_SIZES: &[usize] = &[64, 4096, 65536, 1 << 20];

/// What `run` measures as `a` asks, each input checked: its cases, the load
/// beside them (`--background`, held until dropped) and what they share.
pub fn prepare(a: &RunArgs) -> Result<super::Prepared, Fail> {
    super::plan::prepare(
        &a.case,
        || plan(a),
        !a.mechanisms.is_empty(),
        (
            a.subscribers.as_ref(),
            "--subscribers",
            ipcperf_core::workload::fanin::refuse_fan_out,
            |s, n| s.subscribers = n,
        ),
        false,
    )
}

/// Turn the arguments into the list of cases, in the order they run.
pub fn plan(a: &RunArgs) -> Result<Vec<CaseSpec>, Fail> {
    let default_suite = a.mechanisms.is_empty();
    let mechs = if default_suite {
        // With --peer: those of the suite that cross machines (the rest
        // would be rows of "cannot cross" sharing the series' budget).
        DEFAULT_MECHANISMS
            .iter()
            .copied()
            .filter(|&m| a.case.peer.is_none() || ipcperf_core::runner::crosses_machines(m))
            .collect()
    } else {
        parse_mechanisms(&a.mechanisms)?
    };
    let modes: Vec<Mode> = if a.mode.is_empty() {
        vec![Mode::Processes]
    } else {
        a.mode
            .iter()
            .map(|m| match m {
                ModeArg::Single => Mode::Single,
                ModeArg::Threads => Mode::Threads,
                ModeArg::Processes => Mode::Processes,
            })
            .collect()
    };
    let sizes = a
        .sizes
        .as_ref()
        .map(|s| s.0.clone())
        .unwrap_or_else(|| DEFAULT_SIZES.to_vec());
    let length = ipcperf_core::plan::Length::Duration { ns: 0 };
    let topo = ipcperf_core::topology::Topology::current();
    // With --peer each case has one placement, other-host: the suite's two
    // (one CPU, two) would be the same case twice.
    let placements = placements(
        &a.case.pins(),
        default_suite && a.case.peer.is_none(),
        &topo,
        a.save.db.db.as_deref(),
    )?;
    let payload = a.case.payload();
    if a.mech.zero_copy && a.case.no_touch {
        return Err(Fail::usage(
            "--zero-copy with --no-touch would move no byte at all (nothing is copied, \
             written or read): measure zero-copy with the payload touched or --verify",
        ));
    }
    let mut opts = a.mech.options(&mechs)?;
    opts.buffer_offset = a.buffer_offset.into();
    opts.explain = a.explain;
    let mut specs: Vec<CaseSpec> = Vec::new();
    let chosen = a.case.verify || a.case.no_touch;
    for &m in &mechs {
        let info = m.info();
        let payload = crate::shared::plan::stream_payload(m, payload, chosen);
        let mut mech_modes: Vec<Mode> = modes.clone();
        if info.solo {
            // A solo mechanism has no reader: it runs once, in one thread.
            mech_modes = vec![Mode::Single];
        }
        for (m, o) in a.mech.cases(m, &opts) {
            for &mode in &mech_modes {
                for &size in &sizes {
                    for &pl in &placements {
                        let pl = if mode == Mode::Single {
                            // One thread: only the writer's CPU means anything.
                            Placement {
                                writer_cpu: pl.writer_cpu,
                                reader_cpu: pl.writer_cpu,
                                class: pl.writer_cpu.map(|_| PlacementClass::SameCpu),
                                measured_ns: None,
                            }
                        } else {
                            pl
                        };
                        let spec = CaseSpec {
                            payload,
                            length,
                            repeat: a.case.measure.repeat,
                            include_setup: a.include_setup,
                            opts: o.clone(),
                            ..CaseSpec::new(m, mode, size, pl)
                        };
                        if !specs.contains(&spec) {
                            specs.push(spec);
                        }
                    }
                }
            }
        }
    }
    series_length(&mut specs, a.series.count, a.series.duration);
    crate::shared::plan::idle_probes(&mut specs);
    Ok(specs)
}

/// `--subscribers`: counts from 1 to the most readers one writer feeds.
fn parse_subscribers(s: &str) -> Result<crate::shared::args::PairsList, String> {
    crate::shared::args::parse_counts(
        s,
        "subscribers",
        ipcperf_core::runner::fanout::MAX_SUBSCRIBERS,
    )
}

/// `--rank-size`: a size the run measured streams of, else bad input naming
/// those it did (a size none had printed no ranking and said nothing).
pub fn check_rank_size(
    rank: Option<usize>,
    sizes: impl IntoIterator<Item = u64>,
) -> Result<(), Fail> {
    let Some(want) = rank else {
        return Ok(());
    };
    let mut sizes: Vec<u64> = sizes.into_iter().collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.contains(&(want as u64)) {
        return Ok(());
    }
    let fmt = ipcperf_results::units::fmt_size;
    Err(Fail::usage(if sizes.is_empty() {
        format!(
            "--rank-size {}: no stream was measured (the ranking is of `run`'s throughput)",
            fmt(want as u64)
        )
    } else {
        format!(
            "--rank-size {}: not a block size measured ({})",
            fmt(want as u64),
            sizes.into_iter().map(fmt).collect::<Vec<_>>().join(", ")
        )
    }))
}
