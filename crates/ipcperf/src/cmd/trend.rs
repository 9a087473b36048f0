//! `ipcperf trend MECH`: one case across runs in time (a host's nightly runs, a
//! label, a group of hosts), each run with its spread; a step from one run to the
//! next called only beyond the noise, by compare's rules; each case's newest run
//! judged against its runs before it, as compare judges B against several runs.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::export::Format;
use crate::fail::Fail;
use crate::fleet::{self};
use crate::shared::db::DbArgs;
use crate::store::FigureFilter;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ipcperf trend pipe --sizes 64k                        # this host's runs of pipe at 64 KiB
  ipcperf trend pipe --sizes 64k --host node17 -o node17-pipe.png
  ipcperf trend unix --workload round-trip --sizes 512 --label nightly --format csv")]
pub struct TrendArgs {
    /// The mechanism (as `ipcperf list` names it).
    #[arg(value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mechanism: String,
    /// Block size of the case (64k, 512; k = 1024, kB = 1000); default every
    /// size measured. Was --size, which still works.
    #[arg(long = "sizes", short, alias = "size", value_name = "SIZE", value_parser = crate::units::parse_size)]
    pub size: Option<usize>,
    /// stream, round-trip or sync; default every workload measured.
    #[arg(long, value_enum)]
    pub workload: Option<TrendWorkload>,
    /// Only this host's runs. Default: this machine's, unless --label, --cpu-model
    /// or --kernel selects.
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub host: Option<String>,
    /// Only runs with this label.
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub label: Option<String>,
    /// Only hosts of this CPU model (a group, with --kernel).
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub cpu_model: Option<String>,
    /// Only hosts running this kernel.
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub kernel: Option<String>,
    /// Smallest change called, beyond the noise: a step, or the newest run
    /// against the runs before it.
    #[arg(long, default_value = "5%", value_parser = crate::units::parse_percent)]
    pub threshold: f64,
    /// Output format: table, markdown, json or csv (one record per run and case).
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the trend: FILE.png or FILE.svg.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrendWorkload {
    Stream,
    RoundTrip,
    Sync,
}

impl TrendWorkload {
    fn name(self) -> &'static str {
        match self {
            TrendWorkload::Stream => "stream",
            TrendWorkload::RoundTrip => "round-trip",
            TrendWorkload::Sync => "sync",
        }
    }
}

/// This host as runs are kept under it: the scheduler's node when one
/// launched us (a pod's own name changes every night), else the host name.
fn this_host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    ipcperf_core::machine::Scheduler::from_env(|k| std::env::var(k).ok())
        .and_then(|s| s.node)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(name)
}

pub fn run(a: TrendArgs) -> Result<i32, Fail> {
    a.format.refuse_metrics("a trend")?;
    let svg = match &a.output {
        Some(p) => {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !matches!(ext, "png" | "svg") {
                return Err(Fail::usage(format!(
                    "--output {}: name a .png or .svg file",
                    p.display()
                )));
            }
            crate::fail::check_writable(p)?;
            ext == "svg"
        }
        None => false,
    };
    let default_host =
        (a.host.is_none() && a.label.is_none() && a.cpu_model.is_none() && a.kernel.is_none())
            .then(this_host);
    let host = a.host.clone().or(default_host);
    let mut store = a.db.open_read()?;
    let mechanisms = [a.mechanism.clone()];
    let figs = store
        .figures(&FigureFilter {
            label: a.label.as_deref(),
            host: host.as_deref(),
            cpu_model: a.cpu_model.as_deref(),
            kernel: a.kernel.as_deref(),
            workload: a.workload.map(TrendWorkload::name),
            block_size: a.size.map(|s| s as u64),
            mechanisms: &mechanisms,
            ..FigureFilter::default()
        })
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    if figs.is_empty() {
        crate::shared::plan::refuse_unknown(&mechanisms)?;
        let mut what = vec![a.mechanism.clone()];
        if let Some(s) = a.size {
            what.push(crate::units::fmt_size(s as u64));
        }
        if let Some(w) = a.workload {
            what.push(w.name().into());
        }
        for (k, v) in [
            ("host", &host),
            ("label", &a.label),
            ("CPU model", &a.cpu_model),
            ("kernel", &a.kernel),
        ] {
            if let Some(v) = v {
                what.push(format!("{k} {v}"));
            }
        }
        return Err(Fail::usage(format!(
            "no complete run of {} in {}",
            what.join(", "),
            a.db.location()?.display()
        )));
    }
    let mut points = fleet::trend(&figs, a.threshold);
    // Every case of the same hosts' runs: their spreads lend the newest run's
    // verdict its prior.
    let all = store
        .figures(&FigureFilter {
            label: a.label.as_deref(),
            host: host.as_deref(),
            cpu_model: a.cpu_model.as_deref(),
            kernel: a.kernel.as_deref(),
            ..FigureFilter::default()
        })
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    fleet::newest::judge(&mut points, &all, a.threshold);
    if let Some(p) = &a.output {
        let title = format!(
            "{}{}",
            host.as_deref()
                .or(a.label.as_deref())
                .map(|h| format!("{h}: "))
                .unwrap_or_default(),
            a.mechanism
        );
        if svg {
            let text = crate::chart::trend::svg(&title, &points).map_err(Fail::failure)?;
            std::fs::write(p, text)
                .map_err(|e| Fail::failure(format!("cannot write {}: {e}", p.display())))?;
        } else {
            crate::chart::trend::png(&title, &points, p).map_err(Fail::failure)?;
        }
        ipcperf_results::errln!("ipcperf: trend drawn in {}", p.display());
    }
    let doc = crate::fleet::trend_output::trend_document(&points)?;
    crate::console::out(&crate::export::emit::emit(&doc, a.format)?);
    Ok(0)
}
