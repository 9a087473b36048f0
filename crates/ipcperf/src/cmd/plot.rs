//! `ipcperf plot ID -o chart.svg|chart.png`: throughput against block size, and latency
//! percentiles when the run has them (in `chart-latency.svg` beside it when it has both).

use std::path::{Path, PathBuf};

use clap::Args;

use super::db::{load, parse_run_id, DbArgs, RunId};
use crate::fail::Fail;
use crate::plot;

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The run (an id from `ipcperf history`, or `last`).
    #[arg(value_parser = parse_run_id)]
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
    let mut store = a.db.open_read()?;
    let (id, run) = load(&mut store, a.id)?;
    let throughput = !plot::throughput_lines(&run).is_empty();
    let latency = !plot::latency_lines(&run).is_empty();
    if !throughput && !latency {
        return Err(Fail::usage(format!(
            "run {id} has no case that moved data or timed latencies: nothing to plot"
        )));
    }
    let write = |path: &Path, svg: Result<String, String>| -> Result<(), Fail> {
        let svg = svg.map_err(Fail::failure)?;
        std::fs::write(path, svg)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", path.display())))
    };
    // A core-to-core matrix is drawn as its heatmap (hundreds of pairs would be
    // hundreds of percentile lines).
    if let Some(m) = crate::heatmap::from_run(&run) {
        if png {
            crate::heatmap::png(&m, &a.output).map_err(Fail::failure)?;
        } else {
            write(&a.output, crate::heatmap::svg(&m))?;
        }
        eprintln!("ipcperf: run {id}: heatmap drawn in {}", a.output.display());
        return Ok(0);
    }
    if throughput {
        if png {
            plot::throughput_png(&run, &a.output).map_err(Fail::failure)?;
        } else {
            write(&a.output, plot::throughput_svg(&run))?;
        }
        eprintln!(
            "ipcperf: run {id}: throughput drawn in {}",
            a.output.display()
        );
    }
    if latency {
        // Both kinds: the latency chart goes beside the throughput one, as NAME-latency.EXT.
        let path = if throughput {
            latency_path(&a.output)
        } else {
            a.output.clone()
        };
        if png {
            plot::latency_png(&run, &path)
                .unwrap_or(Ok(()))
                .map_err(Fail::failure)?;
        } else if let Some(svg) = plot::latency_svg(&run) {
            write(&path, svg)?;
        }
        eprintln!(
            "ipcperf: run {id}: latency percentiles drawn in {}",
            path.display()
        );
    }
    Ok(0)
}

/// `dir/x.svg` → `dir/x-latency.svg`.
fn latency_path(p: &Path) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = p
        .extension()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    p.with_file_name(format!("{stem}-latency.{ext}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn latency_path_sits_beside() {
        assert_eq!(
            super::latency_path(std::path::Path::new("/a/b/x.png")),
            std::path::PathBuf::from("/a/b/x-latency.png")
        );
    }
}
