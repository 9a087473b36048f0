//! `ipcperf advise --pattern-file TRACE` (or `--size-dist .. --gaps ..`): the
//! ranking for your own traffic. Every candidate replays the pattern (see
//! `ipcperf replay`) at every placement class asked, the run is saved as any
//! run is, and the mechanisms are ranked by the same rules as every answer
//! (worst placement, CPU budget, ties), by their messages' latency from when
//! each was due; the pattern is shown beside the answer.

use clap::Parser;

use super::{candidates, first_line, AdviseArgs};
use crate::advise::{Ask, Pattern};
use crate::console::Console;
use crate::fail::Fail;
use crate::shared::db::Saver;
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::plan::RunEnv;
use ipcperf_core::record::RunRecord;
use ipcperf_core::runner::replay::{run_replay_case, ReplayPlan};

pub fn run(a: AdviseArgs) -> Result<i32, Fail> {
    #[derive(Parser)]
    struct Replay {
        #[command(flatten)]
        a: crate::shared::replay::ReplayArgs,
    }
    a.check_applies()?;
    if a.throughput {
        return Err(Fail::usage(
            "--throughput: a replayed pattern goes at its own rate; rank it by --latency",
        ));
    }
    if a.duration.is_some() {
        return Err(Fail::usage(
            "--duration: a replayed pattern lasts its own length (--for)",
        ));
    }
    let loaded = crate::shared::replay::load(a.pattern_file.as_deref(), &a.source)?;
    let mut ask_args = a;
    ask_args.pattern = Pattern::Replay;
    let a = ask_args;
    let mechs = candidates(&a)?;
    // The same cases `ipcperf replay` plans from these arguments.
    let mut argv: Vec<String> = vec!["ipcperf".into(), "--size-dist".into(), "fixed:1".into()];
    argv.extend(["--gaps".into(), "fixed:1".into()]);
    argv.extend(mechs.iter().cloned());
    if a.placement == "unknown" {
        argv.extend(["--pin".into(), "all".into()]);
    } else {
        argv.extend(["--pin".into(), a.placement.clone()]);
    }
    if let Some(ns) = &a.across {
        argv.extend([
            "--across".into(),
            ipcperf_core::crossing::Namespace::list_name(&ns.0),
        ]);
    }
    if mechs.iter().any(|m| m == "shm") {
        argv.extend(["--wake".into(), "futex,spin".into()]);
    }
    // A program that sends several small messages in a row over TCP sets
    // TCP_NODELAY, or Nagle holds each back for the last one's ACK.
    if mechs.iter().any(|m| m.ends_with("tcp")) {
        argv.push("--nodelay".into());
    }
    let r = Replay::try_parse_from(&argv).map_err(|e| Fail::usage(first_line(&e.to_string())))?;
    let largest = loaded.script.largest();
    let mut specs = crate::shared::replay::plan(
        &r.a.args
            .iter()
            .filter_map(|m| ipcperf_core::mechanism::MechanismKind::from_name(m))
            .collect::<Vec<_>>(),
        &[],
        &r.a.measure.pin,
        a.save.db.db.as_deref(),
        &r.a.mech,
        ipcperf_core::payload::Payload::Touch,
        largest,
    )?;
    let ask = Ask {
        pattern: Pattern::Replay,
        figure: a.figure(),
        cpu_budget: a.cpu_budget,
        posix_only: a.posix_only,
        messages: a.messages,
    };
    let left = super::candidates::drop_left_out(&mut specs, &ask)?;
    // As many as run and latency take, so that compare can judge them.
    let passes = if a.quick { 1 } else { 5 };
    let plan = ReplayPlan {
        script: &loaded.script,
        series: passes,
        reps: 1,
        spin: false,
        about: loaded.about.clone(),
    };
    plan.check().map_err(|e| Fail::usage(e.to_string()))?;
    crate::console::note(&format!(
        "replaying {} over {} cases ({passes} pass{} each), about {}",
        crate::export::replay::describe(&loaded.about),
        specs.len(),
        if passes == 1 { "" } else { "es" },
        crate::shared::replay::long_secs(plan.about_secs(specs.len()))
    ));
    let env = RunEnv::new(PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?);
    let mut run = RunRecord::begin("advise", std::env::args().collect());
    let mut saver = Saver::start(&a.save, &mut run)?;
    crate::console::machine_warnings(&run.machine);
    let mut console = Console::new(specs.len());
    {
        let mut obs = saver.observe(&mut console);
        for (i, spec) in specs.iter().enumerate() {
            ipcperf_core::observer::Observer::case_started(&mut obs, spec, i, specs.len());
            run.cases.push(run_replay_case(spec, &plan, &env, &mut obs));
        }
    }
    super::answer(run, saver, &mut console, (&ask, &left), &a, |r| {
        let mut out = format!(
            "\nThe pattern: {}\n",
            crate::export::replay::describe(&loaded.about)
        );
        if let Some(f) = &loaded.about.fitted {
            out.push_str(&format!("  fitted: {f}\n"));
        }
        // Stretches of several sends behind (one late send is a hiccup).
        let long = |c: &&ipcperf_core::record::CaseRecord| {
            c.replay
                .as_ref()
                .and_then(|x| x.behind)
                .is_some_and(|b| b.messages >= 5)
        };
        for c in r.cases.iter().filter(long) {
            if let Some(n) = crate::export::replay::behind_note(c) {
                out.push_str(&format!("  {n} ({})\n", c.placement.shown()));
            }
        }
        out
    })
}
