//! One way out: how a kept run looks, whichever way it is asked for (`show`,
//! `export`, `--export-*`, and the measuring command's own `--format` at its
//! end). Above the exporters, the matrix's table and the measured topology's
//! text.

use ipcperf_core::record::RunRecord;

use crate::export::{pipeline, render_any, render_with, Format};

/// A kept run as every way in shows it (`show`, `export`, `--export-*`, a
/// command's own `--format`): streams, round trips, sync and replays each in their
/// tables; a pipeline run as Stover's tables; a measured topology's groups after
/// the tables. The one place that decides how a run looks.
pub fn document(run: &RunRecord, format: Format, rank_size: Option<usize>) -> String {
    let matrix = (run.kind == "matrix" && format == Format::Table)
        .then(|| crate::chart::heatmap::from_run(run))
        .flatten();
    let out = if let Some(m) = matrix {
        crate::chart::matrix_table::render_table(run, &m)
    } else if run.kind == "pipeline" {
        render_with(run, format, || pipeline::view_of(run))
    } else {
        render_any(run, format, rank_size)
    };
    let topo = || {
        run.machine
            .topology
            .clone()
            .unwrap_or_else(|| ipcperf_core::topology::Topology {
                cpus: Vec::new(),
                offline: Vec::new(),
                not_allowed: Vec::new(),
                isolated: Vec::new(),
            })
    };
    match (&run.machine.measured, format) {
        // A run of the pairs alone (`topology --measure`): its CSV is theirs,
        // not a header of cases with no row.
        (Some(m), Format::Csv) if run.cases.is_empty() => crate::measured::csv(m, &topo()),
        (Some(m), Format::Table | Format::Markdown) => {
            let topo = topo();
            let text = crate::measured::text(
                m,
                &topo,
                run.machine.virtualization.is_some(),
                format == Format::Markdown,
            );
            format!("{out}\n{}\n", text.trim_end())
        }
        _ => out,
    }
}
