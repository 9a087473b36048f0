//! `ipcperf matrix MECHANISM`: the p50 and p99 round trip between every ordered
//! pair of CPUs (core-to-core), for any round-trip mechanism; a table, a heatmap
//! (`-o FILE`), and a run saved like every other. It says how long it will take
//! before it starts.

use std::path::PathBuf;

use clap::Args;
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::Placement;
use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
use ipcperf_core::record::RunRecord;
use ipcperf_core::runner;
use ipcperf_core::topology::{format_cpu_list, Topology};

use crate::console::Console;
use crate::export::Format;
use crate::fail::Fail;
use crate::shared::args::{MechArgs, TwoSides};
use crate::shared::values::{heatmap_is_svg, parse_cpus, CpuList};
use crate::units;

/// A series per pair when none is given: 240 pairs (16 CPUs) in well under a minute.
const DEFAULT_SERIES_MS: u64 = 100;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf matrix shm --wake spin --sizes 64\n  ipcperf matrix pipe --cpus 0-3 --duration 200ms\n  ipcperf matrix unix --mode threads -o unix.png"
)]
pub struct MatrixArgs {
    /// The round-trip mechanism measured between every pair (see `ipcperf list`).
    #[arg(value_name = "MECHANISM")]
    pub mechanism: String,

    /// The CPUs to pair (a list such as 0-7,64-71); default every CPU this process
    /// may use.
    #[arg(long, value_parser = parse_cpus)]
    pub cpus: Option<CpuList>,

    /// Message size (64, 4k). Default 64 bytes, or the one size a wake-up
    /// mechanism carries (eventfd 8, signal 4).
    #[arg(long, short, alias = "size", value_parser = units::parse_block)]
    pub sizes: Option<usize>,

    #[command(flatten)]
    pub series: crate::shared::args::SeriesArgs,

    /// Where the two sides run: threads or processes (default).
    #[arg(long, short, value_enum, default_value_t = TwoSides::Processes)]
    pub mode: TwoSides,

    #[command(flatten)]
    pub mech: MechArgs,

    /// Where the time goes between each pair: after its series, one traced
    /// series split into its kernel parts (needs root or CAP_PERFMON; see
    /// `latency --explain`); the table adds each placement class's parts.
    #[arg(long)]
    pub explain: bool,

    #[command(flatten)]
    pub tracer: crate::shared::tracer::TracerArg,

    /// Also draw the heatmap into this file (.svg or .png). Was --heatmap, which
    /// still works.
    #[arg(long = "output", short = 'o', alias = "heatmap", value_name = "FILE")]
    pub heatmap: Option<PathBuf>,

    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub save: crate::shared::db::SaveArgs,
}

/// A message's size where none is given and the mechanism carries any.
const DEFAULT_SIZE: usize = 64;

/// Every ordered pair of distinct CPUs, as cases.
pub fn plan(a: &MatrixArgs, topo: &Topology) -> Result<Vec<CaseSpec>, Fail> {
    let mechs = crate::shared::plan::parse_mechanisms(std::slice::from_ref(&a.mechanism))?;
    let [m] = mechs[..] else {
        return Err(Fail::usage("a matrix measures one mechanism"));
    };
    if m.round_trip().is_none() {
        return Err(Fail::usage(format!(
            "{} cannot carry round trips, so it has no matrix",
            m.name()
        )));
    }
    let usable: Vec<usize> = topo.cpus.iter().map(|p| p.cpu).collect();
    let cpus = a.cpus.clone().map_or_else(|| usable.clone(), |c| c.0);
    if let Some(c) = cpus.iter().find(|c| !usable.contains(c)) {
        return Err(Fail::usage(format!(
            "CPU {c} is not one this process may use (usable: {})",
            format_cpu_list(&usable)
        )));
    }
    if cpus.len() < 2 {
        return Err(Fail::usage(format!(
            "a matrix needs two CPUs, and this process may use {}",
            format_cpu_list(&cpus)
        )));
    }
    let mode = a.mode.mode();
    // As latency's: a wake-up mechanism at the size it carries (`matrix signal`
    // tried 64 bytes on every pair, each refused).
    let size = a.sizes.unwrap_or_else(|| {
        m.default_round_trip_sizes()
            .and_then(|s| s.first().copied())
            .unwrap_or(DEFAULT_SIZE)
    });
    let opts = a.mech.options(&[m])?;
    let length = match (a.series.count, a.series.duration) {
        (Some(n), _) => Length::Count { blocks: n },
        (None, Some(d)) => Length::Duration {
            ns: d.as_nanos() as u64,
        },
        (None, None) => Length::Duration {
            ns: DEFAULT_SERIES_MS * 1_000_000,
        },
    };
    let mut specs = Vec::new();
    for (m, o) in a.mech.cases(m, &opts) {
        for &w in &cpus {
            for &r in &cpus {
                if w == r {
                    continue;
                }
                specs.push(CaseSpec {
                    length,
                    opts: ipcperf_core::mechanism::MechOptions {
                        explain: a.explain,
                        ..o.clone()
                    },
                    ..CaseSpec::new(
                        m,
                        mode,
                        size,
                        Placement::pinned(w, r).with_class(topo.classify(w, r)),
                    )
                });
            }
        }
    }
    // A size the mechanism cannot carry is bad input, said before any pair runs.
    crate::shared::plan::refuse_up_front(&specs, true, true, false)?;
    // Where an idle CPU may halt: the share of wake-ups from idle, from the
    // first pair of each placement class (a wake-up costs the same whichever
    // pair; probing all 240 pairs of 16 CPUs would add a series to each).
    crate::shared::plan::idle_probes(&mut specs);
    let mut classes = Vec::new();
    for s in specs.iter_mut().filter(|s| s.opts.idle_probe) {
        let class = s.placement.class;
        s.opts.idle_probe = !classes.contains(&class);
        classes.push(class);
    }
    Ok(specs)
}

/// About how long the matrix takes: each pair's series, its warm-up, the peer's start.
pub fn estimate_secs(specs: &[CaseSpec]) -> f64 {
    specs
        .iter()
        .map(|s| match s.length {
            // The series, a warm-up of up to twice its target, the peer's start.
            Length::Duration { ns } => (ns + 2 * runner::warmup_target_ns(s)) as f64 / 1e9 + 0.02,
            Length::Count { .. } => 0.1,
        })
        .sum()
}

/// The whole matrix's time from its first pair's: that pair's time for each
/// pair, or the planned time when it is longer (a first pair refused at once).
pub fn estimate_from_first(specs: &[CaseSpec], first_secs: f64) -> f64 {
    estimate_secs(specs).max(first_secs * specs.len() as f64)
}

pub fn run(a: MatrixArgs) -> Result<i32, Fail> {
    if let Some(p) = &a.heatmap {
        heatmap_is_svg(p)?;
        crate::fail::check_writable(p)?;
    }
    let topo = Topology::current();
    let specs = plan(&a, &topo)?;
    let env = RunEnv::new(PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?);
    let mut run = RunRecord::begin("matrix", std::env::args().collect());
    let mut saver = crate::shared::db::Saver::start(&a.save, &mut run)?;
    // After every input check: bad input is one line.
    crate::console::machine_warnings(&run.machine);
    let mut console = Console::new(specs.len());
    // The estimate is said once the first pair has run: what a pair really costs
    // here (a peer's start on an emulated or loaded machine can take many times
    // the series) is only known then.
    let started = std::time::Instant::now();
    let mut cases = runner::run_all_latency(&specs[..1], &env, &mut saver.observe(&mut console));
    let secs = estimate_from_first(&specs, started.elapsed().as_secs_f64());
    console.note(&format!(
        "matrix of {} pairs, about {secs:.1} s",
        specs.len()
    ));
    cases.extend(runner::run_all_latency(
        &specs[1..],
        &env,
        &mut saver.observe(&mut console),
    ));
    run.cases = cases;
    // A heatmap that cannot be written once the pairs are measured (a disk
    // that filled) loses neither the table nor the run: it is said after them,
    // exit 1 (it returned before both, the run left "incomplete").
    let drawn = a.heatmap.as_ref().map(|path| write_heatmap(&run, path));
    if let (Some(Ok(())), Some(path)) = (&drawn, &a.heatmap) {
        // Above the progress bar, which is still drawn (a plain note ran on
        // after its last frame, on the same line).
        console.note(&format!("heatmap drawn in {}", path.display()));
    }
    let code = crate::shared::ending::finish(
        run,
        saver,
        &mut console,
        |r| crate::document::document(r, a.format, None),
        true,
    )?;
    drawn.transpose()?;
    Ok(code)
}

fn write_heatmap(run: &RunRecord, path: &std::path::Path) -> Result<(), Fail> {
    let Some(m) = crate::chart::heatmap::from_run(run) else {
        return Err(Fail::failure("no pair completed: no heatmap to draw"));
    };
    crate::shared::values::write_heatmap(&m, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        a: MatrixArgs,
    }

    /// The 16-CPU Xeon guest's own sysfs (`xeon16.sysfs`), laid out and read.
    fn xeon16() -> Topology {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ipcperf-core/tests/fixtures/topology/xeon16.sysfs");
        let dir = tempfile::tempdir().unwrap();
        for line in std::fs::read_to_string(src).unwrap().lines() {
            let (p, content) = line.split_once(':').unwrap();
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{}\n", content.trim())).unwrap();
        }
        Topology::read(dir.path(), None)
    }

    #[test]
    fn a_matrix_of_the_16_cpu_guest_plans_every_ordered_pair_as_shared_l3() {
        let topo = xeon16();
        let a = Wrap::try_parse_from(["x", "shm", "--wake", "spin", "-d", "30ms"])
            .unwrap()
            .a;
        let specs = plan(&a, &topo).unwrap();
        assert_eq!(specs.len(), 240);
        assert!(specs.iter().all(|s| s.placement.class
            == Some(ipcperf_core::topology::PlacementClass::SharedL3)
            && s.placement.writer_cpu != s.placement.reader_cpu));
        // About 240 × (30 ms and its warm-up): under a minute, said before it starts.
        let secs = estimate_secs(&specs);
        assert!((7.0..60.0).contains(&secs), "{secs}");
        let some = Wrap::try_parse_from(["x", "pipe", "--cpus", "0,2,12"])
            .unwrap()
            .a;
        assert_eq!(plan(&some, &topo).unwrap().len(), 6);
    }
}
