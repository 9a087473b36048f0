//! A comparison as text: the table (case, A, B, B/A, the verdict, the smallest
//! change each row could have called), the reasons under it, the summary, and
//! the records for JSON and CSV.

use ipcperf_core::record::RunRecord;

use super::names::{short, split_name};
use super::{fmt_value, History, Row, Verdict, HISTORY_RUNS};
use crate::export::view::{Table, View};

/// How many cases got faster, slower, did not change, and could not be judged.
pub fn summary(rows: &[Row]) -> String {
    // Cases only: `--explain`'s part rows are counted apart, at the end.
    let cases: Vec<&Row> = rows.iter().filter(|r| super::is_case(r)).collect();
    let n = |v: Verdict| cases.iter().filter(|r| r.verdict == v).count();
    let mut s = format!(
        "{} faster, {} slower, {} unchanged",
        n(Verdict::Faster),
        n(Verdict::Slower),
        n(Verdict::Unchanged)
    );
    if n(Verdict::CouldNotTell) > 0 {
        s.push_str(&format!(
            ", {} could not tell (too spread to call the threshold's change)",
            n(Verdict::CouldNotTell)
        ));
    }
    if n(Verdict::NoiseUnknown) > 0 {
        s.push_str(&format!(
            ", {} not judged (too few series)",
            n(Verdict::NoiseUnknown)
        ));
    }
    if n(Verdict::NotComparable) > 0 {
        s.push_str(&format!(
            ", {} not comparable (absent from or not run in one of them)",
            n(Verdict::NotComparable)
        ));
    }
    let (near, limited) = near_limit(rows);
    if limited > 0 {
        s.push_str(&format!(
            "; {near} of {limited} rows judged across runs could call within 1.5× of their limit"
        ));
    }
    let parts_changed = rows
        .iter()
        .filter(|r| r.unit == super::PART)
        .filter(|r| matches!(r.verdict, Verdict::Faster | Verdict::Slower))
        .count();
    if parts_changed > 0 {
        s.push_str(&format!("; {parts_changed} of the explained parts changed"));
    }
    let counters_changed = rows
        .iter()
        .filter(|r| super::is_counter(r))
        .filter(|r| matches!(r.verdict, Verdict::Faster | Verdict::Slower))
        .count();
    if counters_changed > 0 {
        s.push_str(&format!(
            "; {counters_changed} of the per-message counters changed"
        ));
    }
    s
}

/// Of the cases' rows that have a limit (judged against the history), how many
/// could call a change within 1.5× of it, and how many have one.
pub fn near_limit(rows: &[Row]) -> (usize, usize) {
    let limited: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| super::is_case(r))
        .filter_map(|r| Some((r.detectable?, r.limit?)))
        .collect();
    let near = limited
        .iter()
        .filter(|(could, limit)| *could <= 1.5 * limit * (1.0 + 1e-9))
        .count();
    (near, limited.len())
}

/// The rows as records for `--format json|csv`.
pub fn records(rows: &[Row]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "case": r.case,
                "unit": r.unit,
                "a": r.a,
                "b": r.b,
                "ratio_b_over_a": r.ratio,
                "interval_low": r.interval.map(|i| i.0),
                "interval_high": r.interval.map(|i| i.1),
                "p_value": r.p,
                "smallest_callable_change": r.detectable,
                "limit": r.limit,
                "run_to_run_sd": r.runs.map(|x| x.0),
                "baseline_runs": r.runs.map(|x| x.1),
                "change": match r.verdict {
                    Verdict::Faster => "faster",
                    Verdict::Slower => "slower",
                    Verdict::Unchanged => "unchanged",
                    Verdict::CouldNotTell => "could-not-tell",
                    Verdict::NoiseUnknown => "not-judged",
                    Verdict::NotComparable => "not-comparable",
                },
                "why": r.why,
            })
        })
        .collect()
}

/// "the idle state differs between A and B" where the machines' idle states
/// (cpuidle driver, states, latency request in force) differ.
pub fn idle_differs(a: &RunRecord, b: &RunRecord) -> Option<String> {
    let idle = |r: &RunRecord| r.machine.state.as_ref().and_then(|s| s.idle.clone());
    let (x, y) = (idle(a)?, idle(b)?);
    (x != y).then(|| {
        format!(
            "the idle state differs between A and B: A {}; B {}. A cross-CPU figure holds the \
             wake-ups from idle, so a change may be the idle state's, not the mechanism's",
            x.summary(),
            y.summary()
        )
    })
}

fn describe(label: &str, id: &str, r: &RunRecord) -> String {
    format!(
        "{label} = run {id} on {} (Linux {}, {} CPUs)",
        r.machine.hostname, r.machine.kernel, r.machine.cpus
    )
}

/// The comparison as a view for the table and markdown renderers.
pub fn view(a_id: &str, a: &RunRecord, b_id: &str, b: &RunRecord, min_change: f64) -> View {
    view_with(a_id, a, b_id, b, min_change, &History::new())
}

/// [`view`] with the history of earlier runs (see [`compare_with`]).
pub fn view_with(
    a_id: &str,
    a: &RunRecord,
    b_id: &str,
    b: &RunRecord,
    min_change: f64,
    history: &History,
) -> View {
    view_against(a_id, std::slice::from_ref(a), b_id, b, min_change, history)
}

/// [`view_with`] with several runs as A (see [`super::compare_against`]).
pub fn view_against(
    a_id: &str,
    baseline: &[RunRecord],
    b_id: &str,
    b: &RunRecord,
    min_change: f64,
    history: &History,
) -> View {
    view_against_model(
        a_id,
        baseline,
        b_id,
        b,
        min_change,
        &super::moderated::fit(history),
    )
}

/// [`view_against`] with the run-to-run model already fitted over the history.
pub fn view_against_model(
    a_id: &str,
    baseline: &[RunRecord],
    b_id: &str,
    b: &RunRecord,
    min_change: f64,
    model: &super::moderated::Model,
) -> View {
    let rows = super::compare_against_model(baseline, b, min_change, model);
    view_of_rows(a_id, baseline, b_id, b, min_change, model, (&rows, None))
}

/// [`view_against_model`] of rows already judged (`rows`), and where each call
/// was held to a later run's, what that run did ([`super::confirm`]).
pub fn view_of_rows(
    a_id: &str,
    baseline: &[RunRecord],
    b_id: &str,
    b: &RunRecord,
    min_change: f64,
    model: &super::moderated::Model,
    (rows, confirmed): (&[Row], Option<&super::Confirmed>),
) -> View {
    let a = &baseline[0];
    let plural = if baseline.len() > 1 {
        " = runs "
    } else {
        " = run "
    };
    // The rows judged against the history, not the cases the history holds (a B
    // that measured none of them was told "1 cases ... are judged").
    let judged_across = rows.iter().filter(|r| r.runs.is_some()).count();
    // A counter's row is fewer or more of it, not faster: "· switches/msg
    // 31.88 → 30.00 FASTER" read as if the switches had sped up.
    let mark = |v: Verdict, r: &Row| match v {
        Verdict::Faster if r.unit == super::SWITCHES => "FEWER",
        Verdict::Faster if r.unit == super::CPU_PER_MSG => "LESS",
        Verdict::Slower if super::is_counter(r) => "MORE",
        Verdict::Faster => "FASTER",
        Verdict::Slower => "SLOWER",
        Verdict::Unchanged => "",
        Verdict::CouldNotTell => "can't tell",
        Verdict::NoiseUnknown => "not judged",
        Verdict::NotComparable => "-",
    };
    let verbose = crate::console::verbose();
    let mut notes = vec![format!(
        "Cases are named by mechanism, mode, size and placement (payload touch unless named). \
         Each case is compared on its median over the series: MB/s for streams, the p50 and \
         p99 round trip for latency (each series' own; lower is faster), set/clear cycles/s for \
         sync (request/release where only the owner may release, and in a row of its own \
         beside set/clear). A \
         change is marked only when Welch's t-test on the logs of the two runs' series gives \
         p ≤ 0.05 with the chance of any false call held to 5% over all the rows compared \
         (Holm), the 95% bootstrap interval of B/A excludes 1, and B/A is beyond \
         {:.0}% either way; a p99 row also needs the two runs' p99 intervals, from the round \
         trips beyond each, to be apart. \"could call\": the smallest change the row would have marked had \
         B's every series moved by it (at least the threshold; ×N: N times faster or slower); a \
         row whose smallest is above the threshold could not tell, and is not counted unchanged.",
        min_change * 100.0
    )];
    notes.extend(idle_differs(a, b));
    notes.push(if judged_across == 0 {
        "Each verdict rests on one run each: earlier runs of the same cases on this host \
         (kernel, CPU model) in the history would say how much a figure moves from one run \
         to the next, which the series of one run cannot."
            .to_string()
    } else {
        let follows = |p: &super::moderated::Prior| match p.trend {
            Some(t) => format!(
                " or rather of its kind ({}: {:.0}% of the cases' scatter beyond chance \
                 explained)",
                trend_terms(&t),
                t.explained * 100.0
            ),
            None => String::new(),
        };
        let prior = match model.prior {
            Some(p) if p.d0.is_finite() => format!(
                ", each case's spread moderated toward the {:.1}% typical of the {} cases{}, \
                 {:.1} degrees of freedom borrowed (empirical Bayes, Smyth 2004)",
                p.s0_sq.sqrt() * 100.0,
                p.cases,
                follows(&p),
                p.d0
            ),
            Some(p) => format!(
                ", the {} cases' spreads no wider apart than chance{}: each judged by their \
                 common {:.1}% (empirical Bayes, Smyth 2004)",
                p.cases,
                follows(&p),
                p.s0_sq.sqrt() * 100.0
            ),
            None => format!(" (each case's own, from {HISTORY_RUNS} or more runs)"),
        };
        let against = if baseline.len() > 1 {
            format!(
                " B is judged against the mean of A's {} runs (geometric: the A column).",
                baseline.len()
            )
        } else {
            String::new()
        };
        format!(
            "{judged_across} case{} with earlier runs on this host (kernel, CPU model) in the \
             history {} judged against how much their median moves from run to run{prior}, \
             in place of their series' spread.{against} \"limit\": the smallest \
             change any test could call with that case's spread over these runs, \
             e^(z·sd·√(1 + 1/k)) − 1 (z at two-sided 0.05 over the rows compared, k runs as A).",
            if judged_across == 1 { "" } else { "s" },
            if judged_across == 1 { "is" } else { "are" },
        )
    });
    // The reasons: of every change and every row not judged (and, with -v, of
    // every row), under the table.
    let parts = rows.iter().filter(|r| r.unit == super::PART).count();
    let parts_judged = rows
        .iter()
        .filter(|r| r.unit == super::PART && r.verdict != Verdict::NoiseUnknown)
        .count();
    // A case in one run only is counted in one line (a B killed before its
    // first case gave 48 lines of "…: only in A"), unless -v.
    let mut only: Vec<(&str, usize)> = Vec::new();
    for r in rows {
        let changed = matches!(r.verdict, Verdict::Faster | Verdict::Slower);
        if !super::is_case(r) && !verbose && !changed {
            continue;
        }
        if !verbose && matches!(r.why.as_str(), "only in A" | "only in B") {
            match only.iter_mut().find(|(w, _)| *w == r.why) {
                Some((_, n)) => *n += 1,
                None => only.push((r.why.as_str(), 1)),
            }
            continue;
        }
        if verbose
            || !matches!(r.verdict, Verdict::Unchanged | Verdict::CouldNotTell)
            || super::confirm::undone(r)
        {
            notes.push(format!("{}: {}", short(&r.case), r.why));
        }
    }
    for (why, n) in only {
        notes.push(format!(
            "{n} case{} {why} (a \"-\" in the other's column; -v names each)",
            if n == 1 { "" } else { "s" },
        ));
    }
    if parts > 0 && !verbose {
        notes.push(if parts_judged == 0 {
            format!(
                "{parts} rows are the parts of explained cases (--explain: a round trip's, a \
                 block's per side): one traced series each, so each change is shown, not \
                 judged (--repeat traces more)"
            )
        } else {
            format!(
                "{parts} rows are the parts of explained cases (--explain: a round trip's, a \
                 block's per side), {parts_judged} judged on their traced series' medians as a \
                 case is on its series (a family of their own: judging them never makes a case \
                 harder to call)"
            )
        });
    }
    let cannot = rows
        .iter()
        .filter(|r| r.verdict == Verdict::CouldNotTell)
        .count();
    if cannot > 0 && !verbose {
        // The summary counts cases; say which of these rows are theirs.
        let count = |f: &dyn Fn(&Row) -> bool| {
            rows.iter()
                .filter(|r| r.verdict == Verdict::CouldNotTell && f(r))
                .count()
        };
        let (cases, counters) = (count(&super::is_case), count(&super::is_counter));
        let mut whose: Vec<String> = Vec::new();
        if cases < cannot {
            whose.push(format!("{cases} of cases' figures"));
            if counters > 0 {
                whose.push(format!("{counters} of per-message counters"));
            }
            let parts = cannot - cases - counters;
            if parts > 0 {
                whose.push(format!("{parts} of explained parts"));
            }
        }
        notes.push(format!(
            "{cannot} row{} could not tell a {:.0}% change{}: their series are too spread or \
             too few (more with --repeat; -v gives every row's reason)",
            if cannot == 1 { "" } else { "s" },
            min_change * 100.0,
            if whose.is_empty() {
                String::new()
            } else {
                format!(" ({})", whose.join(", "))
            }
        ));
    }
    if let Some(c) = confirmed {
        notes.push(format!(
            "Each call was held to run {}, {}: it stands only where that run, \
             judged against the same A, moves the same row the same way on its own (p ≤ 0.05 \
             for that row, beyond {:.0}%): {} held, {} not repeated (a figure of one run, \
             not a change){}.",
            c.run,
            if c.measured_now {
                "its cases measured again at once (--remeasure)"
            } else {
                "measured after B"
            },
            min_change * 100.0,
            c.held,
            c.not_repeated,
            if c.unmeasured > 0 {
                format!(
                    ", {} standing unconfirmed (that run has no figure of them)",
                    c.unmeasured
                )
            } else {
                String::new()
            }
        ));
    }
    notes.push(summary(rows));
    let mut table = Table {
        title: format!(
            "{}; {}",
            describe("A", a_id, a).replacen(" = run ", plural, 1),
            describe("B", b_id, b)
        ),
        header: ["case", "A", "B", "B/A", "change", "could call", "limit"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows: rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let opt = |v: Option<f64>| {
                    v.map(|x| fmt_value(r.unit, x))
                        .unwrap_or_else(|| "-".into())
                };
                vec![
                    under_its_case(rows, i),
                    opt(r.a),
                    opt(r.b),
                    r.ratio
                        .map(|x| format!("{x:.2}×"))
                        .unwrap_or_else(|| "-".into()),
                    mark(r.verdict, r).to_string(),
                    r.detectable
                        .map_or_else(|| "-".into(), super::names::fmt_change),
                    r.limit.map_or_else(|| "-".into(), super::names::fmt_change),
                ]
            })
            .collect(),
        notes,
    };
    // A limit needs earlier runs of the host; where no row has one, its column
    // of dashes only pushes the table past the terminal (JSON and CSV keep it).
    if rows.iter().all(|r| r.limit.is_none()) {
        table.header.pop();
        for r in &mut table.rows {
            r.pop();
        }
    }
    let heading = format!(
        "Comparing {}{a_id}{} with run {b_id}{}{}: {}",
        plural.trim_start_matches(" = "),
        named(a),
        named(b),
        confirmed
            .map(|c| format!(", calls held to run {}", c.run))
            .unwrap_or_default(),
        summary(rows)
    );
    match by_group(&table) {
        // One table a mechanism and mode (as `run` shows them), under the
        // heading and what A and B are.
        Some(tables) => View {
            heading: format!("{heading}\n\n{}", table.title),
            tables,
        },
        None => View {
            heading,
            tables: vec![table],
        },
    }
}

/// `t`'s rows as one table a mechanism and mode (`pipe · processes`), each row
/// named by what follows (`64 B same-cpu 0→0`), the notes under the last: a
/// row's name is then short enough to read in one or two lines at 80 columns
/// (a whole case name in a column of 14 took four to six). None where a row's
/// name has no block size to split at, or a group comes back after another
/// (rows are never reordered).
fn by_group(t: &Table) -> Option<Vec<Table>> {
    let mut tables: Vec<Table> = Vec::new();
    for r in &t.rows {
        let name = r.first()?;
        let (group, rest) = match name.strip_prefix("  · ") {
            // A counter's or a part's row, under its case in its group.
            Some(_) => (tables.last()?.title.clone(), name.trim_start().to_string()),
            None => split_name(name)?,
        };
        if tables.last().is_none_or(|g| g.title != group) {
            if tables.iter().any(|g| g.title == group) {
                return None;
            }
            tables.push(Table {
                title: group,
                header: t.header.clone(),
                rows: Vec::new(),
                notes: Vec::new(),
            });
        }
        let mut row = r.clone();
        row[0] = rest;
        tables.last_mut()?.rows.push(row);
    }
    tables.last_mut()?.notes = t.notes.clone();
    Some(tables)
}

/// Row `i`'s name in the table: a counter's or a part's row right under its
/// case's (or under another of that case's) is `· switches/msg`, the case
/// named once above it (two thirds of a default suite's rows repeated their
/// case's whole name: 712 lines at 80 columns); anywhere else, its whole short
/// name. JSON and CSV keep every row's whole name.
fn under_its_case(rows: &[Row], i: usize) -> String {
    let case = &rows[i].case;
    // Its case is a few rows up at most (a p99's, two counters', the parts').
    for j in (i.saturating_sub(32)..i).rev() {
        let mine = format!("{} · ", rows[j].case);
        if let Some(what) = case.strip_prefix(&mine) {
            if rows[j + 1..i].iter().all(|r| r.case.starts_with(&mine)) {
                return format!("  · {what}");
            }
        }
    }
    short(case)
}

/// A run's label in a heading: ` (baseline)`, or nothing.
fn named(r: &RunRecord) -> String {
    r.label
        .as_ref()
        .map(|l| format!(" ({l})"))
        .unwrap_or_default()
}

/// The covariates a prior's spread follows, in words: "two CPUs ×1.8, the
/// series' scatter ^0.6" (the factor on the spread, not the variance).
fn trend_terms(t: &super::moderated::Trend) -> String {
    let mut terms = Vec::new();
    if t.across != 0.0 {
        terms.push(format!("two CPUs ×{:.2}", (t.across / 2.0).exp()));
    }
    if t.within != 0.0 {
        terms.push(format!(
            "the series' own scatter to the power {:.2}",
            t.within
        ));
    }
    terms.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::DEFAULT_MIN_CHANGE;
    use crate::testdata;

    /// The table is one a mechanism and mode, each row named by what follows
    /// (its size and placement), a p99's row `· p99` under its case: at 80
    /// columns no row takes more than two lines (the whole name, "pipe processes
    /// 64 KiB cross-cpu 0→1" in a column of 14, took four).
    #[test]
    fn the_table_is_one_a_mechanism_and_mode_with_short_row_names() {
        let a = testdata::run();
        let mut b = testdata::run();
        for c in b.cases.iter_mut().filter(|c| c.mechanism == "unix") {
            for s in &mut c.series {
                s.bytes *= 2;
            }
            c.summarize();
        }
        let v = view("1", &a, "2", &b, DEFAULT_MIN_CHANGE);
        let titles: Vec<&str> = v.tables.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(
            titles[..3],
            ["pipe · processes", "unix · processes", "tcp · processes"],
            "{titles:?}"
        );
        assert!(v.heading.contains("A = run 1") && v.heading.contains("B = run 2"));
        for t in &v.tables {
            for r in &t.rows {
                assert!(
                    r[0].chars().next().is_some_and(|c| c.is_ascii_digit()),
                    "{}: {r:?}",
                    t.title
                );
            }
            let (c, _) = crate::export::table::fit(t, Some(80));
            let text = c.to_string();
            assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
            // Header (one line) and three borders, then two lines a row at most.
            assert!(text.lines().count() <= 4 + 2 * t.rows.len(), "{text}");
        }
        assert!(v.tables.last().is_some_and(|t| !t.notes.is_empty()));
        assert!(v.tables[..v.tables.len() - 1]
            .iter()
            .all(|t| t.notes.is_empty()));

        // A round trip's p99 row sits under its case, named by its figure.
        let mut a = testdata::run();
        a.cases.retain(|c| c.mechanism == "unix");
        a.cases.truncate(1);
        let mut c = testdata::paced_case("unix", 1000, 1000.0, 10_000, 20_000, 30_000);
        let l = c.latency.as_mut().unwrap();
        l.series_p50_ns = vec![9_800, 9_900, 10_000, 10_100, 10_200];
        l.series_p99_ns = vec![19_800, 19_900, 20_000, 20_100, 20_200];
        a.cases = vec![c];
        let v = view("1", &a, "2", &a.clone(), DEFAULT_MIN_CHANGE);
        let names: Vec<&str> = v.tables[0].rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(v.tables[0].title, "unix · processes");
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(names[1], "· p99", "{names:?}");
    }
    /// A counter's figure below 0.1 µs keeps its digits (a memcpy's CPU time a
    /// message read "0.00 µs" on both sides of 1.00×), and a counter at 0 in
    /// a series, shown and not judged, says so in words (it read "?").
    #[test]
    fn tiny_counters_keep_their_digits_and_unjudged_rows_say_so() {
        let mut a = testdata::run();
        a.cases.truncate(1);
        for (i, s) in a.cases[0].series.iter_mut().enumerate() {
            s.blocks = 1_000_000;
            s.writer_cpu_ns = 2_100_000 + 10_000 * i as u64;
            s.reader_cpu_ns = None;
            s.writer_counts = Some(Default::default());
            s.reader_counts = None;
        }
        let v = view("1", &a, "2", &a.clone(), DEFAULT_MIN_CHANGE);
        let rows = &v.tables[0].rows;
        let row = |name: &str| rows.iter().find(|r| r[0] == name).cloned();
        let cpu = row("· CPU µs/msg").expect("a CPU row");
        assert!(
            cpu[1].starts_with("0.002") && cpu[1].ends_with(" µs"),
            "{cpu:?}"
        );
        let sw = row("· switches/msg").expect("a switches row");
        assert_eq!(
            (sw[1].as_str(), sw[4].as_str()),
            ("0", "not judged"),
            "{sw:?}"
        );
        // A large one to four digits at most: "2326.55 µs" (a 1 MiB block's)
        // widened both figure columns and wrapped every case at 80 columns.
        for s in a.cases[0].series.iter_mut() {
            s.blocks = 1_000;
            s.writer_cpu_ns = 2_326_550;
        }
        let v = view("1", &a, "2", &a.clone(), DEFAULT_MIN_CHANGE);
        let rows = &v.tables[0].rows;
        let cpu = rows.iter().find(|r| r[0] == "· CPU µs/msg").unwrap();
        assert_eq!(cpu[1], "2.33 µs", "{cpu:?}");
        for s in a.cases[0].series.iter_mut() {
            s.blocks = 1;
        }
        let v = view("1", &a, "2", &a.clone(), DEFAULT_MIN_CHANGE);
        let rows = &v.tables[0].rows;
        let cpu = rows.iter().find(|r| r[0] == "· CPU µs/msg").unwrap();
        assert_eq!(cpu[1], "2327 µs", "{cpu:?}");
    }
}
