//! `ipcperf history`: the runs kept, oldest first.

use clap::Args;

use crate::export::emit::{csv_rows, emit, markdown_rows, table_rows, Document};
use crate::export::Format;
use crate::fail::Fail;
use crate::shared::db::DbArgs;
use crate::store::RunSummary;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  ipcperf history\n  ipcperf history --last 10 --format csv")]
pub struct HistoryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only the last N runs. (`-n` is a count of blocks or round trips elsewhere,
    /// so here it is `-l`.)
    #[arg(long, short = 'l', value_parser = crate::units::parse_positive_count)]
    pub last: Option<usize>,
    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = Format::Table)]
    pub format: Format,
}

fn status(r: &RunSummary) -> String {
    match (r.complete, r.finished_ms) {
        (true, Some(end)) => format!(
            "complete, {:.0} s",
            (end.saturating_sub(r.started_ms)) as f64 / 1e3
        ),
        (true, None) => "complete".into(),
        (false, Some(_)) => "incomplete (stopped)".into(),
        (false, None) => "incomplete (killed or running)".into(),
    }
}

/// The history for a terminal: where every run is of one host and kernel, they
/// are said once above the table, not in two columns of every row; a label
/// column where no run has a label is left out (it took a narrow terminal's
/// room and said nothing).
fn console_table(location: &str, header: &[&str], rows: &[Vec<String>]) -> String {
    let (label, started, host, kernel) = (2, 3, 4, 5);
    // The zone said once, in the header, not in every row.
    let mut header = header.to_vec();
    header[started] = "started (UTC)";
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            // To the minute: the id tells two runs of a minute apart, and at
            // 80 columns the seconds broke every row's time over two lines.
            if let Some(t) = r[started].strip_suffix(" UTC") {
                r[started] = match t.rsplit_once(':') {
                    Some((minute, _)) if minute.len() == 16 => minute.to_string(),
                    _ => t.to_string(),
                };
            }
            r[MEASURED] = few(&r[MEASURED]);
            r
        })
        .collect();
    let rows = &rows;
    let one = |i: usize| rows.iter().all(|r| r[i] == rows[0][i]);
    let unlabelled = rows.iter().all(|r| r[label].is_empty());
    let same_machine = one(host) && one(kernel);
    let keep =
        |i: &usize| !(unlabelled && *i == label) && !(same_machine && (*i == host || *i == kernel));
    let header: Vec<&str> = (0..header.len()).filter(keep).map(|i| header[i]).collect();
    let shown: Vec<Vec<String>> = rows
        .iter()
        .map(|r| (0..r.len()).filter(keep).map(|i| r[i].clone()).collect())
        .collect();
    let title = if same_machine {
        format!(
            "Runs kept in {location}, each on {} (Linux {})",
            rows[0][host], rows[0][kernel]
        )
    } else {
        format!("Runs kept in {location}")
    };
    let title = crate::console::fit_line(&title, 4);
    let mut text = format!("{title}\n{}", table_rows(&header, &shown));
    if rows.iter().any(|r| r[MEASURED].contains(" more")) {
        text.push('\n');
        text.push_str(&crate::console::fit_line(
            "  note: measured: the first names of a long list (`ipcperf show ID` or \
             --format csv names every one)",
            6,
        ));
    }
    text
}

/// The `measured` column of the history's row.
const MEASURED: usize = 7;

/// The names a terminal shows of what a run measured: all of them where they
/// take [`FEW`] characters or fewer, else as many of the first as fit with how
/// many more (at least one). A default latency run's 18 names took seven lines
/// of an 80-column table; "pipe fifo unix tcp +3 more" still took two.
fn few(names: &str) -> String {
    let all: Vec<&str> = names.split(' ').filter(|n| !n.is_empty()).collect();
    if all.join(" ").chars().count() <= FEW {
        return all.join(" ");
    }
    let cut = |n: usize| format!("{} +{} more", all[..n].join(" "), all.len() - n);
    (1..all.len())
        .rev()
        .map(cut)
        .find(|s| s.chars().count() <= FEW)
        .unwrap_or_else(|| cut(1))
}

/// The most characters [`few`] gives a row's names: what an 80-column table
/// holds on one line beside the other columns.
const FEW: usize = 17;

pub fn run(a: HistoryArgs) -> Result<i32, Fail> {
    a.format.refuse_metrics("the run history")?;
    let mut store = a.db.open_read()?;
    let mut runs = store
        .list_runs()
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    if let Some(n) = a.last {
        let skip = runs.len().saturating_sub(n);
        runs.drain(..skip);
    }
    // One row per run, the same columns in every format.
    let header = [
        "id", "kind", "label", "started", "host", "kernel", "cases", "measured", "status",
    ];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.kind.clone(),
                r.label.clone().unwrap_or_default(),
                crate::units::fmt_utc(r.started_ms),
                r.hostname.clone(),
                r.kernel.clone(),
                r.cases.to_string(),
                r.mechanisms.join(" "),
                status(r),
            ]
        })
        .collect();
    let mut csv_header = header.map(str::to_string);
    csv_header[3] = "started_utc".into();
    let none = format!(
        "No runs kept yet in {} (`ipcperf run` saves each run).",
        store.location
    );
    let doc = Document {
        what: "the run history",
        json: serde_json::to_value(&runs).map_err(|e| Fail::failure(e.to_string()))?,
        csv: csv_rows(&csv_header, &rows),
        table: if runs.is_empty() {
            none.clone()
        } else {
            console_table(&store.location, &header, &rows)
        },
        markdown: if runs.is_empty() {
            none
        } else {
            markdown_rows(&header, &rows)
        },
    };
    crate::console::out(&emit(&doc, a.format)?);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_of_names_is_cut_to_four_and_a_count() {
        assert_eq!(few("pipe unix"), "pipe unix");
        assert_eq!(few("a b c d e f g h i"), "a b c d e f g h i");
        assert_eq!(few("pipe fifo unix tcp udp shm"), "pipe fifo +4 more");
        let one = "sysv-sem-onecall posix-sem-named";
        assert_eq!(few(one), "sysv-sem-onecall +1 more");
        let rows = vec![vec![
            "1".into(),
            "latency".into(),
            String::new(),
            "2026-11-30 19:20:01 UTC".into(),
            "vm".into(),
            "6.18".into(),
            "18".into(),
            "pipe fifo unix tcp sysv-msg posix-mq".into(),
            "complete, 27 s".into(),
        ]];
        let header = [
            "id", "kind", "label", "started", "host", "kernel", "cases", "measured", "status",
        ];
        let text = console_table("h.db", &header, &rows);
        assert!(text.contains("pipe fifo +4 more"), "{text}");
        assert!(text.contains("note: measured:"), "{text}");
    }
}
