//! The answer's ranking as a table, and the tie rule that marks its rows.

use super::{fmt_figure, streams, Answer, Ask, Figure, Pattern, Row};

/// The name of the figure ranked, as a column header says it.
pub(super) fn figure_column(ask: &Ask) -> String {
    match ask.pattern {
        Pattern::Stream => "MB/s".to_string(),
        Pattern::FanOut => "slowest reader".to_string(),
        _ => ask.figure.name().to_string(),
    }
}

/// The ranked rows as a table (rank, figure at the worst placement, its series'
/// range, that placement, CPUs busy), titled `title`: six narrow columns, so it
/// fits 80 columns; what qualifies a row (Linux only, a CPU budget) and the
/// ceilings are notes under it.
pub fn ranked_table(ans: &Answer, ask: &Ask, title: String) -> crate::export::view::Table {
    let fig = figure_column(ask);
    let mut tails = crate::export::cells::TailCounts::default();
    let groups = tie_groups(&ans.ranked);
    let rows = ans
        .ranked
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let tie = i > 0 && groups[i] == groups[i - 1];
            let value = fmt_figure(r.value, ask);
            // A percentile carries the round trips beyond it (not a rate or MB/s).
            let value = match ask.figure {
                Figure::Rate => value,
                _ if streams(ask.pattern) => value,
                f => tails.cell(f.name(), value, r.beyond.as_ref()),
            };
            vec![
                if tie {
                    format!("{} =", i + 1)
                } else {
                    (i + 1).to_string()
                },
                r.name.clone(),
                value,
                range(fmt_figure(r.low, ask), fmt_figure(r.high, ask)),
                r.placement.clone(),
                format!("{:.2}", r.cpu_load),
            ]
        })
        .collect();
    let places = ans
        .ranked
        .iter()
        .map(|r| r.by_placement.len())
        .max()
        .unwrap_or(1);
    crate::export::view::Table {
        title,
        header: ["rank", "mechanism", &fig, "range", "worst at", "CPUs busy"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
        rows,
        notes: [
            "\"=\": a tie with the rows above it down to the last plain rank (its series' range \
             overlaps every one of theirs; ties do not chain)"
                .into(),
            if places > 1 {
                format!(
                    "{fig} and range: the series at the placement where each did worst (\"worst \
                     at\", of the {places} measured), which decides its rank"
                )
            } else {
                format!("{fig} and range: the median and the range of the case's series")
            },
        ]
        .into_iter()
        .chain(qualified(ans))
        .chain(tails.note("round trips"))
        .chain((!ans.ceilings.is_empty()).then(|| {
            let c: Vec<String> = ans
                .ceilings
                .iter()
                .map(|(n, v)| format!("{n} {v}"))
                .collect();
            format!(
                "ceilings, not ranked (one side, no IPC: how fast bytes move with no other \
                 side): {}",
                c.join(", ")
            )
        }))
        .collect(),
    }
}

/// A range written once with its unit where both ends share it ("52.6–59.9 µs").
fn range(low: String, high: String) -> String {
    match (low.rsplit_once(' '), high.rsplit_once(' ')) {
        (Some((l, lu)), Some((h, hu))) if lu == hu => format!("{l}–{h} {hu}"),
        _ => format!("{low}–{high}"),
    }
}

/// What qualifies rows, a note each ("Linux only: shm (futex), cma").
fn qualified(ans: &Answer) -> Vec<String> {
    let mut by: Vec<(String, Vec<&str>)> = Vec::new();
    for r in &ans.ranked {
        for w in r.why.split(", ").filter(|w| !w.is_empty()) {
            match by.iter_mut().find(|(k, _)| k == w) {
                Some((_, v)) => v.push(&r.name),
                None => by.push((w.to_string(), vec![&r.name])),
            }
        }
    }
    by.into_iter()
        .map(|(w, names)| {
            if names.len() == ans.ranked.len() {
                format!("{w}: every row")
            } else {
                format!("{w}: {}", names.join(", "))
            }
        })
        .collect()
}

/// Whether two rows' ranges overlap: too close to rank.
pub fn tie(a: &Row, b: &Row) -> bool {
    a.low <= b.high && b.low <= a.high
}

/// The ranking's tie groups, a number per row: going down the ranking, a row
/// joins the group above only if its range overlaps every member's, else it
/// starts one. So a tie is never transitive by accident: A~B and B~C with A
/// and C apart rank C on its own, not "=" to A by a chain of overlaps; every
/// row of the first group ties the first choice.
pub fn tie_groups(rows: &[Row]) -> Vec<usize> {
    let mut groups = Vec::with_capacity(rows.len());
    let mut start = 0;
    for (i, r) in rows.iter().enumerate() {
        if i > 0 && !rows[start..i].iter().all(|m| tie(m, r)) {
            start = i;
        }
        groups.push(start);
    }
    groups
}

/// What was left out, one line a reason with its names together: under
/// --messages a line per byte stream and wait was 20 lines of the same reason.
/// A reason that begins with its name ("pipe is a byte stream…") is said
/// without it ("pipe, fifo: a byte stream…").
pub fn left_out_lines(excluded: &[(String, String)]) -> Vec<(String, String)> {
    let mut lines: Vec<(Vec<&str>, &str)> = Vec::new();
    for (name, why) in excluded {
        let reason = why
            .strip_prefix(name.as_str())
            .filter(|r| r.starts_with(' ') || r.starts_with(':'))
            .map(|r| r.trim_start_matches(':').trim_start())
            .map(|r| r.strip_prefix("is ").unwrap_or(r))
            .unwrap_or(why);
        match lines.iter_mut().find(|(_, r)| *r == reason) {
            Some((names, _)) => names.push(name),
            None => lines.push((vec![name], reason)),
        }
    }
    lines
        .into_iter()
        .map(|(names, why)| (names.join(", "), why.to_string()))
        .collect()
}
