//! `ipcperf fleet`: every host of a shared history against its peers (same CPU
//! model and kernel), case by case; outliers first, each with its reason.

use clap::Args;

use super::db::DbArgs;
use crate::export::Format;
use crate::fail::Fail;
use crate::fleet;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ipcperf fleet --db postgres://ipcperf@db/ipcperf     # each host's newest figures, outliers first
  ipcperf fleet --label campaign-1040 --mechanisms pipe,unix
  ipcperf fleet --format json > fleet.json")]
pub struct FleetArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only runs with this label (a campaign); default every complete run.
    #[arg(long)]
    pub label: Option<String>,
    /// Only these mechanisms (a comma list); default every one measured.
    #[arg(long, value_delimiter = ',', value_name = "MECH[,MECH...]")]
    pub mechanisms: Vec<String>,
    /// Every case, not only the default suite's 64 KiB streams and 512 B round trips.
    #[arg(long)]
    pub all_cases: bool,
    /// Smallest ratio to its group's median called an outlier, beyond the noise.
    #[arg(long, default_value = "5%", value_parser = crate::units::parse_percent)]
    pub threshold: f64,
    /// Output format: table, markdown, json or csv (one record per host and case).
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: FleetArgs) -> Result<i32, Fail> {
    if a.format.is_metrics() {
        return Err(Fail::usage(
            "--format openmetrics and prometheus are for one run's figures: use table, json, csv \
             or markdown",
        ));
    }
    let mut store = a.db.open_read()?;
    let list = store
        .list_runs()
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    let mut runs = Vec::new();
    for s in list
        .iter()
        .filter(|s| s.complete && (a.label.is_none() || s.label == a.label))
    {
        if let Some(r) = store
            .load_run(s.id)
            .map_err(|e| Fail::failure(format!("run history: {e}")))?
        {
            runs.push(r);
        }
    }
    let pick = |c: &ipcperf_core::record::CaseRecord| {
        (a.all_cases || fleet::default_case(c))
            && (a.mechanisms.is_empty() || a.mechanisms.contains(&c.mechanism))
    };
    let entries = fleet::entries(&runs, &pick);
    if entries.is_empty() {
        return Err(Fail::failure(format!(
            "no complete run{} with a case to compare in {}",
            a.label
                .as_ref()
                .map(|l| format!(" labelled {l}"))
                .unwrap_or_default(),
            a.db.location()?.display()
        )));
    }
    let rows = fleet::judge(&entries, a.threshold);
    match a.format {
        Format::Json => {
            crate::outln!(
                "{}",
                serde_json::to_string_pretty(&rows).map_err(|e| Fail::failure(e.to_string()))?
            );
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let _ = w.write_record([
                "host",
                "cpu_model",
                "kernel",
                "case",
                "figure",
                "group_median",
                "ratio",
                "peers",
                "p",
                "outlier",
                "why",
            ]);
            for r in &rows {
                let _ = w.write_record([
                    r.host.clone(),
                    r.cpu_model.clone(),
                    r.kernel.clone(),
                    r.case.clone(),
                    r.figure.to_string(),
                    r.group_median.to_string(),
                    r.ratio.to_string(),
                    r.peers.to_string(),
                    r.p.map(|p| p.to_string()).unwrap_or_default(),
                    r.outlier.to_string(),
                    r.why.clone(),
                ]);
            }
            crate::outln!(
                "{}",
                String::from_utf8(w.into_inner().unwrap_or_default())
                    .unwrap_or_default()
                    .trim_end()
            );
        }
        _ => {
            let hosts: std::collections::BTreeSet<&str> =
                rows.iter().map(|r| r.host.as_str()).collect();
            let outliers: Vec<&fleet::HostRow> = rows.iter().filter(|r| r.outlier).collect();
            let mut out = format!(
                "{} hosts, {} host-and-case figures; {} outlier{}\n",
                hosts.len(),
                rows.len(),
                outliers.len(),
                if outliers.len() == 1 { "" } else { "s" }
            );
            for r in &outliers {
                out.push_str(&format!("  {}\n", fleet::outlier_line(r)));
            }
            let mut t = comfy_table::Table::new();
            t.load_style(if a.format == Format::Markdown {
                comfy_table::presets::ASCII_MARKDOWN
            } else {
                comfy_table::presets::UTF8_FULL_CONDENSED
            });
            t.set_header([
                "host",
                "case",
                "figure",
                "group median",
                "ratio",
                "peers",
                "verdict",
            ]);
            for r in &rows {
                let fig = |v: f64| {
                    if r.lower_better {
                        format!("{:.2} µs", v / 1e3)
                    } else {
                        format!("{:.0} MB/s", v / 1e6)
                    }
                };
                t.add_row([
                    r.host.clone(),
                    r.case.clone(),
                    fig(r.figure),
                    fig(r.group_median),
                    format!("{:.2}×", r.ratio),
                    r.peers.to_string(),
                    if r.outlier {
                        format!("OUTLIER: {}", r.why)
                    } else {
                        r.why.clone()
                    },
                ]);
            }
            crate::console::fit(&mut t);
            out.push_str(&t.to_string());
            crate::outln!("{out}");
        }
    }
    Ok(0)
}
