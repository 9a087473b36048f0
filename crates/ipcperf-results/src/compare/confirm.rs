//! A call held only where a later run calls it again. Now and then one case in
//! one run lands far from all its others (`bench/verdicts/tails.sh`: on a
//! 2-vCPU VM a few of 1,440 case-runs beyond 4 units where Student's t expects
//! 0.6), and a test of a case against its own spread calls it at any level that
//! keeps the power a gate needs. Such a far figure does not come back in the
//! next run; a change does. So a gate that saw a call may measure once more
//! (run C, after B) and hold each call only where C, judged against the same A
//! by the same model, moves the same row the same way on its own: p ≤ 0.05 for
//! that one row (the family's choice was B's; C tests a row named before it
//! ran), its interval clear of 1 on B's side, and beyond the threshold.

use ipcperf_core::record::RunRecord;

use super::{fmt_p, is_case, key, shown, Row, Verdict, ALPHA};

/// What a confirming run did to the calls of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmed {
    /// The confirming run, as the heading names it.
    pub run: String,
    /// Calls that C made again.
    pub held: usize,
    /// Calls that C did not repeat, now unchanged.
    pub not_repeated: usize,
    /// Calls C could say nothing of (it did not measure the case, or the case
    /// failed there): they stand, unconfirmed.
    pub unmeasured: usize,
    /// C was measured by the comparison itself, its called cases at once
    /// (`compare --remeasure`), not a run the user measured (`--confirm C`).
    pub measured_now: bool,
}

/// Whether `again` (C's row) moves the way `called` (B's, a call) did, on its own.
fn repeats(called: &Row, again: &Row, min_change: f64) -> bool {
    let (Some(rb), Some(rc), Some(p), Some((lo, hi))) =
        (called.ratio, again.ratio, again.p, again.interval)
    else {
        return false;
    };
    let same_side = (rb > 1.0) == (rc > 1.0);
    let clear = if rc > 1.0 { lo > 1.0 } else { hi < 1.0 };
    let beyond = rc.ln().abs() > (1.0 + min_change).ln() + 1e-12;
    same_side && clear && beyond && p <= ALPHA
}

/// How the reason of a call that C did not repeat begins.
const UNDONE: &str = "called in B (";

/// Whether `r` is a call that a confirming run undid (its reason says so, and
/// is shown under the table as a call's is).
pub fn undone(r: &Row) -> bool {
    r.verdict == Verdict::Unchanged && r.why.starts_with(UNDONE)
}

/// `rows` (B against A) with each case called held only where `again` (C
/// against the same A, the same model) repeats it ([`repeats`]); the others are
/// unchanged, their reason saying what C showed. A call C can say nothing of (a
/// case it did not measure, or that failed there) stands, said unconfirmed: a
/// gate fails safe. The rows that only say why (parts, counters) are left as
/// they are: they are never gated.
pub fn confirm(rows: &mut [Row], again: &[Row], c_id: &str, min_change: f64) -> Confirmed {
    let mut out = Confirmed {
        run: c_id.to_string(),
        held: 0,
        not_repeated: 0,
        unmeasured: 0,
        measured_now: false,
    };
    for r in rows
        .iter_mut()
        .filter(|r| is_case(r) && matches!(r.verdict, Verdict::Faster | Verdict::Slower))
    {
        let c = again
            .iter()
            .find(|c| c.case == r.case && c.unit == r.unit)
            .and_then(|c| Some((c, c.ratio?, c.p?)));
        match c {
            None => {
                out.unmeasured += 1;
                r.why.push_str(&format!(
                    "; run {c_id} has no figure of it to hold the call to: it stands, unconfirmed"
                ));
            }
            Some((c, x, p)) if repeats(r, c, min_change) => {
                out.held += 1;
                r.why.push_str(&format!(
                    "; again in run {c_id} (C/A {x:.2}×, p = {})",
                    fmt_p(p)
                ));
            }
            Some((_, x, p)) => {
                out.not_repeated += 1;
                r.why = format!(
                    "{UNDONE}{}), but not again in run {c_id} (C/A {x:.2}×, p = {}): a figure \
                     of one run, not a change",
                    r.ratio.map_or("-".into(), |b| format!("B/A {b:.2}×")),
                    fmt_p(p)
                );
                r.verdict = Verdict::Unchanged;
            }
        }
    }
    out
}

/// The cases of `b` (their places in it) whose row `rows` (B against `a`)
/// called either way, a figure's own row or its p99's: what a gate measures
/// again to hold its calls to (`compare --remeasure`).
pub fn called_cases(rows: &[Row], a: &RunRecord, b: &RunRecord) -> Vec<usize> {
    let called: Vec<&str> = rows
        .iter()
        .filter(|r| is_case(r) && matches!(r.verdict, Verdict::Faster | Verdict::Slower))
        .map(|r| r.case.as_str())
        .collect();
    b.cases
        .iter()
        .enumerate()
        .filter(|(_, cb)| {
            let k = key(cb);
            a.cases.iter().find(|ca| key(ca) == k).is_some_and(|ca| {
                let name = shown(ca, cb);
                called.iter().any(|c| {
                    *c == name
                        || c.strip_prefix(name.as_str())
                            .is_some_and(|rest| rest.starts_with(" · "))
                })
            })
        })
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare_against, History};
    use ipcperf_core::mode::Mode;
    use ipcperf_core::record::RunRecord;

    /// A run of two stream cases whose series sit about `pipe` and `unix` MB/s.
    fn run(pipe: f64, unix: f64) -> RunRecord {
        let mut r = crate::testdata::run();
        let series = |m: f64| [m * 0.99, m, m * 1.01, m * 0.995, m * 1.005];
        r.cases = vec![
            crate::testdata::case("pipe", Mode::Processes, 64, "shared-l3", &series(pipe)),
            crate::testdata::case("unix", Mode::Processes, 64, "shared-l3", &series(unix)),
        ];
        r
    }

    /// A history of `n` runs of both cases, each moving ~1% from run to run.
    fn history(n: usize) -> History {
        let runs: Vec<RunRecord> = (0..n)
            .map(|i| {
                let wobble = 1.0 + 0.01 * ((i % 3) as f64 - 1.0);
                run(1000.0 * wobble, 2000.0 / wobble)
            })
            .collect();
        crate::compare::history_of(&runs)
    }

    /// B halves pipe and leaves unix: called. C halves pipe again: the call
    /// holds. C back at A's level: the call is undone, its reason says C's
    /// figure, and a row never called is left alone.
    #[test]
    fn a_call_stands_only_where_the_later_run_repeats_it() {
        let h = history(8);
        let a = run(1000.0, 2000.0);
        let b = run(500.0, 2000.0);
        let rows = compare_against(std::slice::from_ref(&a), &b, 0.05, &h);
        assert_eq!(rows[0].verdict, Verdict::Slower, "{}", rows[0].why);
        assert_eq!(rows[1].verdict, Verdict::Unchanged, "{}", rows[1].why);

        let mut held = rows.clone();
        let again = compare_against(std::slice::from_ref(&a), &run(520.0, 2000.0), 0.05, &h);
        let c = confirm(&mut held, &again, "9", 0.05);
        assert_eq!((c.held, c.not_repeated), (1, 0));
        assert_eq!(held[0].verdict, Verdict::Slower);
        assert!(
            held[0].why.contains("again in run 9 (C/A 0.52×"),
            "{}",
            held[0].why
        );

        let mut undone = rows.clone();
        let back = compare_against(std::slice::from_ref(&a), &run(1000.0, 2000.0), 0.05, &h);
        let c = confirm(&mut undone, &back, "9", 0.05);
        assert_eq!((c.held, c.not_repeated), (0, 1));
        assert_eq!(undone[0].verdict, Verdict::Unchanged);
        assert!(super::undone(&undone[0]) && !super::undone(&undone[1]));
        assert!(
            undone[0].why.contains("not again in run 9 (C/A 1.00×"),
            "{}",
            undone[0].why
        );
        assert_eq!(undone[1], rows[1]);
    }

    /// C moving the other way, or moving less than the threshold, repeats
    /// nothing; a C that did not measure the case leaves the call standing.
    #[test]
    fn the_other_way_a_small_move_or_no_figure_does_not_repeat_a_call() {
        let h = history(8);
        let a = run(1000.0, 2000.0);
        let rows = compare_against(std::slice::from_ref(&a), &run(500.0, 2000.0), 0.05, &h);
        for c_run in [run(2000.0, 2000.0), run(970.0, 2000.0)] {
            let again = compare_against(std::slice::from_ref(&a), &c_run, 0.05, &h);
            let mut r = rows.clone();
            assert_eq!(confirm(&mut r, &again, "9", 0.05).not_repeated, 1);
            assert_eq!(r[0].verdict, Verdict::Unchanged, "{}", r[0].why);
        }
        let mut r = rows.clone();
        let c = confirm(&mut r, &[], "9", 0.05);
        assert_eq!((c.held, c.not_repeated, c.unmeasured), (0, 0, 1));
        assert_eq!(r[0].verdict, Verdict::Slower);
        assert!(r[0].why.contains("it stands, unconfirmed"), "{}", r[0].why);
    }

    /// The cases a gate measures again are those called, either way, by
    /// their place in B, whatever order A holds them in; none where nothing
    /// was called.
    #[test]
    fn the_cases_measured_again_are_those_called() {
        let h = history(8);
        let a = run(1000.0, 2000.0);
        let mut b = run(1000.0, 4000.0);
        b.cases.reverse(); // unix first in B
        let rows = compare_against(std::slice::from_ref(&a), &b, 0.05, &h);
        assert_eq!(called_cases(&rows, &a, &b), vec![0]);
        let rows = compare_against(std::slice::from_ref(&a), &run(500.0, 4000.0), 0.05, &h);
        assert_eq!(called_cases(&rows, &a, &run(500.0, 4000.0)), vec![0, 1]);
        let same = run(1000.0, 2000.0);
        let rows = compare_against(std::slice::from_ref(&a), &same, 0.05, &h);
        assert!(called_cases(&rows, &a, &same).is_empty());
    }
}
