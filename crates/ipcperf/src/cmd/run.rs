//! `ipcperf run`: stream throughput against block size.

use ipcperf_core::mechanism::MechanismKind;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::plan::{CaseSpec, Length};
use ipcperf_core::record::RunRecord;
use ipcperf_core::runner;
use ipcperf_core::topology::{format_cpu_list, PlacementClass, Topology};

use clap::Args;

use crate::cmd::args::{parse_size_list, MechArgs, ModeArg, PinArg, SizeList};
use crate::cmd::db::Saver;
use crate::cmd::ending::finish;
use crate::console::Console;
use crate::export::{self, Format};
use crate::fail::Fail;
use crate::units;

/// The default suite's mechanisms, block sizes and series length.
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

    /// Length of each series (2s, 500ms; default 600ms, 40ms in the default suite); the
    /// block count is calibrated in the warm-up.
    #[arg(long, short, value_parser = units::parse_series_duration, conflicts_with = "count", allow_hyphen_values = true)]
    pub duration: Option<std::time::Duration>,

    /// Blocks per series, instead of a duration.
    #[arg(long, short = 'n', value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    #[command(flatten)]
    pub case: crate::cmd::args::CaseArgs,

    /// Fan-out: one writer sends every block to each of N readers (a list 1,4 or a
    /// range 1..8), each over its own descriptor; per-reader rates and the slowest.
    /// Writer on the placement's first CPU, readers on its second. pipe, fifo,
    /// unix, tcp, unix-seqpacket, unix-dgram.
    #[arg(long, value_parser = parse_subscribers, value_name = "N[,N...]", conflicts_with = "pairs")]
    pub subscribers: Option<crate::cmd::args::PairsList>,

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
const SUITE_SERIES_MS: u64 = 40;
const EXPLICIT_SERIES_MS: u64 = 600;

pub fn parse_mechanisms(names: &[String]) -> Result<Vec<MechanismKind>, Fail> {
    let mut v = Vec::new();
    for n in names {
        for part in n.split(',').filter(|p| !p.is_empty()) {
            let k = MechanismKind::from_name(part).ok_or_else(|| {
                if let Some((_, feature)) = MechanismKind::NOT_BUILT.iter().find(|m| m.0 == part) {
                    return Fail::usage(format!(
                        "{part} is not in this build: its library comes with cargo's --features \
                         {feature} (cargo build --release --features {feature})"
                    ));
                }
                let known: Vec<_> = MechanismKind::INFOS.iter().map(|m| m.name).collect();
                Fail::usage(format!(
                    "unknown mechanism '{part}' (known: {})",
                    known.join(", ")
                ))
            })?;
            if !v.contains(&k) {
                v.push(k);
            }
        }
    }
    Ok(v)
}

pub fn placements(
    pins: &[PinArg],
    default_suite: bool,
    topo: &Topology,
) -> Result<Vec<Placement>, Fail> {
    let usable: Vec<usize> = topo.cpus.iter().map(|p| p.cpu).collect();
    let check = |c: usize| {
        if usable.contains(&c) {
            Ok(c)
        } else {
            Err(Fail::usage(format!(
                "CPU {c} is not one this process may use (usable: {}; see `ipcperf topology`)",
                format_cpu_list(&usable)
            )))
        }
    };
    let pair = |w: usize, r: usize| Placement::pinned(w, r).with_class(topo.classify(w, r));
    let first = usable.first().copied().unwrap_or(0);
    let second = usable.get(1).copied();
    if pins.is_empty() {
        return Ok(match second {
            Some(s) if default_suite => vec![pair(first, first), pair(first, s)],
            None if default_suite => vec![pair(first, first)],
            _ => vec![Placement::UNPINNED],
        });
    }
    let mut v = Vec::new();
    let mut absent = Vec::new();
    for p in pins {
        let pls = match *p {
            PinArg::Cpus(w, r) => vec![pair(check(w)?, check(r)?)],
            PinArg::Same => vec![pair(first, first)],
            PinArg::Cross => match second {
                Some(s) => vec![pair(first, s)],
                None => return Err(Fail::usage(topo_one_cpu(&usable))),
            },
            PinArg::None => vec![Placement::UNPINNED],
            PinArg::Measured(which) => {
                let m = crate::measured::current(topo)?;
                match crate::measured::pick(&m, which) {
                    Some((w, r, ns)) => {
                        vec![pair(check(w)?, check(r)?).with_measured(Some(ns.round() as u32))]
                    }
                    None => return Err(Fail::failure("the measurement holds no pair")),
                }
            }
            PinArg::Class(c) => match topo.representative(c) {
                Some((w, r)) => vec![pair(w, r)],
                None => return Err(Fail::usage(topo.absent_reason(c))),
            },
            PinArg::All => {
                let present = topo.classes();
                absent.extend(
                    PlacementClass::ALL
                        .into_iter()
                        .filter(|c| !present.iter().any(|(k, _)| k == c))
                        .map(|c| c.name()),
                );
                present.into_iter().map(|(_, (w, r))| pair(w, r)).collect()
            }
        };
        for pl in pls {
            if !v.contains(&pl) {
                v.push(pl);
            }
        }
    }
    if !absent.is_empty() {
        crate::console::note(&format!(
            "placement classes this machine does not have: {} (see `ipcperf topology`)",
            absent.join(", ")
        ));
    }
    Ok(v)
}

fn topo_one_cpu(usable: &[usize]) -> String {
    format!(
        "`cross` needs two CPUs, and this process may use one ({})",
        format_cpu_list(usable)
    )
}

/// `--count N` or `--duration D`, else `default_ms` per series.
pub fn series_length(
    count: Option<u64>,
    duration: Option<std::time::Duration>,
    default_ms: u64,
) -> Length {
    match (count, duration) {
        (Some(n), _) => Length::Count { blocks: n },
        (None, Some(d)) => Length::Duration {
            ns: d.as_nanos() as u64,
        },
        (None, None) => Length::Duration {
            ns: default_ms * 1_000_000,
        },
    }
}

/// Turn the arguments into the list of cases, in the order they run.
pub fn plan(a: &RunArgs) -> Result<Vec<CaseSpec>, Fail> {
    let default_suite = a.mechanisms.is_empty();
    let mechs = if default_suite {
        DEFAULT_MECHANISMS.to_vec()
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
    let default_ms = if default_suite {
        SUITE_SERIES_MS
    } else {
        EXPLICIT_SERIES_MS
    };
    let length = series_length(a.count, a.duration, default_ms);
    let topo = ipcperf_core::topology::Topology::current();
    let placements = placements(&a.case.pins(), default_suite, &topo)?;
    let payload = a.case.payload();
    if a.mech.zero_copy && a.case.no_touch {
        return Err(Fail::usage(
            "--zero-copy with --no-touch would move no byte at all (nothing is copied, \
             written or read): measure zero-copy with the payload touched or --verify",
        ));
    }
    let mut opts = a.mech.options(&mechs)?;
    opts.buffer_offset = a.buffer_offset.into();
    let mut specs: Vec<CaseSpec> = Vec::new();
    for &m in &mechs {
        let info = m.info();
        let mut mech_modes: Vec<Mode> = modes.clone();
        if info.solo {
            // A solo mechanism has no reader: it runs once, in one thread.
            mech_modes = vec![Mode::Single];
        }
        for o in a.mech.variants(m, &opts) {
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
                            mechanism: m,
                            mode,
                            block_size: size,
                            placement: pl,
                            payload,
                            length,
                            repeat: a.case.repeat,
                            include_setup: a.include_setup,
                            pairs: Vec::new(),
                            clients: 0,
                            subscribers: 0,
                            opts: o.clone(),
                        };
                        if !specs.contains(&spec) {
                            specs.push(spec);
                        }
                    }
                }
            }
        }
    }
    Ok(specs)
}

/// `--subscribers`: counts from 1 to the most readers one writer feeds.
fn parse_subscribers(s: &str) -> Result<crate::cmd::args::PairsList, String> {
    crate::cmd::args::parse_counts(
        s,
        "subscribers",
        ipcperf_core::runner::fanout::MAX_SUBSCRIBERS,
    )
}

pub fn run(a: RunArgs) -> Result<i32, Fail> {
    a.case.check_remote_pins()?;
    let topo = ipcperf_core::topology::Topology::current();
    let mut specs = crate::cmd::args::fan_cases(
        a.case.with_pairs(plan(&a)?, &topo)?,
        a.subscribers.as_ref(),
        !a.mechanisms.is_empty(),
        (
            "--subscribers",
            ipcperf_core::workload::fanin::refuse_fan_out,
        ),
        |s, n| s.subscribers = n,
    )?;
    let hogs = crate::background::apply(a.case.background, &mut specs, &topo)?;
    let env = a.case.run_env(&mut specs)?;
    let mut run = RunRecord::begin(std::env::args().collect());
    let mut saver = Saver::start(&a.save, &mut run)?;
    // After every input check: bad input is one line.
    crate::console::machine_warnings(&run.machine);
    let mut console = Console::new(specs.len());
    // Tables: each is printed as soon as its last case has finished.
    let printed = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    if a.format == Format::Table {
        console.stream_with(stream_tables(&run, &specs, printed.clone()));
    }
    run.cases = runner::run_all(&specs, &env, &mut saver.observe(&mut console));
    // The server (`serve --once`) hears that the run is over; best effort.
    if let Some(r) = &env.remote {
        let _ = r.say_over();
    }
    drop(hogs);
    finish(
        run,
        saver,
        &mut console,
        |r| {
            let done = printed.borrow();
            if done.is_empty() {
                return export::render(r, a.format, a.rank_size);
            }
            // The rest: the ranking and the tables no case group made yet.
            let mut v = export::view::build(r, a.rank_size);
            v.heading.clear();
            v.tables.retain(|t| !done.contains(&t.title));
            export::table::render(&v)
        },
        true,
    )
}

/// The streamer of `run`'s tables: the run's heading before the first, then a
/// group's table (a mechanism, mode, payload and wait) as soon as its last case
/// has ended (a group's cases run one after another). The titles printed go
/// into `printed`, so the closing print leaves them out.
fn stream_tables(
    run: &RunRecord,
    specs: &[CaseSpec],
    printed: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
) -> crate::console::Streamer {
    use ipcperf_core::workload::Workload;
    let heading = export::view::heading(run);
    let next_groups: Vec<_> = specs
        .iter()
        .map(|s| export::view::group_of(&ipcperf_core::record::CaseRecord::for_spec(s)))
        .collect();
    let mut head = run.clone();
    head.cases.clear();
    let mut seen = 0usize;
    Box::new(move |r| {
        seen += 1;
        if r.workload != Workload::Stream {
            return None;
        }
        head.cases.push(r.clone());
        // The next case in the plan starts another group (or there is none).
        if next_groups.get(seen) == Some(&export::view::group_of(r)) {
            return None;
        }
        let tables = export::view::group_tables(&head);
        head.cases.clear();
        let mut done = printed.borrow_mut();
        let mut text = String::new();
        if done.is_empty() {
            text.push_str(&format!("{heading}\n"));
        }
        let fresh: Vec<_> = tables
            .into_iter()
            .filter(|t| !done.contains(&t.title))
            .collect();
        done.extend(fresh.iter().map(|t| t.title.clone()));
        text.push_str(&export::table::render_tables(&fresh));
        Some(text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::fixture_topology;

    /// On every recorded machine, `--placements all` runs one pair of exactly the
    /// classes the machine has, each named; a class it lacks is refused (exit 2)
    /// with its reason; a CPU outside the process's cpuset is refused.
    #[test]
    fn placements_all_on_every_fixture() {
        for name in [
            "vm-2cpu",
            "intel-2s-smt",
            "epyc-ccx",
            "offline-cpuset",
            "qemu-intel16",
            "qemu-numa16",
            "qemu-amd16",
            "qemu-big64",
        ] {
            let t = fixture_topology(name);
            let got: Vec<(Option<&str>, usize, usize)> = placements(&[PinArg::All], false, &t)
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p.class.map(|c| c.name()),
                        p.writer_cpu.unwrap(),
                        p.reader_cpu.unwrap(),
                    )
                })
                .collect();
            let want: Vec<(Option<&str>, usize, usize)> = t
                .classes()
                .into_iter()
                .map(|(c, (w, r))| (Some(c.name()), w, r))
                .collect();
            assert_eq!(got, want, "{name}");
            for c in PlacementClass::ALL {
                let r = placements(&[PinArg::Class(c)], false, &t);
                match t.representative(c) {
                    Some(_) => assert!(r.is_ok(), "{name} {}", c.name()),
                    None => {
                        let f = r.unwrap_err();
                        assert_eq!(f.code, 2);
                        assert!(f.message.contains(c.name()), "{}", f.message);
                    }
                }
            }
        }
        let t = fixture_topology("offline-cpuset");
        let f = placements(&[PinArg::Cpus(0, 2)], false, &t).unwrap_err();
        assert_eq!(f.code, 2);
        assert!(
            f.message.contains("CPU 2 is not one this process may use"),
            "{}",
            f.message
        );
        let ok = placements(&[PinArg::Cpus(1, 5)], false, &t).unwrap();
        assert_eq!(ok[0].label(), "smt-sibling");
    }
}
