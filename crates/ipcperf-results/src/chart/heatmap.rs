//! The core-to-core matrix of a run: the p50 (and p99) round trip of every ordered
//! pair of CPUs it measured, as a table and as a heatmap. CPUs are ordered by
//! where they sit (package, node, last-level cache, core), so SMT siblings, cache
//! domains and nodes show as blocks; lines mark the cache domains.

use std::collections::BTreeMap;
use std::path::Path;

use ipcperf_core::record::{CaseStatus, RunRecord};
use ipcperf_core::topology::Topology;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::{fonts, FAMILY};
use crate::units::fmt_size;

/// A measured matrix.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// The CPUs, in display order.
    pub cpus: Vec<usize>,
    /// (writer, reader) → (p50, p99) ns; a pair absent was not measured or failed.
    pub cells: BTreeMap<(usize, usize), (u64, u64)>,
    /// What was measured: `shm (spin) processes 64 B`.
    pub what: String,
    /// The picture's title.
    pub title: String,
    /// Indices into `cpus` where a new last-level cache domain starts.
    pub domain_starts: Vec<usize>,
    /// Cells far from their placement class's median, outlined.
    pub outlined: Vec<(usize, usize)>,
}

impl Matrix {
    /// A matrix of `cells` over `cpus` (ordered here by where they sit).
    pub fn of(
        mut cpus: Vec<usize>,
        cells: BTreeMap<(usize, usize), (u64, u64)>,
        title: String,
        what: String,
        outlined: Vec<(usize, usize)>,
        topo: Option<&Topology>,
    ) -> Matrix {
        order(&mut cpus, topo);
        let domain_starts = domain_starts(&cpus, topo);
        Matrix {
            cpus,
            cells,
            what,
            title,
            domain_starts,
            outlined,
        }
    }
}

/// The cells of `m` whose p50 is under a third, or over three times, the median
/// p50 of their placement class (by `topo`): (writer, reader, p50, class, its median).
pub fn outside_class(
    m: &Matrix,
    topo: &Topology,
) -> Vec<(
    usize,
    usize,
    u64,
    ipcperf_core::topology::PlacementClass,
    u64,
)> {
    let mut by: BTreeMap<ipcperf_core::topology::PlacementClass, Vec<u64>> = BTreeMap::new();
    for (&(w, r), &(p50, _)) in &m.cells {
        if let Some(c) = topo.classify(w, r) {
            by.entry(c).or_default().push(p50);
        }
    }
    let medians: BTreeMap<_, u64> = by
        .into_iter()
        .map(|(c, mut v)| {
            v.sort_unstable();
            (c, v[v.len() / 2])
        })
        .collect();
    let mut out = Vec::new();
    for (&(w, r), &(p50, _)) in &m.cells {
        let Some(c) = topo.classify(w, r) else {
            continue;
        };
        let med = medians[&c];
        if p50.saturating_mul(3) < med || p50 > med.saturating_mul(3) {
            out.push((w, r, p50, c, med));
        }
    }
    out
}

/// The matrix in `run`, when it is one: a run `ipcperf matrix` made (round trips of
/// one mechanism, mode and size between pinned pairs of different CPUs). A
/// `latency` run pinned to a few pairs is not one: it keeps its percentile chart.
pub fn from_run(run: &RunRecord) -> Option<Matrix> {
    if run.kind != "matrix" {
        return None;
    }
    let cases: Vec<_> = run
        .cases
        .iter()
        .filter(|c| c.workload == ipcperf_core::kind::Workload::RoundTrip)
        .collect();
    let first = cases.first()?;
    let what = format!(
        "{} {} {}",
        crate::export::view::mechanism_label(first),
        first.mode.name(),
        fmt_size(first.block_size)
    );
    let mut cells = BTreeMap::new();
    let mut cpus = Vec::new();
    for c in &cases {
        let (Some(w), Some(r)) = (c.placement.writer_cpu, c.placement.reader_cpu) else {
            return None;
        };
        if w == r
            || c.mechanism != first.mechanism
            || c.block_size != first.block_size
            || c.mode != first.mode
        {
            return None;
        }
        for x in [w, r] {
            if !cpus.contains(&x) {
                cpus.push(x);
            }
        }
        if let (CaseStatus::Ok, Some(l)) = (&c.status, &c.latency) {
            cells.insert((w, r), (l.p50_ns, l.p99_ns));
        }
    }
    if cpus.len() < 2 {
        return None;
    }
    let topo = run.machine.topology.as_ref();
    let mut m = Matrix::of(
        cpus,
        cells,
        format!("p50 round trip, {what} (writer ↓, reader →)"),
        what,
        Vec::new(),
        topo,
    );
    if let Some(t) = topo {
        m.outlined = outside_class(&m, t).iter().map(|o| (o.0, o.1)).collect();
    }
    Some(m)
}

/// Order CPUs by where they sit, so that neighbours are neighbours.
fn order(cpus: &mut [usize], topo: Option<&Topology>) {
    cpus.sort_by_key(|&c| {
        let p = topo.and_then(|t| t.place(c));
        (
            p.map(|p| p.package),
            p.and_then(|p| p.node),
            p.and_then(|p| p.l3.as_ref().and_then(|l| l.first().copied())),
            p.map(|p| (p.die, p.core)),
            c,
        )
    });
}

fn domain_starts(cpus: &[usize], topo: Option<&Topology>) -> Vec<usize> {
    let Some(t) = topo else { return Vec::new() };
    // A block per last-level cache domain, split where a NUMA node or a package
    // ends inside one (sub-NUMA clusters share a package-wide L3).
    let dom = |c: usize| {
        t.place(c).map(|p| {
            (
                p.package,
                p.node,
                p.l3.as_ref().and_then(|l| l.first().copied()),
            )
        })
    };
    (1..cpus.len())
        .filter(|&i| dom(cpus[i]) != dom(cpus[i - 1]))
        .collect()
}

/// Heatmap size in pixels: the cells, the scale and its key beside them (about
/// 290 px), the title above (18 px type, about 10 px a character). It was at
/// least 760 × 420, so two CPUs' matrix sat in a corner of white.
fn size(m: &Matrix) -> (u32, u32) {
    let n = m.cpus.len();
    let side = cell(n) as u32 * n as u32;
    let title = 40 + 10 * m.title.chars().count() as u32;
    let key = if m.outlined.is_empty() { 60 } else { 100 };
    ((side + 290).max(title), side.max(120) + 100 + key)
}

/// A cell's side in pixels.
fn cell(n: usize) -> i32 {
    (640 / n.max(1)).clamp(8, 64) as i32
}

/// A colour from dark (fast) to bright (slow), `f` in 0..=1: viridis, whose
/// every step differs in lightness. The blue-to-red ramp before it passed
/// through a grey-green a quarter of the way up that read as the dark grey of
/// a pair that did not run.
/// The cells that hold no figure: one CPU with itself, and a pair that did not run.
const SAME_CPU: RGBColor = RGBColor(230, 230, 230);
const NOT_RUN: RGBColor = RGBColor(120, 120, 120);

fn heat(f: f64) -> RGBColor {
    use plotters::style::colors::colormaps::{ColorMap, ViridisRGB};
    ViridisRGB.get_color(f.clamp(0.0, 1.0))
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    m: &Matrix,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    fonts();
    root.fill(&WHITE)?;
    let n = m.cpus.len();
    let cell = cell(n);
    let (x0, y0) = (70i32, 80i32);
    let vals: Vec<f64> = m.cells.values().map(|v| (v.0.max(1) as f64).ln()).collect();
    let mut lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // A scale at least 1.5× wide: cells a few percent apart keep one colour.
    let least = 1.5f64.ln();
    if hi - lo < least {
        let mid = (hi + lo) / 2.0;
        (lo, hi) = (mid - least / 2.0, mid + least / 2.0);
    }
    let span = hi - lo;
    root.draw(&Text::new(
        m.title.clone(),
        (20, 20),
        (FAMILY, 18).into_font(),
    ))?;
    let label = (FAMILY, 12.min(cell.max(8)) as u32 + 2).into_font();
    for (i, &wc) in m.cpus.iter().enumerate() {
        root.draw(&Text::new(
            wc.to_string(),
            (x0 - 30, y0 + i as i32 * cell + cell / 2 - 6),
            label.clone(),
        ))?;
        root.draw(&Text::new(
            wc.to_string(),
            (x0 + i as i32 * cell + cell / 2 - 6, y0 - 20),
            label.clone(),
        ))?;
        for (j, &rc) in m.cpus.iter().enumerate() {
            let (x, y) = (x0 + j as i32 * cell, y0 + i as i32 * cell);
            let fill = match m.cells.get(&(wc, rc)) {
                _ if wc == rc => SAME_CPU,
                Some((p50, _)) => heat((((*p50).max(1) as f64).ln() - lo) / span),
                None => NOT_RUN,
            };
            root.draw(&Rectangle::new(
                [(x, y), (x + cell, y + cell)],
                fill.filled(),
            ))?;
        }
    }
    // Each cell's p50 in it, where cells are wide enough to hold it.
    if cell >= 32 {
        let mut p50s: Vec<u64> = m.cells.values().map(|v| v.0).collect();
        p50s.sort_unstable();
        let unit = if p50s.get(p50s.len() / 2).is_some_and(|&v| v >= 1000) {
            1e3
        } else {
            1.0
        };
        for (&(w, r), &(p50, _)) in &m.cells {
            let (Some(i), Some(j)) = (
                m.cpus.iter().position(|&c| c == w),
                m.cpus.iter().position(|&c| c == r),
            ) else {
                continue;
            };
            let f = ((p50.max(1) as f64).ln() - lo) / span;
            // Light on the dark (fast) end of the scale, dark on the bright.
            let ink = if f < 0.6 { WHITE } else { BLACK };
            let style = TextStyle::from((FAMILY, (cell / 4).clamp(10, 14)).into_font())
                .color(&ink)
                .pos(Pos::new(HPos::Center, VPos::Center));
            let at = (
                x0 + j as i32 * cell + cell / 2,
                y0 + i as i32 * cell + cell / 2,
            );
            let text = if unit > 1.0 {
                figure(p50 as f64 / unit)
            } else {
                p50.to_string()
            };
            root.draw(&Text::new(text, at, style))?;
        }
        let what = if unit > 1.0 {
            "figures: p50, µs"
        } else {
            "figures: p50, ns"
        };
        root.draw(&Text::new(
            what,
            (x0, y0 + n as i32 * cell + 10),
            (FAMILY, 14).into_font(),
        ))?;
    }
    // Cells far from their class: outlined.
    for &(w, r) in &m.outlined {
        let (Some(i), Some(j)) = (
            m.cpus.iter().position(|&c| c == w),
            m.cpus.iter().position(|&c| c == r),
        ) else {
            continue;
        };
        let (x, y) = (x0 + j as i32 * cell, y0 + i as i32 * cell);
        root.draw(&Rectangle::new(
            [(x + 1, y + 1), (x + cell - 1, y + cell - 1)],
            RGBColor(200, 0, 200).stroke_width(3),
        ))?;
    }
    // Cache-domain boundaries.
    let end = y0 + n as i32 * cell;
    for &s in &m.domain_starts {
        let at = s as i32 * cell;
        root.draw(&PathElement::new(
            vec![(x0 + at, y0), (x0 + at, end)],
            BLACK.stroke_width(2),
        ))?;
        root.draw(&PathElement::new(
            vec![(x0, y0 + at), (x0 + n as i32 * cell, y0 + at)],
            BLACK.stroke_width(2),
        ))?;
    }
    // The scale.
    let sx = x0 + n as i32 * cell + 40;
    let steps = 40;
    let sh = (n as i32 * cell).max(120);
    for k in 0..steps {
        let f = 1.0 - k as f64 / (steps - 1) as f64;
        let y = y0 + k * sh / steps;
        root.draw(&Rectangle::new(
            [(sx, y), (sx + 24, y + sh / steps + 1)],
            heat(f).filled(),
        ))?;
    }
    let us = |v: f64| {
        let ns = v.exp();
        if ns < 1000.0 {
            format!("{ns:.0} ns")
        } else {
            format!("{:.2} µs", ns / 1e3)
        }
    };
    let small = (FAMILY, 14).into_font();
    root.draw(&Text::new(us(hi), (sx + 30, y0), small.clone()))?;
    root.draw(&Text::new(us(lo), (sx + 30, y0 + sh - 14), small.clone()))?;
    root.draw(&Text::new(
        "light grey: same CPU",
        (sx, y0 + sh + 14),
        small.clone(),
    ))?;
    root.draw(&Text::new(
        "dark grey: did not run",
        (sx, y0 + sh + 32),
        small.clone(),
    ))?;
    if !m.outlined.is_empty() {
        root.draw(&Text::new(
            "outlined: 3× off the",
            (sx, y0 + sh + 50),
            small.clone(),
        ))?;
        root.draw(&Text::new("median of its class", (sx, y0 + sh + 68), small))?;
    }
    root.present()
}

/// A cell's figure in µs, three significant digits at most: 47.0, 1.25, 312.
fn figure(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

/// The heatmap as an SVG document.
pub fn svg(m: &Matrix) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size(m)).into_drawing_area();
        draw(root, m).map_err(|e| format!("cannot draw the heatmap: {e}"))?;
    }
    Ok(out)
}

/// The heatmap as a PNG file.
pub fn png(m: &Matrix, path: &Path) -> Result<(), String> {
    super::png::write(path, size(m), |root| {
        draw(root, m).map_err(|e| e.to_string())
    })
}

/// The cells far from their class's median (outlined in the heatmap), named;
/// and, in a VM, that vCPUs may move between runs.
pub fn outside_notes(r: &RunRecord, m: &Matrix) -> String {
    let mut out = String::new();
    let in_vm = r.machine.virtualization.is_some();
    if let Some(t) = &r.machine.topology {
        let cells = outside_class(m, t);
        for (w, rd, p50, class, med) in cells.iter().take(12) {
            let faster = p50 < med;
            let x = if faster {
                *med as f64 / (*p50).max(1) as f64
            } else {
                *p50 as f64 / (*med).max(1) as f64
            };
            let why = match (faster, in_vm) {
                (true, true) => ": these vCPUs likely share a core on the host",
                (true, false) => ": closer than sysfs says (see ipcperf topology --measure)",
                (false, true) => {
                    ": the host likely ran these vCPUs far apart, or one was preempted"
                }
                (false, false) => ": a pair slower than its class (a busy CPU, an interrupt?)",
            };
            out.push_str(&format!(
                "  note: {w}→{rd} {:.2} µs: {x:.1}× {} than {}'s median {:.2} µs{why}\n",
                *p50 as f64 / 1e3,
                if faster { "faster" } else { "slower" },
                class.name(),
                *med as f64 / 1e3,
            ));
        }
        if cells.len() > 12 {
            out.push_str(&format!(
                "  note: and {} more cells outside their class (outlined in the heatmap, -o FILE)\n",
                cells.len() - 12
            ));
        }
    }
    if in_vm {
        out.push_str(
            "  note: a virtual machine: the host may move vCPUs between runs, so a cell fast in \
             one run may not be in the next (ipcperf topology --measure takes a snapshot)\n",
        );
    }
    let cases: Vec<&ipcperf_core::record::CaseRecord> = r.cases.iter().collect();
    if let Some(n) = crate::export::idle::summary_note(&cases) {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcperf_core::topology::PlacementClass;

    /// No figure on the scale is drawn near the greys of the cells without one
    /// (the old ramp came within 44 of "did not run", RGB distance).
    #[test]
    fn no_colour_of_the_scale_reads_as_a_cell_without_a_figure() {
        let dist = |a: RGBColor, b: RGBColor| {
            let d = |x: u8, y: u8| (f64::from(x) - f64::from(y)).powi(2);
            (d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)).sqrt()
        };
        for i in 0..=100 {
            let c = heat(f64::from(i) / 100.0);
            assert!(dist(c, NOT_RUN) > 60.0, "{i}%: {c:?}");
            assert!(dist(c, SAME_CPU) > 60.0, "{i}%: {c:?}");
        }
        // Fast to slow is dark to bright.
        let light = |c: RGBColor| u32::from(c.0) + u32::from(c.1) + u32::from(c.2);
        assert!(light(heat(0.0)) < light(heat(0.5)) && light(heat(0.5)) < light(heat(1.0)));
    }

    /// A 16-CPU matrix on the EPYC fixture's layout (SMT pairs c, c+8; CCX of two
    /// cores; a node per CCD), its latencies by class: drawn, ordered by domain.
    pub fn epyc_run() -> RunRecord {
        run_on(crate::testdata::epyc_topology())
    }

    fn run_on(topo: Topology) -> RunRecord {
        let mut run = crate::testdata::run();
        let template = run.cases[0].clone();
        run.cases.clear();
        let cpus: Vec<usize> = topo.cpus.iter().map(|p| p.cpu).collect();
        for &w in &cpus {
            for &r in &cpus {
                if w == r {
                    continue;
                }
                let class = topo.classify(w, r).unwrap();
                let ns = match class {
                    PlacementClass::SmtSibling => 90,
                    PlacementClass::SharedL3 => 180,
                    PlacementClass::OtherL3 => 650,
                    _ => 900,
                };
                let mut c = template.clone();
                c.workload = ipcperf_core::kind::Workload::RoundTrip;
                c.mechanism = "shm".into();
                c.block_size = 64;
                c.placement.label = class.name().into();
                c.placement.writer_cpu = Some(w);
                c.placement.reader_cpu = Some(r);
                let mut h = ipcperf_core::latency::new_histogram();
                ipcperf_core::latency::record_samples(&mut h, &[ns, ns, ns * 2], 0);
                c.latency = Some(ipcperf_core::latency::summarize(
                    &h,
                    1_000,
                    0,
                    20,
                    vec![ns],
                    0,
                ));
                run.cases.push(c);
            }
        }
        run.machine.topology = Some(topo);
        run.command_line = ["ipcperf", "matrix", "shm"].map(String::from).to_vec();
        run.kind = "matrix".into();
        run
    }

    /// `matrix shm --wake spin --sizes 64` on the 16-CPU Xeon guest
    /// (../shared/measure/xeon16-run.txt) with that guest's topology: sysfs calls
    /// every pair shared-l3, and three cells ran at 0.09 µs against 0.73.
    fn xeon16_run() -> RunRecord {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("fixtures/xeon16-topology.json")).unwrap();
        let topo: Topology = serde_json::from_value(v["topology"].clone()).unwrap();
        let mut run = run_on(topo);
        let table = include_str!("fixtures/xeon16-matrix-shm-spin.txt");
        for line in table.lines().filter(|l| l.starts_with("│ ")) {
            let cells: Vec<&str> = line.trim_matches('│').split('┆').map(str::trim).collect();
            let Ok(w) = cells[0].parse::<usize>() else {
                continue;
            };
            for (r, cell) in cells[1..].iter().enumerate() {
                let Some((p50, _)) = cell.split_once(' ') else {
                    continue;
                };
                let ns = (p50.parse::<f64>().unwrap() * 1e3).round() as u64;
                let c = run
                    .cases
                    .iter_mut()
                    .find(|c| {
                        (c.placement.writer_cpu, c.placement.reader_cpu) == (Some(w), Some(r))
                    })
                    .unwrap();
                c.latency.as_mut().unwrap().p50_ns = ns;
            }
        }
        run.machine.virtualization = Some("KVM".into());
        run
    }

    #[test]
    fn cells_far_from_their_class_are_named_and_outlined() {
        let run = xeon16_run();
        let m = from_run(&run).unwrap();
        let mut out: Vec<(usize, usize)> = m.outlined.clone();
        out.sort();
        assert_eq!(out, [(2, 0), (2, 12), (15, 11)]);
        let notes = outside_notes(&run, &m);
        assert!(
            notes.contains(
                "2→0 0.09 µs: 8.1× faster than shared-l3's median 0.73 µs: these \
                 vCPUs likely share a core on the host"
            ),
            "{notes}"
        );
        assert_eq!(notes.matches("faster than shared-l3").count(), 3, "{notes}");
        assert!(notes.contains("may move vCPUs between runs"), "{notes}");
        let svg = svg(&m).unwrap();
        assert!(svg.contains("outlined"));
        if let Some(dir) = std::env::var_os("IPCPERF_KEEP_HEATMAP") {
            png(&m, &std::path::Path::new(&dir).join("heatmap-xeon16.png")).unwrap();
        }
    }

    #[test]
    fn a_sixteen_cpu_matrix_is_ordered_by_domain_and_drawn() {
        let run = epyc_run();
        let m = from_run(&run).expect("a matrix");
        // CCX by CCX: the two threads of each core side by side in their domain.
        assert_eq!(
            m.cpus,
            [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
        );
        assert_eq!(m.domain_starts, [4, 8, 12]);
        assert_eq!(m.cells.len(), 240);
        assert_eq!(m.cells[&(0, 8)].0, 90);
        let svg = svg(&m).unwrap();
        assert!(svg.contains("p50 round trip, shm processes 64 B"));
        if let Some(dir) = std::env::var_os("IPCPERF_KEEP_HEATMAP") {
            png(&m, &std::path::Path::new(&dir).join("heatmap-16.png")).unwrap();
        }
        // Not a matrix: a stream run, or the same round trips made by `latency`.
        assert!(from_run(&crate::testdata::run()).is_none());
        let mut latency = run.clone();
        latency.command_line[1] = "latency".into();
        latency.kind = "latency".into();
        assert!(from_run(&latency).is_none());
    }

    /// The picture is the size of what it holds: two CPUs' matrix was drawn in
    /// a corner of a 760 × 420 field of white. The scale's key (about 170 px
    /// right of the scale, which stands 40 px right of the cells) and the title
    /// still fit.
    #[test]
    fn a_small_matrix_makes_a_small_picture() {
        let cells = BTreeMap::from([((0, 1), (50_000, 60_000)), ((1, 0), (70_000, 90_000))]);
        let title = "p50 round trip, pipe processes 64 B (writer ↓, reader →)".to_string();
        let m = Matrix::of(
            vec![0, 1],
            cells,
            title.clone(),
            String::new(),
            Vec::new(),
            None,
        );
        let (w, h) = size(&m);
        let side = 2 * cell(2) as u32;
        assert!(
            w >= 70 + side + 40 + 170 && w >= 10 * title.chars().count() as u32,
            "{w}"
        );
        assert!(w < 700 && h < 360, "{w} × {h}");
        let svg = svg(&m).unwrap();
        assert!(svg.contains(&format!("width=\"{w}\"")), "{}", &svg[..200]);
        // Cells this wide carry their p50, in the unit the key names.
        let t = crate::chart::svg_text::texts(&svg);
        for want in ["50.0", "70.0", "figures: p50, µs"] {
            assert!(t.iter().any(|x| x == want), "{want}: {t:?}");
        }
    }

    /// Sub-NUMA clusters (recorded in a QEMU guest: an L3 per socket, two nodes
    /// in each): a block per node, not only per L3.
    #[test]
    fn node_boundaries_inside_one_l3_are_drawn() {
        let m = from_run(&run_on(crate::testdata::fixture_topology("qemu-numa16"))).unwrap();
        assert_eq!(m.cpus, (0..16).collect::<Vec<_>>());
        assert_eq!(m.domain_starts, [4, 8, 12]);
    }
}
