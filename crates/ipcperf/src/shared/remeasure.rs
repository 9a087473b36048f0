//! `compare --remeasure`: the cases a comparison called, measured again now as
//! run B's own command measured them, kept as a run, to hold each call to (as
//! `--confirm C` does with a run the user measured).

use clap::{Parser, Subcommand};
use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::runner;

use crate::compare;
use crate::console::Console;
use crate::fail::Fail;
use crate::shared::db::{DbArgs, SaveArgs, Saver};
use crate::shared::round_trip::LatencyArgs;
use crate::shared::stream::RunArgs;

/// B's command line, as far as measuring again needs it: `run` or `latency`
/// with their arguments (the global flags taken and ignored).
#[derive(Parser, Debug)]
#[command(name = "ipcperf")]
struct Measured {
    #[command(subcommand)]
    what: What,
    #[arg(long, short, global = true)]
    quiet: bool,
    #[arg(long, short, global = true)]
    verbose: bool,
    #[arg(long, global = true)]
    color: Option<String>,
}

#[derive(Subcommand, Debug)]
enum What {
    Run(Box<RunArgs>),
    Latency(Box<LatencyArgs>),
}

/// Measure B's cases `cases` (their places in `rb`, run `ib`) again, here and
/// now, as B's command line plans them, and keep the run in `db`'s history:
/// its id and record. Bad input (exit 2) where that cannot be B's measurement:
/// B of another machine, kernel or CPU model, of a command other than `run` or
/// `latency`, with its peer on another machine, or whose command plans other
/// cases here now.
pub fn again(
    rb: &RunRecord,
    ib: i64,
    cases: &[usize],
    db: &DbArgs,
) -> Result<(i64, RunRecord), Fail> {
    let refuse = |why: String| {
        Fail::usage(format!(
            "--remeasure: {why}: measure B's cases again yourself and judge with `--confirm C`"
        ))
    };
    let mut run = RunRecord::begin(&rb.kind, rb.command_line.clone());
    if !compare::same_machine(rb, &run) {
        return Err(refuse(format!(
            "run {ib} was measured on {} (Linux {}, {}), this is {} (Linux {}, {})",
            rb.machine.host(),
            rb.machine.kernel,
            rb.machine.cpu_model,
            run.machine.host(),
            run.machine.kernel,
            run.machine.cpu_model
        )));
    }
    let parsed = Measured::try_parse_from(&rb.command_line).map_err(|e| {
        let said = e.to_string();
        let first = said.lines().next().unwrap_or_default();
        refuse(format!(
            "run {ib} (`{}`) is not a `run` or `latency` command this ipcperf parses ({})",
            rb.command_line.join(" "),
            first.trim_start_matches("error: ")
        ))
    })?;
    // Before anything is planned: planning a run with --peer reaches for the
    // other machine.
    let remote = match &parsed.what {
        What::Run(a) => a.case.peer.is_some(),
        What::Latency(a) => a.case.peer.is_some(),
    };
    if remote {
        return Err(refuse(format!(
            "run {ib}'s peer ran on another machine (--peer)"
        )));
    }
    let (specs, hogs, env) = match &parsed.what {
        What::Run(a) => super::stream::prepare(a)?,
        What::Latency(a) => super::round_trip::prepare(a)?,
    };
    let mut chosen = Vec::with_capacity(cases.len());
    for &i in cases {
        let (Some(spec), Some(had)) = (specs.get(i), rb.cases.get(i)) else {
            return Err(refuse(format!(
                "run {ib}'s command plans {} cases here now, not its case {}",
                specs.len(),
                i + 1
            )));
        };
        if !same_case(&CaseRecord::for_spec(spec), had) {
            return Err(refuse(format!(
                "run {ib}'s command plans another case here now in place of {} {} B",
                had.mechanism, had.block_size
            )));
        }
        chosen.push(spec.clone());
    }
    let save = SaveArgs {
        db: db.clone(),
        ..SaveArgs::default()
    };
    // The run measured again is kept, as every run is: a history that cannot
    // take it is said as such (compare has no --no-save to offer).
    let mut saver = Saver::start(&save, &mut run).map_err(|f| Fail {
        message: format!(
            "--remeasure: {}: the run measured again must be kept; measure B's cases again \
             yourself and judge with `--confirm C`",
            f.message.trim_end_matches(" (or run with --no-save)")
        ),
        ..f
    })?;
    crate::console::note(&format!(
        "--remeasure: measuring the {} case{} called again now, as run {ib} did",
        chosen.len(),
        if chosen.len() == 1 { "" } else { "s" }
    ));
    let id = saver.run_id();
    let mut console = Console::new(chosen.len());
    run.cases = match parsed.what {
        What::Run(_) => runner::run_all(&chosen, &env, &mut saver.observe(&mut console)),
        What::Latency(_) => {
            runner::run_all_latency(&chosen, &env, &mut saver.observe(&mut console))
        }
    };
    drop(hogs);
    console.finish();
    run.finished_ms = Some(ipcperf_core::record::unix_ms());
    run.complete = true;
    if let Some(kept) = saver.finish_quietly(&run) {
        kept.say();
    }
    let id = id.ok_or_else(|| Fail::failure("--remeasure: the history did not keep the run"))?;
    Ok((id, run))
}

/// Whether `planned` (a case of the plan, not yet run) is `had` (B's record of
/// it): the same mechanism, mode, block size, payload and both CPUs.
fn same_case(planned: &CaseRecord, had: &CaseRecord) -> bool {
    planned.mechanism == had.mechanism
        && planned.mode == had.mode
        && planned.block_size == had.block_size
        && planned.payload == had.payload
        && planned.placement.writer_cpu == had.placement.writer_cpu
        && planned.placement.reader_cpu == had.placement.reader_cpu
}
