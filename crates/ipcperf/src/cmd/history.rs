//! `ipcperf history`: the runs kept, oldest first.

use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

use super::db::DbArgs;
use crate::store::RunSummary;
use crate::Fail;

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only the last N runs.
    #[arg(long, short = 'n')]
    pub last: Option<usize>,
}

/// Milliseconds since the epoch as `2026-11-21 02:58:22 UTC`.
pub fn fmt_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
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

pub fn run(a: HistoryArgs) -> Result<i32, Fail> {
    let mut store = a.db.open_read()?;
    let mut runs = store
        .list_runs()
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    if runs.is_empty() {
        println!(
            "No runs kept yet in {} (`ipcperf run` saves each run).",
            store.location
        );
        return Ok(0);
    }
    if let Some(n) = a.last {
        let skip = runs.len().saturating_sub(n);
        runs.drain(..skip);
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header([
            "id", "started", "host", "kernel", "cases", "measured", "status",
        ]);
    for r in &runs {
        t.add_row([
            r.id.to_string(),
            fmt_utc(r.started_ms),
            r.hostname.clone(),
            r.kernel.clone(),
            r.cases.to_string(),
            r.mechanisms.join(" "),
            status(r),
        ]);
    }
    println!("Runs kept in {}\n{t}", store.location);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(fmt_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(fmt_utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(fmt_utc(1_763_693_902_000), "2025-11-21 02:58:22 UTC");
    }
}
