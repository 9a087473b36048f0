//! `ipcperf matrix`'s table: p50 and p99 per ordered CPU pair, and, with
//! `--explain`, each placement class's parts.

use crate::chart::heatmap::Matrix;
use crate::export;
use ipcperf_core::record::RunRecord;

/// The matrix (p50 and p99 in µs), then the median p50 of each placement class,
/// fitted to the terminal (standard output's: none for a pipe or a file).
pub fn render_table(r: &RunRecord, m: &Matrix) -> String {
    render_at(r, m, crate::console::terminal_width().map(usize::from))
}

/// [`render_table`] for a terminal `cols` wide (None: every cell whole, one line
/// each note, for grep).
fn render_at(r: &RunRecord, m: &Matrix, cols: Option<usize>) -> String {
    let (grids, left_out) = fitted(m, cols);
    let title = match (grids.is_empty(), left_out.is_none()) {
        (true, _) => format!("Round trip, {}, {} CPUs", m.what, m.cpus.len()),
        (false, true) => format!(
            "Round trip, {}: p50 (p99) in µs, writer CPU down, reader CPU across",
            m.what
        ),
        (false, false) => format!(
            "Round trip, {}: p50 in µs, writer CPU down, reader CPU across",
            m.what
        ),
    };
    let mut out = wrapped(&title, cols);
    for g in &grids {
        out.push_str(&format!("{g}\n"));
    }
    let mut notes = String::new();
    if let Some(n) = left_out {
        notes.push_str(&format!("  note: {n}\n"));
    }
    let mut by_class: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for c in &r.cases {
        if let Some(l) = &c.latency {
            by_class
                .entry(c.placement.label.clone())
                .or_default()
                .push(l.p50_ns);
        }
    }
    for (class, mut v) in by_class {
        v.sort_unstable();
        notes.push_str(&format!(
            "  {class}: median p50 {:.2} µs over {} pair{}\n",
            v[v.len() / 2] as f64 / 1e3,
            v.len(),
            if v.len() == 1 { "" } else { "s" }
        ));
    }
    notes.push_str(&explained_classes(r));
    notes.push_str(&crate::chart::heatmap::outside_notes(r, m));
    if let Some(line) = export::explain::not_traced(r) {
        notes.push_str(&format!("  {line}\n"));
    }
    let failed = r.cases.iter().filter(|c| c.latency.is_none()).count();
    if failed > 0 {
        notes.push_str(&format!(
            "  {failed} pair{} did not run (see the messages above)\n",
            if failed == 1 { "" } else { "s" }
        ));
    }
    for line in notes.lines() {
        out.push_str(&wrapped(line, cols));
    }
    out
}

/// A line of prose wrapped at words to `cols`, its later lines two spaces in
/// from its own start; as it is (and its newline) without a width.
fn wrapped(line: &str, cols: Option<usize>) -> String {
    let Some(cols) = cols else {
        return format!("{line}\n");
    };
    let text = line.trim_start_matches(' ');
    let lead = &line[..line.len() - text.len()];
    crate::console::fill(text, cols.saturating_sub(lead.len()).max(10), "  ")
        .lines()
        .map(|l| format!("{lead}{l}\n"))
        .collect()
}

/// The most parts the readers are cut into to fit a terminal; beyond, the
/// matrix is left to the heatmap and the CSV (a 64-CPU matrix on 80 columns
/// would be 7 tables of 64 rows).
const MOST_PARTS: usize = 4;

/// The matrix's tables for a terminal `cols` wide, and what was left out to fit
/// it: whole (p50 and p99) where that fits; else p50 alone; else p50 alone with
/// the readers in up to [`MOST_PARTS`] tables; else none, and a note saying
/// where every cell is. Cells are never cut inside (a 16-CPU matrix at 80
/// columns was "0." over "73" over "(0" over ".3 …").
fn fitted(m: &Matrix, cols: Option<usize>) -> (Vec<String>, Option<String>) {
    let whole = Grid::of(m, true);
    let Some(cols) = cols else {
        return (vec![whole.render(&m.cpus)], None);
    };
    if whole.width(&m.cpus) <= cols {
        return (vec![whole.render(&m.cpus)], None);
    }
    let p50 = Grid::of(m, false);
    let elsewhere = "a wider terminal, --format csv or -o FILE shows every cell";
    if p50.width(&m.cpus) <= cols {
        let note = format!("p99 left out to fit the terminal ({elsewhere})");
        return (vec![p50.render(&m.cpus)], Some(note));
    }
    let mut parts: Vec<&[usize]> = Vec::new();
    let mut rest: &[usize] = &m.cpus;
    while !rest.is_empty() {
        let mut k = 1;
        while k < rest.len() && p50.width(&rest[..=k]) <= cols {
            k += 1;
        }
        parts.push(&rest[..k]);
        rest = &rest[k..];
    }
    let n = m.cpus.len();
    if parts.len() <= MOST_PARTS && parts.iter().all(|p| p50.width(p) <= cols) {
        let note = format!(
            "p99 left out and the readers in {} tables to fit the terminal ({elsewhere})",
            parts.len()
        );
        return (parts.iter().map(|p| p50.render(p)).collect(), Some(note));
    }
    let note = format!(
        "the {n}×{n} matrix does not fit a terminal {cols} columns wide: -o FILE draws \
         it (.png, .svg), --format csv lists every pair, a pipe or a wider terminal \
         shows the table"
    );
    (Vec::new(), Some(note))
}

/// Every cell's text, by writer and reader, and the corner's.
struct Grid {
    corner: &'static str,
    rows: Vec<(usize, Vec<(usize, String)>)>,
}

impl Grid {
    fn of(m: &Matrix, p99: bool) -> Grid {
        let us = |ns: u64| ns as f64 / 1e3;
        let rows = m
            .cpus
            .iter()
            .map(|&w| {
                let cells = m
                    .cpus
                    .iter()
                    .map(|&r| {
                        let text = match m.cells.get(&(w, r)) {
                            _ if w == r => "-".into(),
                            Some(&(a, b)) if p99 => format!("{:.2} ({:.2})", us(a), us(b)),
                            Some(&(a, _)) => format!("{:.2}", us(a)),
                            None => "failed".into(),
                        };
                        (r, text)
                    })
                    .collect();
                (w, cells)
            })
            .collect();
        let corner = if p99 {
            "writer ↓ reader →"
        } else {
            "w↓ r→"
        };
        Grid { corner, rows }
    }

    /// The width of the table of the columns `readers`: each column its
    /// widest text and three (a space each side, a rule), and the left rule.
    fn width(&self, readers: &[usize]) -> usize {
        let wide = |r: Option<usize>| -> usize {
            let head = r.map_or(self.corner.chars().count(), |r| r.to_string().len());
            self.rows
                .iter()
                .map(|(w, cells)| match r {
                    None => w.to_string().len(),
                    Some(r) => cells
                        .iter()
                        .find(|c| c.0 == r)
                        .map_or(0, |c| c.1.chars().count()),
                })
                .fold(head, usize::max)
                + 3
        };
        1 + wide(None) + readers.iter().map(|&r| wide(Some(r))).sum::<usize>()
    }

    fn render(&self, readers: &[usize]) -> String {
        let mut t = comfy_table::Table::new();
        t.load_style(crate::console::table_style());
        let mut header = vec![self.corner.to_string()];
        header.extend(readers.iter().map(|c| c.to_string()));
        t.set_header(header);
        for (w, cells) in &self.rows {
            let mut row = vec![w.to_string()];
            row.extend(
                cells
                    .iter()
                    .filter(|c| readers.contains(&c.0))
                    .map(|c| c.1.clone()),
            );
            t.add_row(row);
        }
        t.to_string()
    }
}

/// `--explain`: each placement class's round trip in parts, each part the
/// median over the class's pairs of their medians (largest first).
pub fn explained_classes(r: &RunRecord) -> String {
    let mut by_class: std::collections::BTreeMap<
        String,
        Vec<&ipcperf_core::explain::ExplainRecord>,
    > = Default::default();
    for c in &r.cases {
        if let Some(x) = c.explain.as_deref() {
            by_class
                .entry(c.placement.label.clone())
                .or_default()
                .push(x);
        }
    }
    let mut out = String::new();
    for (class, xs) in by_class {
        let mut parts: Vec<(u64, &str)> = ipcperf_core::explain::split::PARTS
            .iter()
            .filter_map(|(name, label)| {
                let mut v: Vec<u64> = xs
                    .iter()
                    .filter_map(|x| x.parts.iter().find(|p| p.name == *name))
                    .map(|p| p.median_ns)
                    .collect();
                v.sort_unstable();
                let m = v.get(v.len() / 2).copied().unwrap_or(0);
                (m > 0).then_some((m, *label))
            })
            .collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.0));
        let shown: Vec<String> = parts
            .iter()
            .map(|(m, label)| format!("{label} {:.2}", *m as f64 / 1e3))
            .collect();
        let line = format!(
            "{class}, where the time goes (µs, median over {} pair{}): {}",
            xs.len(),
            if xs.len() == 1 { "" } else { "s" },
            shown.join(", ")
        );
        let opts = textwrap::Options::new(78)
            .initial_indent("  ")
            .subsequent_indent("    ");
        for l in textwrap::wrap(&line, opts) {
            out.push_str(&format!("{l}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` CPUs, every pair at 0.73 µs (p99 0.98), but 2→0 at 0.09 and 1→3 failed.
    fn matrix(n: usize) -> (RunRecord, Matrix) {
        let mut cells = std::collections::BTreeMap::new();
        for w in 0..n {
            for r in (0..n).filter(|&r| r != w) {
                cells.insert((w, r), (730 + (w * n + r) as u64 % 90, 980));
            }
        }
        cells.insert((2, 0), (90, 150));
        cells.remove(&(1, 3));
        let what = "shm (spin) processes 64 B".to_string();
        let m = Matrix::of(
            (0..n).collect(),
            cells,
            what.clone(),
            what,
            Vec::new(),
            None,
        );
        (RunRecord::begin("matrix", Vec::new()), m)
    }

    fn lines_within(text: &str, cols: usize) {
        for l in text.lines() {
            assert!(
                l.chars().count() <= cols,
                "{} > {cols}: {l}",
                l.chars().count()
            );
        }
    }

    /// Every cell's p50 appears whole in `text` (no "0." over "73").
    fn every_p50_whole(m: &Matrix, text: &str) {
        for (w, r) in m.cells.keys() {
            let p50 = format!("{:.2}", m.cells[&(*w, *r)].0 as f64 / 1e3);
            assert!(text.contains(&p50), "{w}→{r} {p50} missing:\n{text}");
        }
    }

    #[test]
    fn a_pipe_gets_every_cell_whole() {
        let (r, m) = matrix(16);
        let text = render_at(&r, &m, None);
        assert!(
            text.contains("0.09 (0.15)") && text.contains("failed"),
            "{text}"
        );
        assert!(text.contains("p50 (p99) in µs"), "{text}");
        assert!(!text.contains("left out"), "{text}");
    }

    #[test]
    fn sixteen_cpus_fit_80_columns_as_p50_in_two_tables() {
        let (r, m) = matrix(16);
        let text = render_at(&r, &m, Some(80));
        lines_within(&text, 80);
        every_p50_whole(&m, &text);
        assert!(text.contains("failed"), "{text}");
        assert!(
            text.contains("p99 left out and the readers in 2 tables"),
            "{text}"
        );
        assert!(
            text.contains("p50 in µs") && !text.contains("(p99)"),
            "{text}"
        );
        // Each writer is a row of each table.
        assert_eq!(text.matches("│ 15 ").count(), 2, "{text}");
        // 200 columns take the p50 of all 16 readers in one table.
        let wide = render_at(&r, &m, Some(200));
        lines_within(&wide, 200);
        every_p50_whole(&m, &wide);
        assert!(wide.contains("p99 left out to fit the terminal"), "{wide}");
        assert_eq!(wide.matches("│ 15 ").count(), 1, "{wide}");
        // Four CPUs fit whole.
        let (r, small) = matrix(4);
        let text = render_at(&r, &small, Some(80));
        assert!(
            text.contains("0.09 (0.15)") && !text.contains("left out"),
            "{text}"
        );
    }

    #[test]
    fn a_matrix_too_big_for_the_terminal_says_where_its_cells_are() {
        let (r, m) = matrix(64);
        let text = render_at(&r, &m, Some(80));
        lines_within(&text, 80);
        assert!(!text.contains('┆') && !text.contains('|'), "{text}");
        assert!(text.contains("the 64×64 matrix does not fit"), "{text}");
        assert!(
            text.contains("-o FILE draws") && text.contains("--format csv"),
            "{text}"
        );
        // 250 columns hold it in two tables; 120 would take five.
        let wide = render_at(&r, &m, Some(250));
        lines_within(&wide, 250);
        every_p50_whole(&m, &wide);
        assert!(wide.contains("the readers in 2 tables"), "{wide}");
        let mid = render_at(&r, &m, Some(120));
        assert!(
            mid.contains("does not fit a terminal 120 columns wide"),
            "{mid}"
        );
    }
}
