//! The answer again at polling idle: where an idle CPU may halt, advise ranks
//! at the machine's own idle (what an application gets) and measures each
//! cross-CPU candidate at polling idle too (`--idle poll`'s twins), then says
//! what polling idle would change: the order, the figures, the ties.

use ipcperf_core::record::RunRecord;

use super::{fmt_figure, Answer, Ask};

/// The run's cases split by idle: those at the machine's own idle (every case
/// taken as-is, same-CPU ones included), and those held at polling idle with
/// the same-CPU cases beside them (no wake-up crosses CPUs there, so the
/// machine's idle is polling's). None where no case was held.
pub fn split(run: &RunRecord) -> (RunRecord, Option<RunRecord>) {
    let held = |c: &ipcperf_core::record::CaseRecord| c.options.contains_key("idle");
    if !run.cases.iter().any(held) || run.cases.iter().all(held) {
        return (run.clone(), None);
    }
    let mut asis = run.clone();
    asis.cases.retain(|c| !held(c));
    let mut poll = run.clone();
    let same_cpu = |c: &ipcperf_core::record::CaseRecord| {
        c.placement.writer_cpu.is_some() && c.placement.writer_cpu == c.placement.reader_cpu
    };
    poll.cases.retain(|c| held(c) || same_cpu(c));
    (asis, Some(poll))
}

/// How many rows tie the first choice (its group, less itself).
pub fn ties_with_first(ans: &Answer) -> usize {
    let g = super::tie_groups(&ans.ranked);
    g.iter().filter(|&&x| x == 0).count().saturating_sub(1)
}

/// The section under the answer: the ranking at polling idle, each row's rank
/// at the machine's idle beside it, the ties in both, and the cost.
pub fn section(asis: &Answer, poll: &Answer, ask: &Ask) -> String {
    let fit = |line: &str| format!("{}\n", crate::console::fit_line(line, 2));
    let mut out = format!(
        "\n{}",
        fit(
            "At polling idle (measured too: each candidate across CPUs with no idle state \
             deeper than polling, /dev/cpu_dma_latency held at 0, as `--idle poll` does):"
        )
    );
    let groups = super::tie_groups(&poll.ranked);
    let rows: Vec<Vec<String>> = poll
        .ranked
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let before = asis
                .ranked
                .iter()
                .position(|x| x.name == r.name)
                .map(|p| (p + 1).to_string())
                .unwrap_or_else(|| "-".into());
            let was = asis
                .ranked
                .iter()
                .find(|x| x.name == r.name)
                .map(|x| fmt_figure(x.value, ask))
                .unwrap_or_else(|| "-".into());
            vec![
                if i > 0 && groups[i] == groups[i - 1] {
                    format!("{} =", i + 1)
                } else {
                    (i + 1).to_string()
                },
                r.name.clone(),
                fmt_figure(r.value, ask),
                was,
                before,
            ]
        })
        .collect();
    // Rows whose worst was on one CPU: no case of theirs was held at polling
    // idle, and their as-is figure stands (the 8.02 ms of a spinning wait
    // on one CPU stood in the polling column, unexplained).
    let one_cpu: Vec<&str> = poll
        .ranked
        .iter()
        .filter(|r| r.placement.starts_with("same-cpu"))
        .map(|r| r.name.as_str())
        .collect();
    let notes = if one_cpu.is_empty() {
        vec![]
    } else {
        vec![format!(
            "worst on one CPU, where no wake-up crosses CPUs (no series held at polling \
             idle: the as-is figure stands in both columns): {}",
            one_cpu.join(", ")
        )]
    };
    // A stream ranks MB/s (was headed "p99 polling" over MB/s figures).
    let fig = super::table::figure_column(ask);
    let t = crate::export::view::Table {
        title: String::new(),
        header: [
            "rank",
            "mechanism",
            &format!("{fig} polling"),
            &format!("{fig} as-is"),
            "as-is rank",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
        notes,
    };
    out.push_str(crate::export::table::render_tables(&[t]).trim_start_matches('\n'));
    let (tp, ta) = (ties_with_first(poll), ties_with_first(asis));
    if let Some(f) = poll.ranked.first() {
        let same = asis.ranked.first().is_some_and(|a| a.name == f.name);
        out.push_str(&fit(&format!(
            "First choice at polling idle: {} ({}){}; {tp} tie{} with it there, {ta} at the \
             machine's idle.",
            f.name,
            fmt_figure(f.value, ask),
            if same {
                ", the same as at the machine's idle".to_string()
            } else {
                String::new()
            },
            if tp == 1 { "" } else { "s" },
        )));
    }
    out.push_str(&fit(
        "Polling idle is not free: an idle CPU spins instead of halting (power, heat, and on a \
         VM the host's CPU time); it is what a latency-critical service sets, and what the \
         figures above are without wake-ups from a halted CPU.",
    ));
    out
}
