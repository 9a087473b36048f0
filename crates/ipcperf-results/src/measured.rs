//! The topology as measured (`ipcperf topology --measure`, `--pin measured:...`):
//! every ordered CPU pair's one-way latency from a cache-line ping-pong (see
//! `ipcperf_core::c2c`), its levels and the pairs far from their sysfs class, as
//! text, JSON, CSV and a heatmap; and the measurement of this boot, found in the
//! history or taken now, for placing a case by measurement.

use std::sync::atomic::AtomicBool;

use ipcperf_core::c2c::{self, Measured};
use ipcperf_core::observer::Observer;
use ipcperf_core::record::unix_ms;
use ipcperf_core::topology::{format_cpu_list, PlacementClass, Topology};

use crate::fail::Fail;

/// Measure every ordered pair of `cpus` (every usable CPU when None), saying
/// the cost first and showing progress on a terminal.
pub fn measure(topo: &Topology, cpus: Option<&[usize]>) -> Result<Measured, Fail> {
    let cpus: Vec<usize> = match cpus {
        Some(c) => c.to_vec(),
        None => topo.cpus.iter().map(|p| p.cpu).collect(),
    };
    if cpus.len() < 2 {
        return Err(Fail::usage(format!(
            "measuring needs two CPUs, and this process may use {}",
            format_cpu_list(&cpus)
        )));
    }
    let plan = c2c::plan(cpus.len());
    let pairs = cpus.len() * (cpus.len() - 1);
    crate::console::note(&format!(
        "measuring {pairs} CPU pairs by cache-line ping-pong, about {:.1} s",
        plan.estimate_secs(cpus.len())
    ));
    let mut console = crate::console::Console::new(pairs);
    let stop = AtomicBool::new(false);
    let t0 = std::time::Instant::now();
    let measured = c2c::measure(&cpus, &plan, &stop, |done, total| {
        console.progress(done, total);
    });
    console.finish();
    let pairs = measured.map_err(|e| Fail::failure(e.to_string()))?;
    let (levels, outliers) = c2c::group(&pairs, topo);
    Ok(Measured {
        at_ms: unix_ms(),
        boot_id: c2c::boot_id(),
        method: c2c::METHOD.into(),
        plan,
        cpus,
        pairs,
        secs: t0.elapsed().as_secs_f64(),
        levels,
        outliers,
    })
}

/// How stale a measurement may be: in a VM the host may move vCPUs, so an hour;
/// on bare metal the whole boot.
fn fresh(m: &Measured, in_vm: bool) -> bool {
    m.boot_id == c2c::boot_id()
        && !m.boot_id.is_empty()
        && (!in_vm || unix_ms().saturating_sub(m.at_ms) < 3_600_000)
}

/// The newest measurement of this boot in the history (at most the last 200
/// runs are looked at), if it is fresh enough.
fn from_history(in_vm: bool, db: Option<&str>) -> Option<Measured> {
    // The history the command was given (--db, which takes $IPCPERF_DB), else
    // the default file.
    let loc = crate::store::Location::from_arg(db.filter(|s| !s.is_empty())).ok()?;
    if let crate::store::Location::Sqlite(p) = &loc {
        if !p.exists() {
            return None;
        }
    }
    let mut store = crate::store::Store::open_read_only(&loc).ok()?;
    let mut runs = store.list_runs().ok()?;
    runs.sort_by_key(|r| std::cmp::Reverse(r.id));
    for r in runs.iter().take(200) {
        if r.kind != "topology" {
            continue;
        }
        let Some(run) = store.load_run(r.id).ok().flatten() else {
            continue;
        };
        if let Some(m) = run.machine.measured {
            return fresh(&m, in_vm).then_some(m);
        }
    }
    None
}

/// Which measured pair `--pin measured:WHICH` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Closest,
    Farthest,
    Median,
}

impl Which {
    pub fn parse(s: &str) -> Option<Which> {
        match s {
            "closest" => Some(Which::Closest),
            "farthest" => Some(Which::Farthest),
            "median" => Some(Which::Median),
            _ => None,
        }
    }
}

/// The measurement to place by: this boot's from the history, else one taken now.
pub fn current(topo: &Topology, db: Option<&str>) -> Result<Measured, Fail> {
    let in_vm = ipcperf_core::machine::Machine::collect()
        .virtualization
        .is_some();
    if let Some(m) = from_history(in_vm, db) {
        let usable: Vec<usize> = topo.cpus.iter().map(|p| p.cpu).collect();
        if m.cpus.iter().all(|c| usable.contains(c)) {
            crate::console::note(&format!(
                "placing by the measurement of {} ({} pairs)",
                when(m.at_ms),
                m.pairs.len()
            ));
            return Ok(m);
        }
    }
    let m = measure(topo, None)?;
    crate::console::note(
        "(`ipcperf topology --measure` keeps a measurement in the history for the next runs)",
    );
    Ok(m)
}

/// The pair `which` picks: (ping, pong, one-way ns).
pub fn pick(m: &Measured, which: Which) -> Option<(usize, usize, f64)> {
    let mut v: Vec<&c2c::Pair> = m
        .pairs
        .iter()
        .filter(|p| p.one_way_ns.is_finite())
        .collect();
    v.sort_by(|a, b| a.one_way_ns.total_cmp(&b.one_way_ns));
    let p = match which {
        Which::Closest => v.first()?,
        Which::Farthest => v.last()?,
        Which::Median => v.get(v.len() / 2)?,
    };
    Some((p.ping, p.pong, p.one_way_ns))
}

/// A time as `2026-11-21 02:58:22 UTC`.
pub fn when(ms: u64) -> String {
    crate::units::fmt_utc(ms)
}

fn us(ns: f64) -> String {
    if ns < 10.0 {
        format!("{:.1} ns", ns)
    } else if ns < 1000.0 {
        format!("{ns:.0} ns")
    } else {
        format!("{:.2} µs", ns / 1e3)
    }
}

fn classes(c: &[(PlacementClass, usize)]) -> String {
    c.iter()
        .map(|(k, n)| format!("{} ×{n}", k.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a group of CPUs is, said against its class.
fn relation(level_ns: f64, class_ns: f64, smt_ns: Option<f64>) -> &'static str {
    match smt_ns {
        Some(s) if level_ns <= s * 1.5 => "as close as SMT siblings",
        _ if level_ns * 3.0 < class_ns => "as close as SMT siblings would be",
        _ if level_ns < class_ns => "closer than their class",
        _ => "farther than their class",
    }
}

/// The measurement as text: the matrix (up to 24 CPUs), the levels, the groups
/// beside their sysfs class, the pairs far from their class.
pub fn text(m: &Measured, topo: &Topology, in_vm: bool, markdown: bool) -> String {
    let mut out = format!(
        "Measured one-way latency: {} CPUs, {} ordered pairs in {:.1} s ({} at {})\n",
        m.cpus.len(),
        m.pairs.len(),
        m.secs,
        "cache-line ping-pong",
        when(m.at_ms)
    );
    if m.cpus.len() <= 24 {
        let mut t = comfy_table::Table::new();
        t.load_style(if markdown {
            comfy_table::presets::ASCII_MARKDOWN
        } else {
            crate::console::table_style()
        });
        let mut header = vec!["ns: ping ↓ pong →".to_string()];
        header.extend(m.cpus.iter().map(|c| c.to_string()));
        t.set_header(header);
        for &a in &m.cpus {
            let mut row = vec![a.to_string()];
            for &b in &m.cpus {
                row.push(
                    m.pairs
                        .iter()
                        .find(|p| p.ping == a && p.pong == b)
                        .map_or_else(|| "-".into(), |p| format!("{:.0}", p.one_way_ns)),
                );
            }
            t.add_row(row);
        }
        crate::console::fit(&mut t);
        out.push_str(&format!("{t}\n"));
    } else {
        out.push_str("  (the matrix: --heatmap FILE.png, or --format json)\n");
    }
    let noise = c2c::noise(&m.pairs);
    out.push_str(&format!(
        "Levels (pairs within the noise of one another; noise {:.0}%, the pairs' median \
         series spread):\n",
        noise * 100.0
    ));
    for l in &m.levels {
        out.push_str(&format!(
            "  {:>8} ({}–{})  {} pair{}  sysfs: {}\n",
            us(l.median_ns),
            us(l.min_ns),
            us(l.max_ns),
            l.pairs.len(),
            if l.pairs.len() == 1 { "" } else { "s" },
            classes(&l.classes)
        ));
    }
    let medians = c2c::class_medians(&m.pairs, topo);
    let smt = medians
        .iter()
        .find(|(c, _)| *c == PlacementClass::SmtSibling)
        .map(|(_, v)| *v);
    let mut named = Vec::new();
    for l in &m.levels {
        for g in &l.groups {
            // The group's pairs' classes, and that class's median.
            let within: Vec<&(usize, usize)> = l
                .pairs
                .iter()
                .filter(|(a, b)| g.contains(a) && g.contains(b))
                .collect();
            let class = within
                .first()
                .and_then(|(a, b)| topo.classify(*a, *b))
                .unwrap_or(PlacementClass::SharedL3);
            let class_ns = medians
                .iter()
                .find(|(c, _)| *c == class)
                .map_or(l.median_ns, |(_, v)| *v);
            named.push(format!(
                "measured: {} {} ({} one way; sysfs: {}, whose median is {})",
                format_cpu_list(g),
                relation(l.median_ns, class_ns, smt),
                us(l.median_ns),
                class.name(),
                us(class_ns)
            ));
        }
    }
    for n in &named {
        out.push_str(&format!("  {n}\n"));
    }
    // Directions that differ: a pair one way more than 1.5× the other.
    let mut asym = Vec::new();
    for p in &m.pairs {
        if p.ping < p.pong {
            if let Some(q) = m
                .pairs
                .iter()
                .find(|q| q.ping == p.pong && q.pong == p.ping)
            {
                let (lo, hi) = if p.one_way_ns < q.one_way_ns {
                    (p, q)
                } else {
                    (q, p)
                };
                if hi.one_way_ns > 1.5 * lo.one_way_ns
                    && hi.one_way_ns > lo.one_way_ns * (1.0 + 3.0 * noise)
                {
                    asym.push(format!(
                        "{}→{} {} but {}→{} {}",
                        lo.ping,
                        lo.pong,
                        us(lo.one_way_ns),
                        hi.ping,
                        hi.pong,
                        us(hi.one_way_ns)
                    ));
                }
            }
        }
    }
    if !asym.is_empty() {
        out.push_str(&format!(
            "  note: the two directions differ (the line lives on the first CPU's side): {}\n",
            asym.iter().take(8).cloned().collect::<Vec<_>>().join("; ")
        ));
    }
    for o in m.outliers.iter().take(12) {
        out.push_str(&format!(
            "  note: {}→{} {}: {:.1}× {} than {}'s median {}\n",
            o.ping,
            o.pong,
            us(o.one_way_ns),
            if o.one_way_ns < o.class_median_ns {
                o.class_median_ns / o.one_way_ns
            } else {
                o.one_way_ns / o.class_median_ns
            },
            if o.one_way_ns < o.class_median_ns {
                "faster"
            } else {
                "slower"
            },
            o.class.name(),
            us(o.class_median_ns)
        ));
    }
    if m.outliers.len() > 12 {
        out.push_str(&format!(
            "  note: and {} more pairs outside their class\n",
            m.outliers.len() - 12
        ));
    }
    if in_vm {
        out.push_str(
            "  note: a virtual machine: sysfs describes the guest, not where the host runs its \
             vCPUs, and the host may move them between runs; this measurement is a snapshot\n",
        );
    }
    out
}

/// The measured pairs as CSV: one row per ordered pair (ping, pong), its
/// one-way latency, the spread of its series and the pair's class in sysfs
/// (empty where it has none). `topology --measure --format csv` and `export
/// --format csv` of a run that holds only this.
pub fn csv(m: &Measured, topo: &Topology) -> String {
    let mut out = String::from("ping,pong,one_way_ns,spread,sysfs_class\n");
    for p in &m.pairs {
        out.push_str(&format!(
            "{},{},{:.2},{:.4},{}\n",
            p.ping,
            p.pong,
            p.one_way_ns,
            p.spread,
            topo.classify(p.ping, p.pong).map_or("", |c| c.name())
        ));
    }
    out
}

/// The measurement as a heatmap matrix (each cell its one-way latency), with the
/// pairs outside their class outlined.
pub fn heatmap(m: &Measured, topo: &Topology) -> crate::chart::heatmap::Matrix {
    let mut cells = std::collections::BTreeMap::new();
    for p in &m.pairs {
        let ns = p.one_way_ns.round() as u64;
        cells.insert((p.ping, p.pong), (ns, ns));
    }
    crate::chart::heatmap::Matrix::of(
        m.cpus.clone(),
        cells,
        "one-way latency, cache-line ping-pong (ping ↓, pong →)".into(),
        String::new(),
        m.outliers.iter().map(|o| (o.ping, o.pong)).collect(),
        Some(topo),
    )
}

/// The report's section for a run that measured its topology: the heatmap and
/// the text; empty for any other run.
pub fn report_html(run: &ipcperf_core::record::RunRecord, esc: fn(&str) -> String) -> String {
    let (Some(m), Some(topo)) = (&run.machine.measured, &run.machine.topology) else {
        return String::new();
    };
    let mut o = String::from(
        "<h3>Measured topology: one-way latency of every CPU pair</h3>\n<div class=\"chart\">\n",
    );
    match crate::chart::heatmap::svg(&heatmap(m, topo)) {
        Ok(svg) => o.push_str(&svg),
        Err(e) => o.push_str(&format!("<p>{}</p>", esc(&e))),
    }
    o.push_str("</div>\n<pre style=\"white-space:pre-wrap\">");
    o.push_str(&esc(&text(
        m,
        topo,
        run.machine.virtualization.is_some(),
        false,
    )));
    o.push_str("</pre>\n");
    o
}

/// What changed between two measured topologies (compare of two `topology
/// --measure` runs): each sysfs class's median one way, and the groups.
pub fn compare_text(a: &Measured, b: &Measured, topo: &Topology) -> String {
    let ma = c2c::class_medians(&a.pairs, topo);
    let mb = c2c::class_medians(&b.pairs, topo);
    let mut out = String::from("Measured topology (one way, cache-line ping-pong):\n");
    for (class, x) in &ma {
        if let Some((_, y)) = mb.iter().find(|(c, _)| c == class) {
            out.push_str(&format!(
                "  {}: median {} → {} (B/A {:.2})\n",
                class.name(),
                us(*x),
                us(*y),
                y / x.max(1e-9)
            ));
        }
    }
    let groups = |m: &Measured| {
        let g: Vec<String> = m
            .levels
            .iter()
            .flat_map(|l| {
                l.groups
                    .iter()
                    .map(move |g| format!("{} ({})", format_cpu_list(g), us(l.median_ns)))
            })
            .collect();
        if g.is_empty() {
            "none".to_string()
        } else {
            g.join(", ")
        }
    };
    out.push_str(&format!(
        "  groups apart from the rest: A {}; B {}\n",
        groups(a),
        groups(b)
    ));
    out.push_str(&format!(
        "  A measured {}, B {}: in a VM each is a snapshot of where the host ran the vCPUs\n",
        when(a.at_ms),
        when(b.at_ms)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `topology --measure --format json` on the 16-CPU Xeon guest (a KVM guest
    /// whose sysfs says one L3, no SMT), with that guest's topology.
    fn xeon16() -> (Measured, Topology) {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("chart/fixtures/xeon16-measured.json")).unwrap();
        let m: Measured = serde_json::from_value(v["measured"].clone()).unwrap();
        let t: serde_json::Value =
            serde_json::from_str(include_str!("chart/fixtures/xeon16-topology.json")).unwrap();
        (m, serde_json::from_value(t["topology"].clone()).unwrap())
    }

    #[test]
    fn a_measured_16_cpu_guest_names_its_hidden_siblings() {
        let (m, topo) = xeon16();
        assert_eq!(m.pairs.len(), 240);
        assert!(m.secs <= 10.0, "{}", m.secs);
        // Grouped again from the pairs, as the measurement grouped them.
        let (levels, outliers) = c2c::group(&m.pairs, &topo);
        assert_eq!(levels, m.levels);
        assert_eq!(levels[0].groups, [vec![3, 5, 14, 15]]);
        assert!(outliers.iter().all(|o| o.one_way_ns < 10.0));
        let text = text(&m, &topo, true, false);
        assert!(
            text.contains(
                "measured: 3,5,14-15 as close as SMT siblings would be (8.4 ns one way; \
                 sysfs: shared-l3, whose median is 75 ns)"
            ),
            "{text}"
        );
        assert!(text.contains("a virtual machine"));
        let widest = text
            .lines()
            .take(20)
            .map(|l| l.chars().count())
            .max()
            .unwrap();
        assert!(widest <= 120, "{widest}");
        // Placed by measurement: the closest pair is one of the group.
        let (w, r, ns) = pick(&m, Which::Closest).unwrap();
        assert!([3, 5, 14, 15].contains(&w) && [3, 5, 14, 15].contains(&r) && ns < 10.0);
        let (_, _, far) = pick(&m, Which::Farthest).unwrap();
        let (_, _, mid) = pick(&m, Which::Median).unwrap();
        assert!(far > mid && mid > ns);
        let h = heatmap(&m, &topo);
        assert_eq!(h.outlined.len(), outliers.len());
        if let Some(dir) = std::env::var_os("IPCPERF_KEEP_HEATMAP") {
            crate::chart::heatmap::png(&h, &std::path::Path::new(&dir).join("measured-xeon16.png"))
                .unwrap();
        }
    }

    #[test]
    fn a_measurement_of_another_boot_is_not_used() {
        let (mut m, _) = xeon16();
        m.boot_id = "another boot".into();
        assert!(!fresh(&m, false));
        m.boot_id = c2c::boot_id();
        m.at_ms = unix_ms();
        assert!(fresh(&m, true) || m.boot_id.is_empty());
        m.at_ms = unix_ms() - 2 * 3_600_000;
        assert!(!fresh(&m, true), "a VM's measurement older than an hour");
        assert!(fresh(&m, false) || m.boot_id.is_empty());
    }
}
