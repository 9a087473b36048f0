//! `ipcperf plot ID -o chart.svg|chart.png`: every chart the run has (throughput
//! against block size, scaling over pairs, latency against offered load, latency
//! percentiles); the first in the file named, the others beside it as
//! `chart-pairs.svg`, `chart-load.svg`, `chart-latency.svg`.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::fail::Fail;
use crate::shared::db::{load, parse_run_id, DbArgs, RunId};

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  ipcperf plot -o run.svg\n  ipcperf plot 12 -o latency.png")]
pub struct PlotArgs {
    /// The run: an id from `ipcperf history`, `last` (the default) or a label.
    #[arg(value_parser = parse_run_id, default_value = "last")]
    pub id: RunId,
    /// The file to write; its extension (.svg or .png) chooses the format.
    #[arg(long, short, required = true)]
    pub output: PathBuf,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(a: PlotArgs) -> Result<i32, Fail> {
    let ext = a
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let png = match ext.as_deref() {
        Some("svg") => false,
        Some("png") => true,
        _ => {
            return Err(Fail::usage(format!(
                "{}: name the file .svg or .png",
                a.output.display()
            )))
        }
    };
    crate::fail::check_writable(&a.output)?;
    let mut store = a.db.open_read()?;
    let (id, run) = load(&mut store, a.id)?;
    let write = |path: &Path, svg: Result<String, String>| -> Result<(), Fail> {
        let svg = svg.map_err(Fail::failure)?;
        std::fs::write(path, svg)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", path.display())))
    };
    // A core-to-core matrix is drawn as its heatmap (hundreds of pairs would be
    // hundreds of percentile lines).
    if let Some(m) = crate::chart::heatmap::from_run(&run) {
        if png {
            crate::chart::heatmap::png(&m, &a.output).map_err(Fail::failure)?;
        } else {
            write(&a.output, crate::chart::heatmap::svg(&m))?;
        }
        ipcperf_results::errln!("ipcperf: run {id}: heatmap drawn in {}", a.output.display());
        return Ok(0);
    }
    // A replay: its timeline (latency against time in the trace).
    if run.cases.iter().any(|c| c.replay.is_some()) {
        crate::chart::replay::write(&run, &a.output)?;
        ipcperf_results::errln!(
            "ipcperf: run {id}: replay timeline drawn in {}",
            a.output.display()
        );
        return Ok(0);
    }
    let charts = crate::chart::xy::charts(&run);
    if charts.is_empty() {
        return Err(Fail::usage(format!(
            "run {id} has no case that moved data or timed latencies: nothing to plot"
        )));
    }
    // The first chart goes where asked, the others beside it as NAME-KIND.EXT.
    for (i, c) in charts.iter().enumerate() {
        let path = if i == 0 {
            a.output.clone()
        } else {
            beside(&a.output, c.kind())
        };
        if png {
            c.png(&run, &path).map_err(Fail::failure)?;
        } else {
            write(&path, c.svg(&run))?;
        }
        ipcperf_results::errln!(
            "ipcperf: run {id}: {} drawn in {}",
            c.what(),
            path.display()
        );
    }
    Ok(0)
}

/// `dir/x.svg` → `dir/x-KIND.svg`.
fn beside(p: &Path, kind: &str) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = p
        .extension()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    p.with_file_name(format!("{stem}-{kind}.{ext}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn latency_path_sits_beside() {
        assert_eq!(
            super::beside(std::path::Path::new("/a/b/x.png"), "latency"),
            std::path::PathBuf::from("/a/b/x-latency.png")
        );
    }
}
