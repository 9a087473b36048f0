//! `ipcperf replay TRACE MECH...`: an application's traffic, replayed over each
//! mechanism: one conversation of an strace trace (or a CSV, or a fitted
//! pattern), its messages both ways at their recorded times (see
//! `ipcperf_core::workload::replay`), each message's latency from when it was
//! due, the schedule kept, CPU of both sides; saved, exported, plotted, compared.

use ipcperf_core::record::RunRecord;
use ipcperf_core::runner::replay::{run_replay_case, ReplayPlan};

use crate::console::Console;
use crate::fail::Fail;
use crate::shared::replay::{load, long_secs, plan, reps, split_args, ReplayArgs};

pub fn run(a: ReplayArgs) -> Result<i32, Fail> {
    let (trace, mechs) = split_args(&a)?;
    if let Some(o) = &a.output {
        crate::chart::replay::check_path(o)?;
    }
    let payload = if a.verify {
        ipcperf_core::payload::Payload::Verify
    } else if a.no_touch {
        ipcperf_core::payload::Payload::NoTouch
    } else {
        ipcperf_core::payload::Payload::Touch
    };
    let loaded = load(trace.as_deref(), &a.source)?;
    let plan_ = ReplayPlan {
        script: &loaded.script,
        series: a.measure.repeat,
        reps: reps(&loaded.script, a.loop_for),
        spin: a.busy_poll,
        about: loaded.about.clone(),
    };
    plan_.check().map_err(|e| Fail::usage(e.to_string()))?;
    let specs = plan(
        &mechs,
        &a.mode,
        &a.measure.pin,
        a.save.db.db.as_deref(),
        &a.mech,
        payload,
        loaded.script.largest(),
    )?;
    let env = ipcperf_core::plan::RunEnv::new(
        ipcperf_core::kind::PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?,
    );
    let mut run = RunRecord::begin("replay", std::env::args().collect());
    let mut saver = crate::shared::db::Saver::start(&a.save, &mut run)?;
    crate::console::machine_warnings(&run.machine);
    let mut console = Console::new(specs.len());
    // How long, said first: a pass lasts what the trace spans (a CSV whose last
    // row is an hour on waits that hour, five passes a case).
    console.note(&format!(
        "replay of {} case{}, {} pass{} of {} each, about {}",
        specs.len(),
        if specs.len() == 1 { "" } else { "s" },
        plan_.series,
        if plan_.series == 1 { "" } else { "es" },
        long_secs(plan_.pass_ns() as f64 / 1e9),
        long_secs(plan_.about_secs(specs.len()))
    ));
    {
        let mut obs = saver.observe(&mut console);
        for (i, spec) in specs.iter().enumerate() {
            ipcperf_core::observer::Observer::case_started(&mut obs, spec, i, specs.len());
            run.cases
                .push(run_replay_case(spec, &plan_, &env, &mut obs));
        }
    }
    // A timeline that cannot be written (a disk that filled) loses neither the
    // tables nor the run: it is said after them, exit 1.
    let drawn = a
        .output
        .as_ref()
        .map(|o| crate::chart::replay::write(&run, o));
    if let (Some(Ok(())), Some(o)) = (&drawn, &a.output) {
        // Above the progress bar, still drawn (not on after its last frame).
        console.note(&format!("timeline drawn in {}", o.display()));
    }
    let format = a.format;
    let code = crate::shared::ending::finish(
        run,
        saver,
        &mut console,
        |r| crate::document::document(r, format, None),
        true,
    )?;
    drawn.transpose()?;
    Ok(code)
}
