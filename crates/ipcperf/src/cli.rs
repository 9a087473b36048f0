//! Command-line arguments (clap). Parsing only: no system calls here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::units;
use crate::Fail;
use ipcperf_core::mechanism::{MechOptions, MechanismKind};

#[derive(Parser, Debug)]
#[command(
    name = "ipcperf",
    version,
    about = "How fast can two processes talk on this machine, by each way the OS offers?",
    long_about = "ipcperf measures Linux interprocess communication side by side under one method: \
throughput against block size over pipes, FIFOs, Unix and TCP sockets and files, in one thread, \
two threads or two processes, with the CPU placement of both sides recorded in every result.\n\n\
Start with `ipcperf run` (a quick default suite, under a minute) and `ipcperf list`.",
    after_help = "Examples:\n  ipcperf run\n  ipcperf run pipe unix --sizes 64,4k,64k --mode threads --pin 0,1\n  ipcperf run pipe --mode single --sizes bradford\n  ipcperf run tcp --sizes 16..1M --nodelay --sndbuf 1M --rcvbuf 1M\n  ipcperf list"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure stream throughput (MB/s against block size).
    ///
    /// With no mechanism named it runs the quick default suite: every stream
    /// mechanism between two processes at 64 B, 4 KiB, 64 KiB and 1 MiB, each on the
    /// same CPU and on different CPUs, side by side.
    Run(Box<RunArgs>),
    /// Measure round-trip latency (p50, p99, p99.9, max) with an HDR histogram.
    ///
    /// With no mechanism named it measures every mechanism that can carry round
    /// trips, with 512-byte messages between two processes.
    Latency(Box<crate::cmd::latency::LatencyArgs>),
    /// Mechanisms, the modes they run in, and this system's limits.
    List(ListArgs),
    /// Write random printable ASCII to stdout, in fixed-size writes (Stover's generator).
    ///
    /// Composes with any program: `ipcperf gen --bytes 512M | gzip | wc -c`.
    Gen(crate::cmd::gen::GenArgs),
    /// Read stdin to end of file and report bytes, seconds and MB/s on stderr (Stover's sink).
    Sink(crate::cmd::sink::SinkArgs),
    /// Time Stover's pipelines: gen | sink, a temp file, /dev/null, cat, and ipcperf's own
    /// mechanisms, as real processes, start-up included.
    Pipeline(crate::cmd::pipeline::PipelineArgs),
    /// Synchronization primitives: request/release and set/clear cycles per second,
    /// tare subtracted (Duncan's semaphore table); `--robustness`: a holder dies.
    Sync(crate::cmd::sync::SyncArgs),
    /// Remove what a killed run left behind (only ours, only if its run is dead).
    Clean(crate::cmd::clean::CleanArgs),
    /// The runs kept: id, when, host, kernel, what was measured, complete or not.
    History(crate::cmd::history::HistoryArgs),
    /// A kept run's tables again.
    Show(crate::cmd::show::ShowArgs),
    /// Write a kept run as csv, json (the run record) or markdown.
    Export(crate::cmd::export::ExportArgs),
    /// Keep runs exported on another machine (JSON run records).
    Import(crate::cmd::import::ImportArgs),
    /// Draw a run (SVG or PNG): MB/s against block size, and latency percentiles.
    Plot(crate::cmd::plot::PlotArgs),
    /// One self-contained HTML file: machine, tables, charts, ratios.
    Report(crate::cmd::report::ReportArgs),
    /// Two runs case by case: what got faster or slower beyond the noise.
    Compare(crate::cmd::compare::CompareArgs),
    /// (internal) the peer side of a two-process case; started by ipcperf itself.
    #[command(name = "__peer", hide = true)]
    Peer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable tables (the default).
    Table,
    Json,
    Csv,
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Single,
    Threads,
    Processes,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Mechanisms to measure (see `ipcperf list`); none means the default suite.
    #[arg(value_name = "MECHANISM")]
    pub mechanisms: Vec<String>,

    /// Where the two sides run: single (one thread writes then reads back), threads,
    /// processes. Repeat or comma-separate for several.
    #[arg(long, short, value_enum, value_delimiter = ',')]
    pub mode: Vec<ModeArg>,

    /// Block sizes: a list (64,1k,64k), a power-of-two range (16..1M) or `bradford`
    /// (his 1 B to 4 KiB sizes). k = 1024.
    #[arg(long, short, value_parser = parse_size_list)]
    pub sizes: Option<SizeList>,

    /// Length of each series (2s, 500ms); the block count is calibrated in the warm-up.
    #[arg(long, short, value_parser = units::parse_duration, conflicts_with = "count", allow_hyphen_values = true)]
    pub duration: Option<std::time::Duration>,

    /// Blocks per series, instead of a duration.
    #[arg(long, short = 'n', value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    /// Series per case (each kept; the summary is their median, min and max).
    #[arg(long, short, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// Pin writer and reader: `W,R` CPU numbers (0,0 same CPU; 0,1 different CPUs),
    /// `same`, `cross` or `none`. Repeat to measure several placements side by side.
    #[arg(long, value_parser = parse_pin)]
    pub pin: Vec<PinArg>,

    /// Send the buffer as it is, without writing or reading every byte.
    #[arg(long, conflicts_with = "verify")]
    pub no_touch: bool,

    /// Fill blocks with a position-dependent pattern and check every byte received.
    #[arg(long)]
    pub verify: bool,

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
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub save: crate::cmd::db::SaveArgs,
}

/// Options that shape a mechanism's kernel object, shared by `run` and `latency`.
#[derive(Args, Debug, Clone)]
pub struct MechArgs {
    /// shm: how a waiting side is woken: spin (busy-poll, burns a CPU), futex,
    /// eventfd, sem (POSIX semaphores in the shared page) or adaptive (spin for
    /// --spin-for, then sleep on the futex). A comma list measures each, side by side.
    #[arg(long, value_parser = units::parse_wakes, value_name = "WAKE[,WAKE...]")]
    pub wake: Option<units::WakeList>,

    /// shm streams (`ipcperf run`): also measure the ring zero-copy, beside the
    /// copying ring: the writer builds each block in the shared memory, the reader
    /// reads it there (touching it unless --no-touch) and releases it.
    #[arg(long)]
    pub zero_copy: bool,

    /// shm with --wake adaptive: how long a waiting side spins before it sleeps
    /// (default 5us).
    #[arg(long, value_parser = units::parse_duration, value_name = "DURATION")]
    pub spin_for: Option<std::time::Duration>,

    /// shm: a named POSIX shared-memory object the peer opens by name (default: a
    /// memfd handed over with SCM_RIGHTS).
    #[arg(long)]
    pub shm_named: bool,

    /// shm: ring capacity, a power of two >= 4k (default: 1M, or 4 blocks if larger).
    #[arg(long, value_parser = units::parse_block)]
    pub shm_capacity: Option<usize>,

    /// Pipe and FIFO kernel buffer size (F_SETPIPE_SZ), e.g. 1M.
    #[arg(long, value_parser = units::parse_block)]
    pub pipe_size: Option<usize>,

    /// TCP_NODELAY: turn off Nagle's algorithm.
    #[arg(long)]
    pub nodelay: bool,

    /// SO_SNDBUF for sockets.
    #[arg(long, value_parser = units::parse_block)]
    pub sndbuf: Option<usize>,

    /// SO_RCVBUF for sockets.
    #[arg(long, value_parser = units::parse_block)]
    pub rcvbuf: Option<usize>,

    /// Non-blocking descriptors, waited on with poll(2).
    #[arg(long)]
    pub nonblocking: bool,

    /// TCP and UDP over ::1 instead of 127.0.0.1.
    #[arg(long)]
    pub ipv6: bool,

    /// POSIX message queues: send every message with this priority.
    #[arg(long)]
    pub priority: Option<u32>,

    /// Directory for FIFOs, socket paths and temp files (tmpfs or disk).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

impl MechArgs {
    /// The shm wake-ups asked for (futex when none).
    pub fn wakes(&self) -> Vec<ipcperf_core::mechanism::shm_ring::Wake> {
        match &self.wake {
            Some(v) if !v.0.is_empty() => v.0.clone(),
            _ => vec![ipcperf_core::mechanism::shm_ring::Wake::Futex],
        }
    }

    /// The options of each variant of mechanism `m` to measure: one per wake-up
    /// for shm, else `opts` alone.
    pub fn variants(&self, m: MechanismKind, opts: &MechOptions) -> Vec<MechOptions> {
        if m != MechanismKind::Shm {
            return vec![opts.clone()];
        }
        let copies: &[bool] = if self.zero_copy {
            &[false, true]
        } else {
            &[false]
        };
        let mut v = Vec::new();
        for w in self.wakes() {
            for &zero_copy in copies {
                v.push(MechOptions {
                    shm_wake: Some(w),
                    shm_zero_copy: zero_copy,
                    ..opts.clone()
                });
            }
        }
        v
    }

    /// The mechanism options these flags ask for, for a run of `mechs`; a `--dir`
    /// that is not a directory, or an shm flag where no mechanism is shm, is bad input.
    pub fn options(&self, mechs: &[MechanismKind]) -> Result<MechOptions, Fail> {
        if !mechs.contains(&MechanismKind::Shm) {
            let given = [
                ("--wake", self.wake.is_some()),
                ("--shm-named", self.shm_named),
                ("--shm-capacity", self.shm_capacity.is_some()),
                ("--spin-for", self.spin_for.is_some()),
                ("--zero-copy", self.zero_copy),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
                return Err(Fail::usage(format!(
                    "{flag} applies to the shm mechanism only, and none of {} is shm",
                    mechs
                        .iter()
                        .map(|m| m.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        if let Some(d) = &self.dir {
            if !d.is_dir() {
                return Err(Fail::usage(format!(
                    "--dir {}: no such directory",
                    d.display()
                )));
            }
        }
        Ok(MechOptions {
            pipe_size: self.pipe_size,
            nodelay: self.nodelay,
            sndbuf: self.sndbuf,
            rcvbuf: self.rcvbuf,
            nonblocking: self.nonblocking,
            ipv6: self.ipv6,
            dir: self.dir.clone(),
            mq_priority: self.priority,
            shm_wake: Some(self.wakes()[0]),
            shm_zero_copy: false,
            rate_per_sec: None,
            shm_spin_ns: self
                .spin_for
                .map(|d| d.as_nanos().min(u64::MAX as u128) as u64),
            shm_named: self.shm_named,
            shm_capacity: self.shm_capacity,
            buffer_offset: 0,
        })
    }
}

#[derive(Args, Debug)]
pub struct ListArgs {
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// A parsed `--sizes` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<usize>);

pub fn parse_size_list(s: &str) -> Result<SizeList, String> {
    units::parse_sizes(s).map(SizeList)
}

/// A placement from `--pin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinArg {
    Cpus(usize, usize),
    Same,
    Cross,
    None,
}

pub fn parse_pin(s: &str) -> Result<PinArg, String> {
    match s {
        "same" => return Ok(PinArg::Same),
        "cross" => return Ok(PinArg::Cross),
        "none" | "unpinned" => return Ok(PinArg::None),
        _ => {}
    }
    let (w, r) = s
        .split_once(',')
        .ok_or_else(|| format!("'{s}': give two CPU numbers like 0,1, or same, cross, none"))?;
    let cpu = |x: &str| {
        x.trim()
            .parse::<usize>()
            .map_err(|_| format!("'{x}' is not a CPU number"))
    };
    Ok(PinArg::Cpus(cpu(w)?, cpu(r)?))
}
