//! The pieces every view is made of: a titled table of strings, a view (a heading
//! and tables), and the names a case is shown by. The views (`view`, `latency`,
//! `pairs`, `sync`) and the renderers (`table`, `markdown`) all build on these.

use ipcperf_core::record::CaseRecord;

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

/// A case's mechanism, with its way of waiting where it has a choice (shm's
/// wake-ups measured side by side would otherwise look alike), and io_uring's
/// registered buffers.
pub fn mechanism_label(c: &CaseRecord) -> String {
    if c.options.get("buffers").is_some_and(|v| v == "registered") {
        return match c.wait.as_str() {
            "" => format!("{} (fixed buffers)", c.mechanism),
            w => format!("{} ({w}, fixed buffers)", c.mechanism),
        };
    }
    if let Some(p) = c.options.get("pattern") {
        return match c.wait.as_str() {
            "" => format!("{} ({p})", c.mechanism),
            w => format!("{} ({w}, {p})", c.mechanism),
        };
    }
    let zero_copy = c.options.get("zero_copy").is_some_and(|v| v == "true");
    match (c.wait.as_str(), zero_copy) {
        ("" | "block" | "poll", false) => c.mechanism.clone(),
        ("" | "block" | "poll", true) => format!("{} (zero-copy)", c.mechanism),
        (w, false) => format!("{} ({w})", c.mechanism),
        (w, true) => format!("{} ({w}, zero-copy)", c.mechanism),
    }
}

/// The flag of a spinning wait whose two sides shared one CPU: each spins out
/// its time slice before the other runs, so the figure is the scheduler's, not
/// the mechanism's (None: not that case).
pub fn spin_on_one_cpu(c: &CaseRecord) -> Option<String> {
    let p = &c.placement;
    let one = matches!((p.writer_cpu, p.reader_cpu), (Some(w), Some(r)) if w == r);
    (one && c.mode != ipcperf_core::mode::Mode::Single
        && matches!(c.wait.as_str(), "spin" | "busy-poll"))
    .then(|| {
        format!(
            "{} on one CPU: each side spins out its time slice before the other runs, so \
                 this is the scheduler's figure; a spinning wait needs a CPU per side",
            mechanism_label(c)
        )
    })
}
