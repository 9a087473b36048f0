//! `ipcperf fleet`: every host of a shared history against its peers (same CPU
//! model and kernel), case by case; outliers first, each with its reason.
//! `--by kernel`: each CPU model's kernels in version order, steps between them
//! called beyond the noise. `-o fleet.html`: the page of both, with trends.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::export::emit::emit;
use crate::export::Format;
use crate::fail::Fail;
use crate::fleet::output::{hosts_document, kernels_document};
use crate::fleet::{self, HostRow};
use crate::shared::db::DbArgs;
use crate::store::FigureFilter;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ipcperf fleet --db postgres://ipcperf@db/ipcperf     # each host's newest figures, outliers first
  ipcperf fleet --label campaign-1040 --mechanisms pipe,unix
  ipcperf fleet --by kernel --mechanisms pipe,unix     # one CPU model's kernels in order: steps
  ipcperf fleet -o fleet.html                          # the page: heat table, outliers, kernels, trends
  ipcperf fleet --format json > fleet.json")]
pub struct FleetArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only runs with this label (a campaign); default every complete run.
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub label: Option<String>,
    /// Only these mechanisms (a comma list); default every one measured.
    #[arg(long, value_delimiter = ',', value_name = "MECH[,MECH...]", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mechanisms: Vec<String>,
    /// Every case, not only the default suite's 64 KiB streams and 512 B round trips.
    #[arg(long)]
    pub all_cases: bool,
    /// host: each host against its peers; kernel: each CPU model's kernels in
    /// version order, a change between neighbours called beyond the noise.
    #[arg(long, value_enum, default_value_t = By::Host)]
    pub by: By,
    /// Smallest ratio to its group's median called an outlier, beyond the noise.
    #[arg(long, default_value = "5%", value_parser = crate::units::parse_percent)]
    pub threshold: f64,
    /// Output format: table, markdown, json or csv (one record per host and case,
    /// or per CPU model, case and kernel with --by kernel).
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = Format::Table)]
    pub format: Format,
    /// Also write the fleet page (HTML): hosts × cases as a heat table, the
    /// outliers, the kernel steps and trend charts.
    #[arg(long, short, value_name = "FILE.html")]
    pub output: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    Host,
    Kernel,
}

/// Most trend charts on the page.
const PAGE_TRENDS: usize = 6;

pub fn run(a: FleetArgs) -> Result<i32, Fail> {
    a.format.refuse_metrics("a fleet")?;
    if let Some(o) = &a.output {
        crate::fail::check_writable(o)?;
    }
    let mut store = a.db.open_read()?;
    let filter = FigureFilter {
        label: a.label.as_deref(),
        mechanisms: &a.mechanisms,
        default_cases: !a.all_cases,
        newest: true,
        ..FigureFilter::default()
    };
    let figs = store
        .figures(&filter)
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    if figs.is_empty() {
        crate::shared::plan::refuse_unknown(&a.mechanisms)?;
        return Err(Fail::usage(format!(
            "no complete run{}{} with a case to compare in {}",
            a.label
                .as_ref()
                .map(|l| format!(" labelled {l}"))
                .unwrap_or_default(),
            match a.mechanisms.as_slice() {
                [] => String::new(),
                m => format!(" of {}", m.join(", ")),
            },
            a.db.location()?.display()
        )));
    }
    let entries = fleet::entries(figs);
    let rows = fleet::judge(&entries, a.threshold);
    // Kernels only where they are shown (the page, --by kernel).
    let kernels = if a.output.is_some() || a.by == By::Kernel {
        fleet::by_kernel(&entries, a.threshold)
    } else {
        Vec::new()
    };
    if let Some(path) = &a.output {
        let trends = page_trends(&mut store, &a, &rows)?;
        let source = format!(
            "{}{}",
            a.db.location()?.display(),
            a.label
                .as_ref()
                .map(|l| format!(", label {l}"))
                .unwrap_or_default()
        );
        let html = crate::report::fleet::html(&crate::report::fleet::Page {
            source,
            rows: &rows,
            kernels: &kernels,
            trends,
        });
        std::fs::write(path, html)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", path.display())))?;
        ipcperf_results::errln!("ipcperf: fleet page written to {}", path.display());
    }
    let doc = match a.by {
        By::Host => hosts_document(&rows)?,
        By::Kernel => kernels_document(&kernels)?,
    };
    crate::console::out(&emit(&doc, a.format)?);
    Ok(0)
}

/// The page's trend charts: each outlier's case on its host across its runs;
/// with no outlier, each case on the host with the most runs.
fn page_trends(
    store: &mut crate::store::Store,
    a: &FleetArgs,
    rows: &[HostRow],
) -> Result<Vec<(String, String)>, Fail> {
    let mut wanted: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.outlier)
        .map(|r| (r.host.clone(), r.case.clone()))
        .collect();
    if wanted.is_empty() {
        let all = store
            .figures(&FigureFilter {
                label: a.label.as_deref(),
                mechanisms: &a.mechanisms,
                default_cases: !a.all_cases,
                ..FigureFilter::default()
            })
            .map_err(|e| Fail::failure(format!("run history: {e}")))?;
        let mut count: std::collections::BTreeMap<(&str, &str), usize> = Default::default();
        for f in &all {
            *count.entry((&f.host, &f.key)).or_default() += 1;
        }
        if let Some(most) = count.values().copied().max().filter(|&n| n > 1) {
            wanted = count
                .iter()
                .filter(|(_, &n)| n == most)
                .map(|((h, k), _)| (h.to_string(), k.to_string()))
                .collect();
        }
    }
    let mut out = Vec::new();
    for (host, key) in wanted.into_iter().take(PAGE_TRENDS) {
        let figs = store
            .figures(&FigureFilter {
                label: a.label.as_deref(),
                host: Some(&host),
                key: Some(&key),
                ..FigureFilter::default()
            })
            .map_err(|e| Fail::failure(format!("run history: {e}")))?;
        if figs.len() < 2 {
            continue;
        }
        let points = fleet::trend(&figs, a.threshold);
        let title = format!("{host}: {key}");
        let svg = crate::chart::trend::svg(&title, &points).map_err(Fail::failure)?;
        out.push((title, svg));
    }
    Ok(out)
}
