//! `ipcperf compare A B`: did this kernel, container or machine change IPC speed?

use clap::Args;
use ipcperf_core::record::RunRecord;

use crate::export::emit::{csv_rows, emit, Document};
use crate::export::Format;
use crate::fail::Fail;
use crate::shared::db::{load, parse_run_id, DbArgs, RunId};
use crate::{compare, export};

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ipcperf compare baseline last
  ipcperf compare baseline last --format json
  ipcperf run --label nightly
  ipcperf compare baseline nightly --baseline-runs 5 --fail-on-regression
  ipcperf run --label again    # where that exited 3: once more, each call held to it
  ipcperf compare baseline nightly --baseline-runs 5 --fail-on-regression --confirm again
  ipcperf compare baseline nightly --baseline-runs 5 --fail-on-regression --remeasure")]
pub struct CompareArgs {
    /// The earlier (baseline) run: an id from `ipcperf history`.
    #[arg(value_parser = parse_run_id)]
    pub a: RunId,
    /// The later run; ratios are B/A.
    #[arg(value_parser = parse_run_id)]
    pub b: RunId,
    #[command(flatten)]
    pub db: DbArgs,
    /// Smallest change to mark, beyond both runs' spread (5%, 2.5; 0 marks every
    /// difference beyond the spread).
    #[arg(long, default_value = "5%", value_parser = crate::units::parse_percent)]
    pub threshold: f64,
    /// Output format: table, markdown, json or csv (one record per case).
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = Format::Table)]
    pub format: Format,
    /// Exit 3 when any case got slower (for CI: 1 is kept for a failure, 2 for
    /// bad input); the output is the same, and a line on stderr says how many
    /// rows could not tell.
    #[arg(long)]
    pub fail_on_regression: bool,

    /// A is this many runs: A and the newest earlier complete runs of its host,
    /// kernel and CPU model before it that measured a case of A (not B); B is judged against their mean
    /// and their run-to-run spread. Five buy about a quarter off the smallest
    /// change callable against one (√(1 + 1/5) against √2).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub baseline_runs: u16,

    /// With --fail-on-regression: also exit 3 when a row could not tell (its
    /// series too spread or too few to call a change of the threshold's size),
    /// or when a case measured in A was not measured in B (absent from B,
    /// skipped or failed there).
    #[arg(long, requires = "fail_on_regression")]
    pub strict: bool,

    /// Hold each call to run C, measured after B on the same machine: a call
    /// stands only where C, judged against the same A, moves that row the same
    /// way on its own. A figure far off in one run does not come back in the
    /// next; a change does. For a gate: measure C only when B was called.
    #[arg(long, value_name = "C", value_parser = parse_run_id)]
    pub confirm: Option<RunId>,

    /// Where a row is called, measure its case again now (B's own command
    /// line, on B's machine, the series of the cases called only), keep that
    /// as a run, and hold each call to it as `--confirm` does: one command
    /// for a gate, seconds of measuring where it called.
    #[arg(long, conflicts_with = "confirm")]
    pub remeasure: bool,
}

pub fn run(a: CompareArgs) -> Result<i32, Fail> {
    let mut store = a.db.open_read()?;
    let (ia, ra) = load(&mut store, a.a)?;
    let (ib, rb) = load(&mut store, a.b)?;
    if ia == ib {
        // Every row would be 1.00x "unchanged": a run's own figures say nothing
        // of a change.
        return Err(Fail::usage(format!(
            "A and B are both run {ia}: compare two runs (`ipcperf history` lists them)"
        )));
    }
    let mut again = match a.confirm {
        Some(c) => Some(confirming_run(&mut store, c, (ia, ib), &rb)?),
        None => None,
    };
    let ic = again.as_ref().map(|(ic, _)| *ic);
    // Across machines, how much one machine's runs move does not say whether
    // the other differs: no history.
    // One run as A: A is left out of the history too (it may be the changed
    // one: `compare new old`); several: their spread is the history's own.
    let (history, traits, earlier) = if compare::same_machine(&ra, &rb) {
        let mut left_out = if a.baseline_runs > 1 {
            vec![ib]
        } else {
            vec![ia, ib]
        };
        // C is B's twin: no more history than B is.
        left_out.extend(ic);
        earlier_runs(&mut store, &left_out, &rb)
    } else {
        Default::default()
    };
    let measured = |r: &RunRecord| {
        r.cases
            .iter()
            .any(|c| c.status == ipcperf_core::record::CaseStatus::Ok)
    };
    // Two measured topologies (`topology --measure`, no case) are compared on
    // what moved between them, below the table: that is something to compare.
    let topologies = ra.machine.measured.is_some() && rb.machine.measured.is_some();
    // Nothing to judge B by, or nothing of B to judge (every case failed, or a
    // run of no case): an empty table that passed a gate.
    let a_kind = ra.kind_or_guess();
    for (id, r, side) in [(ia, &ra, "A"), (ib, &rb, "B")] {
        if !measured(r) && !topologies {
            return Err(Fail::usage(format!(
                "run {id} ({}) has no figure to compare with (no case of it ran): name a run \
                 that measured something as {side} (`ipcperf history`)",
                r.kind_or_guess()
            )));
        }
    }
    let (baseline_ids, baseline) = baseline_of(&mut store, (ia, ra), (ib, ic), a.baseline_runs);
    if baseline.len() < usize::from(a.baseline_runs) {
        crate::console::note(&format!(
            "--baseline-runs {}: only {} complete run{} of A's host, kernel and CPU model up to A \
             that measured a case of A (run{} {}): B is judged against {}",
            a.baseline_runs,
            baseline.len(),
            if baseline.len() == 1 { "" } else { "s" },
            if baseline.len() == 1 { "" } else { "s" },
            ids_shown(&baseline_ids),
            if baseline.len() == 1 {
                "A alone"
            } else {
                "those"
            }
        ));
    }
    // The run-to-run model, fitted once for the rows, both tables and the JSON.
    let model = compare::moderated::fit_with(&history, &traits);
    let mut rows = compare::compare_against_model(&baseline, &rb, a.threshold, &model);
    // Two runs that each measured something, but nothing the other did (a
    // latency run against a throughput run): a table of dashes, "0 slower",
    // and a gate that passed. Bad input. (A B that measured some of A's cases
    // and not others is the gate's to count: --strict.)
    if !topologies && !rows.iter().any(|r| r.a.is_some() && r.b.is_some()) {
        return Err(Fail::usage(format!(
            "runs {ia} ({a_kind}) and {ib} ({}) measured no case in common: compare two runs of \
             the same cases (`ipcperf history` says what each measured)",
            rb.kind_or_guess()
        )));
    }
    if a.remeasure {
        let cases = compare::called_cases(&rows, &baseline[0], &rb);
        if !cases.is_empty() {
            again = Some(crate::shared::remeasure::again(&rb, ib, &cases, &a.db)?);
        }
    }
    let ic = again.as_ref().map(|(ic, _)| *ic);
    let confirmed = again.as_ref().map(|(ic, rc)| {
        let rows_c = compare::compare_against_model(&baseline, rc, a.threshold, &model);
        let mut c = compare::confirm(&mut rows, &rows_c, &ic.to_string(), a.threshold);
        c.measured_now = a.remeasure;
        c
    });
    // How B moved as a whole, beside how the history's runs do.
    let whole = compare::whole_run(&earlier, &baseline, &rb);
    let fields = [
        "case",
        "unit",
        "a",
        "b",
        "ratio_b_over_a",
        "interval_low",
        "interval_high",
        "p_value",
        "change",
        "smallest_callable_change",
        "limit",
        "run_to_run_sd",
        "baseline_runs",
        "why",
    ];
    let cell = |v: &serde_json::Value| match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let csv: Vec<Vec<String>> = compare::records(&rows)
        .iter()
        .map(|r| fields.iter().map(|f| cell(&r[*f])).collect())
        .collect();
    // The tables, and with two measured topologies what moved between them.
    let tables = |format: Format| {
        let v = compare::view_of_rows(
            &ids_shown(&baseline_ids),
            &baseline,
            &ib.to_string(),
            &rb,
            a.threshold,
            &model,
            (&rows, confirmed.as_ref()),
        );
        let mut out = export::render_view(&v, format);
        if let (Some(x), Some(y), Some(t)) = (
            &baseline[0].machine.measured,
            &rb.machine.measured,
            &rb.machine.topology,
        ) {
            out.push_str(&format!("\n{}", crate::measured::compare_text(x, y, t)));
        }
        for w in &whole {
            // On a terminal, wrapped to it as the notes are.
            let line = match ipcperf_results::console::terminal_width() {
                Some(cols) => ipcperf_results::console::fill(&w.line(), cols.into(), "  "),
                None => w.line(),
            };
            out.push_str(&format!("\n{line}\n"));
        }
        out
    };
    let doc = Document {
        what: "a comparison",
        json: serde_json::json!({
            "a": ia,
            "b": ib,
            "baseline": baseline_ids,
            "confirm": confirmed.as_ref().map(|c| serde_json::json!({
                "run": ic,
                "measured_now": c.measured_now,
                "held": c.held,
                "not_repeated": c.not_repeated,
                "unmeasured": c.unmeasured,
            })),
            "threshold": a.threshold,
            "run_to_run_prior": model.prior.map(|p| serde_json::json!({
                "sd": p.s0_sq.sqrt(),
                "df": p.d0.is_finite().then_some(p.d0),
                "cases": p.cases,
                "trend": p.trend.map(|t| serde_json::json!({
                    "intercept": t.intercept,
                    "across": t.across,
                    "within": t.within,
                    "explained": t.explained,
                })),
            })),
            "whole_run": whole.iter().map(|w| serde_json::json!({
                "placement": if w.across { "across-cpus" } else { "one-cpu" },
                "cases": w.cases,
                "slower": w.slower(),
                "history_sd": w.history.map(|h| h.0),
                "history_runs": w.history.map(|h| h.1),
                "cases_se": w.cases_se,
                "beyond_history": w.beyond,
            })).collect::<Vec<_>>(),
            "rows_near_limit": compare::near_limit(&rows).0,
            "rows_with_limit": compare::near_limit(&rows).1,
            "summary": compare::summary(&rows),
            "cases": compare::records(&rows),
        }),
        csv: csv_rows(&fields, &csv),
        table: tables(Format::Table),
        markdown: tables(Format::Markdown),
    };
    crate::console::out(&emit(&doc, a.format)?);
    // The gate counts cases; `--explain`'s parts and the counters say why, and are not gated.
    let count = |v: compare::Verdict| {
        rows.iter()
            .filter(|r| r.verdict == v && compare::is_case(r))
            .count()
    };
    let slower = count(compare::Verdict::Slower);
    let cannot = count(compare::Verdict::CouldNotTell);
    // A case A measured that B did not (absent from B, skipped or failed
    // there, or B stopped before it): the gate cannot pass it as unchanged.
    let lost = rows
        .iter()
        .filter(|r| {
            r.verdict == compare::Verdict::NotComparable
                && compare::is_case(r)
                && r.a.is_some()
                && r.b.is_none()
        })
        .count();
    if a.fail_on_regression {
        let mut line = format!(
            "{slower} row{} slower; {cannot} could not tell a {:.0}% change",
            if slower == 1 { "" } else { "s" },
            a.threshold * 100.0
        );
        if lost > 0 {
            line.push_str(&format!(
                "; {lost} measured in A {} not measured in B (absent, skipped or failed there)",
                if lost == 1 { "was" } else { "were" }
            ));
        }
        if cannot + lost > 0 && !a.strict {
            line.push_str("; these fail the gate only with --strict");
        }
        if !rb.complete {
            line.push_str(&format!(
                "; B (run {ib}) is incomplete: stopped, killed or still running"
            ));
        }
        line.push_str(&machine_moved(&whole));
        if slower > 0 && ic.is_none() && !a.remeasure {
            // On real runs a lone case far off in one run was most false calls,
            // and is seldom far off in the next (the book's methodology chapter).
            line.push_str(
                "; before believing it, add `--remeasure` (the cases called measured again \
                 now), or measure once more (`ipcperf run`) and judge again with `--confirm C`",
            );
        }
        crate::console::note(&line);
    }
    let called = a.fail_on_regression && (slower > 0 || (a.strict && (cannot > 0 || lost > 0)));
    Ok(if called {
        crate::fail::exit::REGRESSION
    } else {
        crate::fail::exit::OK
    })
}

/// For the gate's line: "; the machine moved: …" where B's cases of a
/// placement moved as a whole beyond what the history's runs do (a row called
/// there may have moved with them), else "".
fn machine_moved(whole: &[compare::Whole]) -> String {
    let moved: Vec<String> = whole
        .iter()
        .filter(|w| w.beyond)
        .map(|w| {
            format!(
                "its cases {} ran {:.1}% {} as a whole",
                if w.across {
                    "across two CPUs"
                } else {
                    "on one CPU"
                },
                w.slower().abs() * 100.0,
                if w.slower() >= 0.0 {
                    "slower"
                } else {
                    "faster"
                }
            )
        })
        .collect();
    if moved.is_empty() {
        String::new()
    } else {
        format!(
            "; B's machine moved: {}, beyond what the history's runs do (under the table)",
            moved.join(", ")
        )
    }
}

/// `--confirm C`: its id and run, where C is neither A nor B, of B's host,
/// kernel and CPU model (a run elsewhere says nothing of B's figures) and
/// measured after B.
fn confirming_run(
    store: &mut crate::store::Store,
    c: RunId,
    (ia, ib): (i64, i64),
    rb: &RunRecord,
) -> Result<(i64, RunRecord), Fail> {
    let (ic, rc) = load(store, c)?;
    if ic == ia || ic == ib {
        return Err(Fail::usage(format!(
            "--confirm {ic}: C must be a third run, measured after B (it is {})",
            if ic == ia { "A" } else { "B" }
        )));
    }
    if !compare::same_machine(rb, &rc) {
        return Err(Fail::usage(format!(
            "--confirm {ic}: run {ic} is of {} (Linux {}), B of {} (Linux {}): C must be measured \
             where B was, on the same kernel and CPU model",
            rc.machine.host(),
            rc.machine.kernel,
            rb.machine.host(),
            rb.machine.kernel
        )));
    }
    // A C from before B may predate the change B holds: it would undo a real
    // call (a gate passed by a mislabelled run).
    if rc.started_ms < rb.started_ms {
        return Err(Fail::usage(format!(
            "--confirm {ic}: run {ic} was measured before B (run {ib}): C must be measured after \
             B, so that a change in B is in C too"
        )));
    }
    Ok((ic, rc))
}

/// Run ids as a heading names them: `12`, or `12, 9, 8` for a baseline of several.
fn ids_shown(ids: &[i64]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A and up to `k − 1` complete runs of its host, kernel and CPU model before it
/// that measured a case of A (newest first, never B): the runs B is judged against.
fn baseline_of(
    store: &mut crate::store::Store,
    (ia, ra): (i64, RunRecord),
    (ib, ic): (i64, Option<i64>),
    k: u16,
) -> (Vec<i64>, Vec<RunRecord>) {
    let mut ids = vec![ia];
    let mut runs = vec![ra];
    if k > 1 {
        if let Ok(mut listed) = store.list_runs() {
            listed.retain(|r| {
                r.id < ia
                    && r.id != ib
                    && Some(r.id) != ic
                    && r.complete
                    && r.hostname == runs[0].machine.host()
            });
            listed.sort_by_key(|r| std::cmp::Reverse(r.id));
            for r in listed {
                if runs.len() >= usize::from(k) {
                    break;
                }
                if let Ok(Some(rec)) = store.load_run(r.id) {
                    if compare::same_machine(&rec, &runs[0])
                        && compare::shares_a_case(&runs[0], &rec)
                    {
                        ids.push(r.id);
                        runs.push(rec);
                    }
                }
            }
        }
    }
    (ids, runs)
}

/// The newest 30 complete runs of B's host, kernel and CPU model but those
/// `left_out`: how much each case moves from run to run, what else those runs
/// say of each case (the traits its prior follows), and the runs themselves.
fn earlier_runs(
    store: &mut crate::store::Store,
    left_out: &[i64],
    rb: &RunRecord,
) -> (
    compare::History,
    compare::moderated::CaseTraits,
    Vec<RunRecord>,
) {
    let Ok(mut runs) = store.list_runs() else {
        return Default::default();
    };
    runs.retain(|r| {
        !left_out.contains(&r.id)
            && r.complete
            && r.hostname == rb.machine.host()
            && r.kernel == rb.machine.kernel
    });
    runs.sort_by_key(|r| std::cmp::Reverse(r.id));
    let mut loaded: Vec<RunRecord> = runs
        .iter()
        .take(30)
        .filter_map(|r| store.load_run(r.id).ok().flatten())
        .filter(|r| compare::same_machine(r, rb))
        .collect();
    compare::keep_like(&mut loaded, rb);
    (
        compare::history_of(&loaded),
        compare::traits_of(&loaded),
        loaded,
    )
}
