//! The ending every measuring command shares (`run`, `latency`, `sync`): the run
//! marked complete and saved, its rendering printed, and the exit code chosen.

use ipcperf_core::machine_state::{CpuSnapshot, BUSY_OTHERS};
use ipcperf_core::record::{unix_ms, CaseStatus, RunRecord};

use crate::console::Console;
use crate::fail::Fail;
use crate::shared::db::Saver;

/// Finish `run`: stop the progress, save, print what `render` makes of it, then
/// where it was kept. Exit 1
/// when a case failed, or the history stopped taking the run part-way; a run whose every case was refused is the user's mistake
/// (exit 2, with the first reason) when `all_refused_is_usage`.
pub fn finish(
    mut run: RunRecord,
    mut saver: Saver,
    console: &mut Console,
    render: impl FnOnce(&RunRecord) -> String,
    all_refused_is_usage: bool,
) -> Result<i32, Fail> {
    console.finish();
    // How busy others kept the machine while the run ran: flagged when it matters.
    if let Some(state) = run.machine.state.as_mut() {
        if let Some(start) = &state.started {
            state.others_busy_cpus = start.others_busy(&CpuSnapshot::now());
            if let Some(b) = state.others_busy_cpus.filter(|&b| b > BUSY_OTHERS) {
                crate::console::warn(&format!(
                    "other processes kept {b:.2} CPUs busy during the run: its figures shared \
                     the machine"
                ));
            }
        }
        if let Some(q) = state.cpu_quota.as_mut() {
            q.finish();
            if let (Some(n), Some(ms)) = (q.throttled_periods.filter(|&n| n > 0), q.throttled_ms) {
                crate::console::warn(&format!(
                    "the CPU quota of cgroup {} throttled the run in {n} periods, {ms:.0} ms \
                     in all: the figures of those series hold the waits",
                    q.cgroup
                ));
            }
        }
    }
    stops_said(&run);
    run.finished_ms = Some(unix_ms());
    run.complete = true;
    let saved = saver.finish_quietly(&run);

    let count = |s: CaseStatus| run.cases.iter().filter(|c| c.status == s).count();
    // A run in which nothing gave a figure and something failed prints no empty
    // table: each failure was said on its own line as it happened (the console).
    let nothing = count(CaseStatus::Ok) == 0 && count(CaseStatus::Failed) > 0;
    let printed = if nothing {
        Ok(())
    } else {
        crate::console::out_result(&render(&run))
    };
    // Where the run is kept, after its results.
    let kept = saved.is_some();
    if let Some(kept) = saved {
        kept.say();
    }
    if let Err(e) = printed {
        let where_ = if kept {
            " (the run is kept, as said above)"
        } else {
            ""
        };
        return Err(Fail::failure(format!(
            "cannot write to standard output: {e}{where_}"
        )));
    }

    if all_refused_is_usage && count(CaseStatus::Refused) == run.cases.len() {
        let first = run
            .cases
            .first()
            .and_then(|c| c.message.clone())
            .unwrap_or_default();
        return Err(Fail::usage(format!("nothing could run as asked: {first}")));
    }
    Ok(if count(CaseStatus::Failed) > 0 || saver.lost() {
        1
    } else {
        0
    })
}

/// A run stopped and continued (Ctrl-Z then `fg`, SIGSTOP): how often, and what
/// the runner took again so that no figure holds a stop.
pub fn stops_said(run: &RunRecord) {
    let stops = ipcperf_sys::signal::continues();
    if stops == 0 {
        return;
    }
    let key = ipcperf_core::stop::RETAKEN_AFTER_STOP;
    let each = run
        .cases
        .iter()
        .map(|c| ipcperf_core::stop::retaken(&c.options));
    let retaken: u32 = each.clone().sum();
    let cases = each.filter(|&n| n > 0).count();
    let what = if retaken == 0 {
        "no series was taken again".to_string()
    } else {
        format!(
            "{retaken} series or calibrations of {cases} case{} held a stop and were taken \
             again (JSON: options.{key})",
            if cases == 1 { "" } else { "s" }
        )
    };
    crate::console::warn(&format!(
        "the run was stopped and continued {stops} time{} (Ctrl-Z, SIGSTOP): {what}",
        if stops == 1 { "" } else { "s" }
    ));
}

/// A streamer that prints each group of cases (consecutive cases of the plan
/// with the same key) as soon as the group's last case has ended: `render` makes
/// the text of the group's cases (`first`: the run's first group, which carries
/// the heading). `streamed` is set once anything is printed, so the closing print
/// leaves out what was.
pub fn group_streamer<K: PartialEq + 'static>(
    run: &RunRecord,
    plan_keys: Vec<K>,
    key_of: impl Fn(&ipcperf_core::record::CaseRecord) -> K + 'static,
    render: impl Fn(&RunRecord, bool) -> String + 'static,
    streamed: std::rc::Rc<std::cell::Cell<bool>>,
) -> crate::console::Streamer {
    let mut head = run.clone();
    head.cases.clear();
    let mut seen = 0usize;
    Box::new(move |r| {
        seen += 1;
        head.cases.push(r.clone());
        // A case of the plan may give more than one record (robustness): wait for
        // the next plan key to differ.
        if plan_keys.get(seen) == Some(&key_of(r)) {
            return None;
        }
        let text = render(&head, !streamed.get());
        head.cases.clear();
        streamed.set(true);
        Some(text)
    })
}
