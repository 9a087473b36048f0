//! `ipcperf compare A B`: did this kernel, container or machine change IPC speed?

use clap::Args;
use ipcperf_core::record::RunRecord;

use crate::export::emit::{csv_rows, emit, Document};
use crate::export::Format;
use crate::fail::Fail;
use crate::shared::db::{load, parse_run_id, DbArgs, RunId};
use crate::{compare, export};

#[derive(Args, Debug)]
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

    /// With --fail-on-regression: also exit 3 when a row could not tell (its
    /// series too spread or too few to call a change of the threshold's size).
    #[arg(long, requires = "fail_on_regression")]
    pub strict: bool,
}

pub fn run(a: CompareArgs) -> Result<i32, Fail> {
    let mut store = a.db.open_read()?;
    let (ia, ra) = load(&mut store, a.a)?;
    let (ib, rb) = load(&mut store, a.b)?;
    let history = earlier_runs(&mut store, (ia, &ra), (ib, &rb));
    let rows = compare::compare_with(&ra, &rb, a.threshold, &history);
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
        let v = compare::view_with(
            &ia.to_string(),
            &ra,
            &ib.to_string(),
            &rb,
            a.threshold,
            &history,
        );
        let mut out = export::render_view(&v, format);
        if let (Some(x), Some(y), Some(t)) = (
            &ra.machine.measured,
            &rb.machine.measured,
            &rb.machine.topology,
        ) {
            out.push_str(&format!("\n{}", crate::measured::compare_text(x, y, t)));
        }
        out
    };
    let doc = Document {
        what: "a comparison",
        json: serde_json::json!({
            "a": ia,
            "b": ib,
            "threshold": a.threshold,
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
    if a.fail_on_regression {
        crate::console::note(&format!(
            "{slower} row{} slower; {cannot} could not tell a {:.0}% change{}",
            if slower == 1 { "" } else { "s" },
            a.threshold * 100.0,
            if cannot > 0 && !a.strict {
                " (they fail the gate only with --strict)"
            } else {
                ""
            }
        ));
    }
    let called = a.fail_on_regression && (slower > 0 || (a.strict && cannot > 0));
    Ok(if called {
        crate::fail::exit::REGRESSION
    } else {
        crate::fail::exit::OK
    })
}

/// The newest 30 other complete runs of A's and B's host, kernel and CPU model
/// (when A and B share them): how much each case moves from run to run.
fn earlier_runs(
    store: &mut crate::store::Store,
    (ia, ra): (i64, &RunRecord),
    (ib, rb): (i64, &RunRecord),
) -> compare::History {
    if !compare::same_machine(ra, rb) {
        return compare::History::new();
    }
    let Ok(mut runs) = store.list_runs() else {
        return compare::History::new();
    };
    runs.retain(|r| {
        r.id != ia
            && r.id != ib
            && r.complete
            && r.hostname == rb.machine.host()
            && r.kernel == rb.machine.kernel
    });
    runs.sort_by_key(|r| std::cmp::Reverse(r.id));
    let loaded: Vec<RunRecord> = runs
        .iter()
        .take(30)
        .filter_map(|r| store.load_run(r.id).ok().flatten())
        .filter(|r| compare::same_machine(r, rb))
        .collect();
    compare::history_of(&loaded)
}
