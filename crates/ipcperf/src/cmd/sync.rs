//! `ipcperf sync`: synchronization primitives, cycles per second with the tare
//! subtracted (Duncan 1989, Table 2), and `--robustness`: what a waiter sees when a
//! holder dies.

use std::path::PathBuf;

use clap::Args;
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::Mode;
use ipcperf_core::record::RunRecord;
use ipcperf_core::sync::{self, Primitive, SyncSpec, PRIMITIVES};

use crate::console::Console;
use crate::export;
use crate::export::Format;
use crate::fail::Fail;
use crate::units;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SyncModeArg {
    Threads,
    Processes,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf sync\n  ipcperf sync futex posix-sem --mode threads,processes --pin 0,1\n  ipcperf sync --robustness    # a holder killed: which primitives give it back"
)]
pub struct SyncArgs {
    /// Primitives to measure: sysv-sem, sysv-sem-onecall (lmbench's lat_sem form),
    /// posix-sem-named, posix-sem, mutex, futex, eventfd, flock, fcntl, and pipe
    /// (the reference wake-up); none means all.
    #[arg(value_name = "PRIMITIVE")]
    pub primitives: Vec<String>,

    /// Where the set/clear partner runs: another thread or another process
    /// (default). Repeat or comma-separate for both.
    #[arg(long, short, value_enum, value_delimiter = ',')]
    pub mode: Vec<SyncModeArg>,

    /// The CPUs' idle state while the cases run: as-is (default), poll (no idle
    /// state deeper than polling: /dev/cpu_dma_latency held at 0; root) or a
    /// latency in µs (20us). See `ipcperf latency --help`.
    #[arg(long, value_parser = ipcperf_core::idle::parse_idle, default_value = "as-is", value_name = "as-is|poll|LATENCY")]
    pub idle: ipcperf_core::idle::Idle,

    /// Length of each timed series (the cycle count is calibrated in the warm-up).
    /// Default: 10 s of series shared by the plan (cases × --repeat), each 40ms
    /// to 600ms, as in `run` and `latency`.
    #[arg(long, short, value_parser = units::parse_series_duration)]
    pub duration: Option<std::time::Duration>,

    #[command(flatten)]
    pub measure: crate::shared::args::MeasureArgs,

    /// Set/clear cycles timed one by one for the percentiles (0: none).
    #[arg(long, default_value_t = 20_000)]
    pub latency_samples: usize,

    /// Set/clear waits as a program's: no timeout armed (semop, sem_wait, FUTEX_WAIT
    /// with none, poll without one). A watcher sleeping on the other process's pidfd
    /// wakes a waiter whose other side died. Default: timed waits that look at the
    /// other side every 250 ms.
    #[arg(long)]
    pub untimed: bool,

    /// Instead of timing: kill a holder (SIGKILL) and see whether, and how soon, a
    /// waiter gets the primitive (a bounded wait of 1 s; two processes, placed
    /// by the scheduler: --duration, --repeat, --pin, --latency-samples,
    /// --untimed, --explain and --mode threads do not apply).
    #[arg(long, conflicts_with_all = ["explain", "duration", "repeat", "pin", "latency_samples", "untimed"])]
    pub robustness: bool,

    /// Where the time of a set/clear cycle goes: after the timed series, one
    /// traced series of 2,000 cycles with the scheduler's and the system calls'
    /// tracepoints sampled (root or CAP_PERFMON), each cycle split into its parts
    /// (this side's set, the partner's wake-up, run-queue wait and turn, and
    /// back), as `latency --explain` splits a round trip. Without the rights, one
    /// line says so and the figures stand.
    #[arg(long)]
    pub explain: bool,

    #[command(flatten)]
    pub tracer: crate::shared::tracer::TracerArg,

    /// Directory for the lock file of flock and fcntl.
    #[arg(long)]
    pub dir: Option<PathBuf>,

    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub save: crate::shared::db::SaveArgs,
}

pub fn parse_primitives(names: &[String]) -> Result<Vec<Primitive>, Fail> {
    if names.is_empty() {
        return Ok(PRIMITIVES.iter().map(|p| p.primitive).collect());
    }
    let mut v = Vec::new();
    for n in names {
        for part in n.split(',').filter(|p| !p.is_empty()) {
            let p = Primitive::from_name(part).ok_or_else(|| {
                let known: Vec<_> = PRIMITIVES.iter().map(|p| p.name).collect();
                Fail::usage(format!(
                    "unknown primitive '{part}' (known: {})",
                    known.join(", ")
                ))
            })?;
            if !v.contains(&p) {
                v.push(p);
            }
        }
    }
    // `sync ''` ran no case and exited 0: a list that names nothing is bad input.
    if v.is_empty() {
        return Err(Fail::usage(format!(
            "'{}' names no primitive (a comma list, such as futex,pipe; `ipcperf sync --help` \
             names them)",
            names.join(" ")
        )));
    }
    Ok(v)
}

/// The cases to run, in order.
pub fn plan(a: &SyncArgs) -> Result<Vec<SyncSpec>, Fail> {
    let mut prims = parse_primitives(&a.primitives)?;
    if a.robustness && a.primitives.is_empty() {
        // The pipe is a reference wake-up, not a lock: nothing to hold.
        prims.retain(|&p| p != Primitive::Pipe);
    }
    let mut modes: Vec<Mode> = a
        .mode
        .iter()
        .map(|m| match m {
            SyncModeArg::Threads => Mode::Threads,
            SyncModeArg::Processes => Mode::Processes,
        })
        .collect();
    modes.dedup();
    if a.robustness && modes.contains(&Mode::Threads) {
        // A holder thread cannot be killed alone: it was run as processes, unsaid.
        return Err(Fail::usage(
            "--robustness kills a holder process: --mode threads does not apply",
        ));
    }
    if modes.is_empty() || a.robustness {
        modes = vec![Mode::Processes];
    }
    if let Some(d) = &a.dir {
        crate::shared::values::usable_dir(d)?;
        // Only the file locks make a file there (it was taken for futex alone).
        if !prims
            .iter()
            .any(|p| matches!(p, Primitive::Flock | Primitive::Fcntl))
        {
            return Err(Fail::usage(
                "--dir holds the lock file of flock and fcntl, and neither is measured",
            ));
        }
    }
    ipcperf_core::idle::check(a.idle, &ipcperf_core::idle::IdleInfo::current())
        .map_err(Fail::usage)?;
    let peer = PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?;
    let series_ns = a.duration.map(|d| d.as_nanos() as u64).unwrap_or(0);
    let placements = if a.robustness {
        vec![ipcperf_core::mode::Placement::UNPINNED]
    } else {
        crate::shared::plan::placements(
            &a.measure.pin,
            false,
            &ipcperf_core::topology::Topology::current(),
            a.save.db.db.as_deref(),
        )?
    };
    let mut v = Vec::new();
    for &mode in &modes {
        for &placement in &placements {
            for &p in &prims {
                v.push(SyncSpec {
                    primitive: p,
                    mode,
                    placement,
                    series_ns,
                    repeat: a.measure.repeat,
                    latency_samples: a.latency_samples,
                    base_dir: a
                        .dir
                        .clone()
                        .unwrap_or_else(ipcperf_sys::names::default_base),
                    peer: peer.clone(),
                    explain: a.explain,
                    idle: a.idle,
                    untimed: a.untimed,
                });
            }
        }
    }
    // Without --duration, the budget rule that `run` and `latency` follow
    // (robustness times no series: no plan of series to say).
    if a.duration.is_none() && !a.robustness {
        let ms = crate::shared::plan::budget_series_ms(v.len() * a.measure.repeat as usize);
        crate::shared::plan::say_series(v.len(), a.measure.repeat, ms);
        for s in &mut v {
            s.series_ns = ms * 1_000_000;
        }
    }
    Ok(v)
}

pub fn run(a: SyncArgs) -> Result<i32, Fail> {
    let specs = plan(&a)?;
    let mut run = RunRecord::begin("sync", std::env::args().collect());
    let mut saver = crate::shared::db::Saver::start(&a.save, &mut run)?;
    // After every input check: bad input is one line.
    crate::console::machine_warnings(&run.machine);
    // --robustness gives a case per holder variant (SysV's two), not per primitive.
    let cases = if a.robustness {
        specs
            .iter()
            .map(|s| sync::robustness_case_count(s.primitive))
            .sum()
    } else {
        specs.len()
    };
    let mut console = Console::new(cases);
    // Tables: one per mode and placement, each printed as soon as its last case
    // has ended; the closing print adds nothing more.
    let streamed = std::rc::Rc::new(std::cell::Cell::new(false));
    if a.format == Format::Table && !a.robustness {
        let keys: Vec<_> = specs
            .iter()
            .map(|s| export::sync::group_key(&sync::empty_record(s)))
            .collect();
        console.stream_with(crate::shared::ending::group_streamer(
            &run,
            keys,
            export::sync::group_key,
            |r, first| {
                let mut v = export::sync::build(r);
                if !first {
                    v.heading.clear();
                }
                export::table::render(&v)
            },
            streamed.clone(),
        ));
    }
    for s in &specs {
        console.started(format!("{} {}", s.primitive.name(), s.mode.name()));
        let recs = if a.robustness {
            sync::run_robustness(s)
        } else {
            vec![sync::run_case(s)]
        };
        for r in recs {
            console.done(&r);
            saver.save_case(&r);
            run.cases.push(r);
        }
    }
    // A sync run whose every case was refused (no primitive works here) still
    // shows its table of reasons and exits 0, as it always has.
    crate::shared::ending::finish(
        run,
        saver,
        &mut console,
        |r| {
            if streamed.get() {
                String::new()
            } else {
                crate::document::document(r, a.format, None)
            }
        },
        false,
    )
}
