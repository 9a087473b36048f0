//! The pieces every view is made of: a titled table of strings, a view (a heading
//! and tables), and the names a case is shown by. The views (`view`, `latency`,
//! `pairs`, `sync`) and the renderers (`table`, `markdown`) all build on these.

use ipcperf_core::latency::{Beyond, FEW_BEYOND};
use ipcperf_core::record::{CaseRecord, CaseStatus};

/// A titled table of strings.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// Everything a person reads about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub heading: String,
    pub tables: Vec<Table>,
}

impl Table {
    /// The columns `at` (by index) whose cell every row holds alike, said once
    /// at the end of the title (" · processes · shared-l3 0→1") and left out of
    /// the header and every row; only where two rows or more repeat it. At 80
    /// columns a mode and placement repeated on every row pushed the figures
    /// out (p90, mean, max left out) and broke "shared-l3" over "0→1".
    pub fn say_shared_once(&mut self, at: &[usize]) {
        let Some(first) = self.rows.first().cloned() else {
            return;
        };
        if self.rows.len() < 2 {
            return;
        }
        let mut gone: Vec<usize> = at
            .iter()
            .copied()
            .filter(|&i| {
                i < first.len()
                    && !first[i].is_empty()
                    && self.rows.iter().all(|r| r.get(i) == Some(&first[i]))
            })
            .collect();
        for &i in &gone {
            self.title.push_str(&format!(" · {}", first[i]));
        }
        gone.sort_unstable();
        for &i in gone.iter().rev() {
            self.header.remove(i);
            for r in &mut self.rows {
                r.remove(i);
            }
        }
    }
}

/// A case of a one-sided reference (null, memcpy: bytes moved, no IPC): named
/// beside rankings of two-sided mechanisms, never ranked in them.
pub fn one_sided(c: &CaseRecord) -> bool {
    ipcperf_core::mechanism::MechanismKind::from_name(&c.mechanism).is_some_and(|k| k.info().solo)
}

/// A case's mechanism, with its way of waiting where it has a choice (shm's
/// wake-ups measured side by side would otherwise look alike), and io_uring's
/// registered buffers. The uring-* mechanisms wait in io_uring and only there:
/// "uring-pipe (io_uring)" said it twice (and wrapped at 80 columns).
pub fn mechanism_label(c: &CaseRecord) -> String {
    let wait = match c.wait.as_str() {
        "io_uring" if c.mechanism.starts_with("uring-") => "",
        w => w,
    };
    if c.options.get("buffers").is_some_and(|v| v == "registered") {
        return match wait {
            "" => format!("{} (fixed buffers)", c.mechanism),
            w => format!("{} ({w}, fixed buffers)", c.mechanism),
        };
    }
    if let Some(p) = c.options.get("pattern") {
        return match wait {
            "" => format!("{} ({p})", c.mechanism),
            w => format!("{} ({w}, {p})", c.mechanism),
        };
    }
    let zero_copy = c.options.get("zero_copy").is_some_and(|v| v == "true");
    match (wait, zero_copy) {
        ("" | "block", false) => c.mechanism.clone(),
        ("" | "block", true) => format!("{} (zero-copy)", c.mechanism),
        (w, false) => format!("{} ({w})", c.mechanism),
        (w, true) => format!("{} ({w}, zero-copy)", c.mechanism),
    }
}

/// Whether some of `cases` were held at an idle state (`--idle`) and others
/// not: advise measures each cross-CPU candidate again at polling idle, and
/// the two read as one placement twice unless the place says which.
pub fn idle_mixed<'a>(cases: impl IntoIterator<Item = &'a CaseRecord> + Clone) -> bool {
    let held = |c: &CaseRecord| c.options.contains_key("idle");
    cases.clone().into_iter().any(held) && !cases.into_iter().all(held)
}

/// Where a case ran, as a column or row says it: its placement, and where the
/// cases beside it were held at different idle states (`mixed`, see
/// [`idle_mixed`]) the idle it was held at ("shared-l3 0→1 idle=poll").
pub fn place(c: &CaseRecord, mixed: bool) -> String {
    match c.options.get("idle").filter(|_| mixed) {
        Some(idle) => format!("{} idle={idle}", c.placement.shown()),
        None => c.placement.shown(),
    }
}

/// Cases named in a note ("pipe 512 B shared-l3 0→1, …"); where they are
/// every row measured at a placement (three or more, or all but up to four of
/// three times as many), that placement once ("every row at shared-l3 0→1 but
/// udp 512 B"): the default latency suite's noisy note named 16 of its 17
/// cross-CPU rows, 12 lines of them, and 13 of them another day, 8 lines.
/// `short`: a case's name short of its place ("pipe 512 B", "pipe 512 B at
/// 5.0k/s").
pub fn name_cases(
    listed: &[&CaseRecord],
    all: &[&CaseRecord],
    mixed: bool,
    short: impl Fn(&CaseRecord) -> String,
) -> String {
    let is_listed = |c: &CaseRecord| listed.iter().any(|l| std::ptr::eq(*l, c));
    let mut out: Vec<String> = Vec::new();
    let mut whole: Vec<String> = Vec::new();
    for c in listed {
        let p = place(c, mixed);
        let at: Vec<&&CaseRecord> = all
            .iter()
            .filter(|x| x.status == CaseStatus::Ok && place(x, mixed) == p)
            .collect();
        let missing: Vec<String> = at
            .iter()
            .filter(|x| !is_listed(x))
            .map(|x| short(x))
            .collect();
        let n = at.len() - missing.len();
        if n >= 3 && missing.len() <= 4 && n >= 3 * missing.len() {
            if !whole.contains(&p) {
                out.push(match missing.split_last() {
                    None => format!("every row at {p}"),
                    Some((last, [])) => format!("every row at {p} but {last}"),
                    Some((last, rest)) => {
                        format!("every row at {p} but {} and {last}", rest.join(", "))
                    }
                });
                whole.push(p);
            }
        } else {
            out.push(format!("{} {p}", short(c)));
        }
    }
    out.join(", ")
}

/// Whether `c` waits by spinning with both its sides on one CPU: each spins
/// out its time slice before the other runs.
fn spins_on_one_cpu(c: &CaseRecord) -> bool {
    let p = &c.placement;
    let (client, server) = c.wait.split_once('/').unwrap_or((&c.wait, &c.wait));
    let one = matches!((p.writer_cpu, p.reader_cpu), (Some(w), Some(r)) if w == r);
    one && c.mode != ipcperf_core::mode::Mode::Single && (spins(client) || spins(server))
}

fn spins(w: &str) -> bool {
    matches!(w, "spin" | "busy-poll" | "busy")
}

/// What [`spin_on_one_cpu`] says of `names` (one case, or several of a table).
fn one_cpu_line(names: &[String]) -> String {
    let (these, figure) = if names.len() > 1 {
        ("these are", "figures")
    } else {
        ("this is", "figure")
    };
    format!(
        "{} on one CPU: each side spins out its time slice before the other runs, so {these} \
         the scheduler's {figure}; a spinning wait needs a CPU per side",
        names.join(", ")
    )
}

/// The flag of a spinning wait whose two sides shared one CPU: each spins out
/// its time slice before the other runs, so the figure is the scheduler's, not
/// the mechanism's (None: not that case).
pub fn spin_on_one_cpu(c: &CaseRecord) -> Option<String> {
    if spins_on_one_cpu(c) {
        return Some(one_cpu_line(&[mechanism_label(c)]));
    }
    // Fan-in's clients all sit on the placement's first CPU.
    let clients = c.pairs.as_ref().filter(|r| r.fan_in).map_or(1, |r| r.count);
    let client = c.wait.split_once('/').map_or(c.wait.as_str(), |w| w.0);
    (clients > 1 && spins(client)).then(|| {
        format!(
            "{}: its {clients} clients spin on one CPU ({}), each spinning out its time slice \
             while the others wait, so its tail is the scheduler's; spinning clients need a CPU \
             each",
            mechanism_label(c),
            c.placement.writer_cpu.map_or("-".into(), |w| w.to_string())
        )
    })
}

/// [`spin_on_one_cpu`]'s notes for cases shown together: those whose sides
/// shared a CPU in one line, their names together (a latency table of every
/// mechanism said the same line eight times), a fan-in's each its own.
pub fn spin_notes<'a>(cases: impl IntoIterator<Item = &'a CaseRecord>) -> Vec<String> {
    let (mut one, mut out) = (Vec::<String>::new(), Vec::new());
    for c in cases {
        if spins_on_one_cpu(c) {
            let name = mechanism_label(c);
            if !one.contains(&name) {
                one.push(name);
            }
        } else if let Some(n) = spin_on_one_cpu(c).filter(|n| !out.contains(n)) {
            out.push(n);
        }
    }
    if !one.is_empty() {
        out.insert(0, one_cpu_line(&one));
    }
    out
}

/// Nanoseconds as microseconds: 3 significant figures or more.
pub fn fmt_us(ns: f64) -> String {
    let us = ns / 1e3;
    if us >= 100.0 {
        format!("{us:.0}")
    } else if us >= 10.0 {
        format!("{us:.1}")
    } else {
        // Under 0.1 µs with its significant digits, a true zero "0": an
        // explained part of 3 ns read "0.00".
        crate::units::fmt_small(us)
    }
}

/// The mark on a tail figure with fewer than [`FEW_BEYOND`] samples beyond it.
pub const FEW_MARK: &str = "†";

/// The samples beyond each percentile over a table's rows: each tail cell is
/// marked where it rests on fewer than [`FEW_BEYOND`], and one note under the
/// table gives every column's counts (fewest–most over the rows).
#[derive(Debug, Default)]
pub struct TailCounts {
    /// (column, fewest, most) in the order first seen.
    seen: Vec<(&'static str, u64, u64)>,
    marked: bool,
}

impl TailCounts {
    /// `text`, the figure of percentile `name` (`p99.9`), marked where `beyond`
    /// holds fewer than [`FEW_BEYOND`] samples beyond it; the count is kept for
    /// the note. A figure with no count (a record saved before counts were
    /// kept) is left as it is.
    pub fn cell(&mut self, name: &'static str, text: String, beyond: Option<&Beyond>) -> String {
        let Some(n) = beyond.and_then(|b| b.at(name)) else {
            return text;
        };
        match self.seen.iter_mut().find(|(c, _, _)| *c == name) {
            Some((_, lo, hi)) => {
                *lo = (*lo).min(n);
                *hi = (*hi).max(n);
            }
            None => self.seen.push((name, n, n)),
        }
        if n < FEW_BEYOND {
            self.marked = true;
            format!("{text}{FEW_MARK}")
        } else {
            text
        }
    }

    /// The note: `samples beyond each percentile: p50 9000, …; † …` (None where
    /// no figure had a count). `what` names the samples (round trips, cycles).
    pub fn note(&self, what: &str) -> Option<String> {
        if self.seen.is_empty() {
            return None;
        }
        let counts: Vec<String> = self
            .seen
            .iter()
            .map(|&(c, lo, hi)| {
                if lo == hi {
                    format!("{c} {lo}")
                } else {
                    format!("{c} {lo}–{hi}")
                }
            })
            .collect();
        let mut s = format!("{what} beyond each percentile: {}", counts.join(", "));
        if self.seen.iter().any(|&(_, lo, hi)| lo != hi) {
            s.push_str(" (fewest–most over the rows)");
        }
        if self.marked {
            s.push_str(&format!(
                "; {FEW_MARK} fewer than {FEW_BEYOND} beyond: that figure rests on those few \
                 {what}, run longer for a firm one"
            ));
        }
        Some(s)
    }
}

/// A count per message: two decimals below 10 ("1.98"), two significant figures
/// below 0.1 ("0.00021", never "0.00" for a count that is not zero), one above 10.
fn per_msg(v: f64) -> String {
    if v < 10.0 {
        crate::units::fmt_small(v)
    } else {
        format!("{v:.1}")
    }
}

/// Whether any of `cases` was counted (its series carry each side's counters):
/// the tables add their per-message columns only then.
pub fn counted(cases: &[&CaseRecord]) -> bool {
    cases.iter().any(|c| c.is_ok() && c.per_message().is_some())
}

/// Context switches per message (block, round trip), both sides together
/// ("2.00"); with -v each side ("1.00+1.00": writer or client first); "-"
/// where not counted.
pub fn switches_cell(c: &CaseRecord) -> String {
    match c.per_message().filter(|_| c.is_ok()) {
        None => "-".into(),
        Some(p) => match p.reader_switches.filter(|_| crate::console::verbose()) {
            Some(r) => format!("{}+{}", per_msg(p.writer_switches), per_msg(r)),
            None => per_msg(p.switches()),
        },
    }
}

/// CPU time per message in µs, both sides together; with -v each side.
pub fn cpu_cell(c: &CaseRecord) -> String {
    match c.per_message().filter(|_| c.is_ok()) {
        None => "-".into(),
        Some(p) => match p.reader_cpu_ns.filter(|_| crate::console::verbose()) {
            Some(r) => format!("{}+{}", per_msg(p.writer_cpu_ns / 1e3), per_msg(r / 1e3)),
            None => per_msg(p.cpu_ns() / 1e3),
        },
    }
}

/// The note under a table with per-message columns.
pub const COUNTERS_NOTE: &str = "switches/msg: context switches per message (block or round \
     trip), both sides together; CPU µs/msg: their CPU time per message; from the kernel's \
     own accounting over each series, the median of the series (-v: writer or client + reader \
     or server; JSON and CSV: every counter)";

/// The note under a stream table with its per-message column.
pub const STREAM_COUNTERS_NOTE: &str = "switches/msg: context switches per block, writer and \
     reader together, from the kernel's own accounting over each series (median of the series; \
     -v: writer + reader; JSON and CSV: every counter)";

/// One line for what perf could not count in this run, and why (no PMU, not
/// allowed), from its machine state; None where everything was counted or the
/// run predates the counters.
pub fn not_counted_note(run: &ipcperf_core::record::RunRecord) -> Option<String> {
    let lines = &run.machine.state.as_ref()?.perf_not_counted;
    (!lines.is_empty()).then(|| format!("perf: {}", lines.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tail figure is marked only under ten samples beyond it, and the note
    /// gives every column's counts.
    #[test]
    fn tail_figures_carry_their_counts() {
        let b = |p99, p999| Beyond {
            p50: 900,
            p90: 180,
            p99,
            p999,
            p9999: 0,
        };
        let mut t = TailCounts::default();
        assert_eq!(t.cell("p99", "4.00".into(), Some(&b(18, 9))), "4.00");
        assert_eq!(t.cell("p99.9", "9.00".into(), Some(&b(18, 9))), "9.00†");
        assert_eq!(t.cell("p99.9", "8.00".into(), Some(&b(36, 10))), "8.00");
        assert_eq!(t.cell("p99", "3.00".into(), Some(&b(36, 10))), "3.00");
        assert_eq!(t.cell("p99", "3.00".into(), None), "3.00");
        let note = t.note("round trips").unwrap();
        assert!(note.starts_with("round trips beyond each percentile: p99 18–36, p99.9 9–10"));
        assert!(note.contains("† fewer than 10 beyond"), "{note}");
        let mut none = TailCounts::default();
        none.cell("p99", "1".into(), None);
        assert_eq!(none.note("cycles"), None);
        let mut firm = TailCounts::default();
        firm.cell("p50", "1".into(), Some(&b(18, 10)));
        assert_eq!(
            firm.note("cycles").unwrap(),
            "cycles beyond each percentile: p50 900"
        );
    }

    /// Microseconds keep three significant figures down to a few nanoseconds,
    /// and only a true zero is "0" (an explained part of 3 ns read "0.00").
    #[test]
    fn microseconds_never_read_zero_for_a_figure() {
        assert_eq!(fmt_us(0.0), "0");
        assert_eq!(fmt_us(3.0), "0.0030");
        assert_eq!(fmt_us(47.0), "0.047");
        assert_eq!(fmt_us(730.0), "0.73");
        assert_eq!(fmt_us(1234.0), "1.23");
        assert_eq!(fmt_us(15_500.0), "15.5");
        assert_eq!(fmt_us(149_600.0), "150");
    }

    /// A way of waiting is named where the mechanism has a choice, not where
    /// its name says it (the uring-* mechanisms wait in io_uring only).
    #[test]
    fn a_label_names_the_wait_only_where_there_is_a_choice() {
        let mut c = crate::testdata::case(
            "uring-pipe",
            ipcperf_core::mode::Mode::Processes,
            512,
            "same-cpu",
            &[1.0],
        );
        let label = |c: &CaseRecord, wait: &str| {
            let mut c = c.clone();
            c.wait = wait.into();
            mechanism_label(&c)
        };
        assert_eq!(label(&c, "io_uring"), "uring-pipe");
        c.options.insert("buffers".into(), "registered".into());
        assert_eq!(label(&c, "io_uring"), "uring-pipe (fixed buffers)");
        c.mechanism = "shm".into();
        c.options.clear();
        assert_eq!(label(&c, "futex"), "shm (futex)");
        c.mechanism = "pipe".into();
        assert_eq!(label(&c, "block"), "pipe");
        assert_eq!(label(&c, "epoll"), "pipe (epoll)");
    }
}
