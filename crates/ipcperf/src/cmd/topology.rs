//! `ipcperf topology`: where this machine's CPUs sit (packages, NUMA nodes, cores,
//! SMT siblings, cache domains), which of them this process may use, and the
//! placement classes `--pin` can name, each with the CPU pair it stands for.

use std::path::PathBuf;

use clap::Args;
use comfy_table::Table;
use ipcperf_core::topology::{format_cpu_list, PlacementClass, Topology};
use serde_json::json;

use crate::export::emit::{csv_rows, emit, markdown_rows, Document};
use crate::export::Format;
use crate::fail::Fail;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf topology\n  ipcperf topology --per-cpu\n  ipcperf topology --format json\n  ipcperf topology --measure                   # every CPU pair's one-way latency, measured\n  ipcperf topology --measure -o c2c.png\n  ipcperf latency pipe --pin measured:closest  # the closest pair as measured"
)]
pub struct TopologyArgs {
    /// Measure every ordered CPU pair's one-way latency (a cache-line ping-pong,
    /// core-to-core-latency's method) and group the CPUs by it, beside the sysfs
    /// classes; saved with the machine record. About 30 ms a pair: 16 CPUs ~8 s.
    #[arg(long, conflicts_with = "sysfs")]
    pub measure: bool,

    /// With --measure: the CPUs to measure (a list such as 0-7); default every
    /// CPU this process may use.
    #[arg(long, requires = "measure", value_parser = crate::shared::values::parse_cpus, value_name = "LIST")]
    pub only: Option<crate::shared::values::CpuList>,

    /// With --measure: also draw the matrix into this file (.svg or .png), the
    /// pairs far from their class outlined. Was --heatmap, which still works.
    #[arg(
        long = "output",
        short = 'o',
        alias = "heatmap",
        requires = "measure",
        value_name = "FILE"
    )]
    pub heatmap: Option<PathBuf>,

    #[command(flatten)]
    pub save: crate::shared::db::SaveArgs,

    /// Also list every usable CPU with its package, die, core, node, SMT siblings
    /// and caches. Was --cpus, which still works (`--cpus` is a list of CPUs
    /// elsewhere, as in matrix).
    #[arg(long = "per-cpu", alias = "cpus")]
    pub cpus: bool,

    /// Read the tree under this directory instead of /sys (a copy of another
    /// machine's /sys/devices/system; every online CPU counts as usable).
    #[arg(long, value_name = "DIR")]
    pub sysfs: Option<PathBuf>,

    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = Format::Table)]
    pub format: Format,
}

/// The topology the arguments ask for: this process's, or a recorded tree's.
pub fn topology(sysfs: Option<&PathBuf>) -> Result<Topology, Fail> {
    let Some(dir) = sysfs else {
        return Ok(Topology::current());
    };
    if !dir.join("devices/system/cpu").is_dir() {
        return Err(Fail::usage(format!(
            "--sysfs {}: no devices/system/cpu under it",
            dir.display()
        )));
    }
    let allowed = std::fs::read_to_string(dir.join("ipcperf-allowed"))
        .ok()
        .and_then(|s| ipcperf_core::topology::parse_cpu_list(&s));
    Ok(Topology::read(dir, allowed.as_deref()))
}

fn list_or_none(v: &[usize]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        format_cpu_list(v)
    }
}

fn domains(d: &[Vec<usize>]) -> String {
    if d.is_empty() {
        return "not reported".into();
    }
    d.iter()
        .map(|c| format_cpu_list(c))
        .collect::<Vec<_>>()
        .join(" | ")
}

pub fn run(a: TopologyArgs) -> Result<i32, Fail> {
    let t = topology(a.sysfs.as_ref())?;
    if t.cpus.is_empty() {
        return Err(Fail::failure("no usable CPU found in the topology"));
    }
    if a.measure {
        return measure(&a, &t);
    }
    let classes = t.classes();
    // The summary, its details, the CPUs (with --cpus) and the placement
    // classes: lines on a terminal, a list and tables in Markdown.
    let usable: Vec<usize> = t.cpus.iter().map(|p| p.cpu).collect();
    let n = usable.len();
    let plural = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
    let summary = format!(
        "{} ({}): {}, {}, {}, SMT {}",
        plural(n, "usable CPU"),
        format_cpu_list(&usable),
        plural(t.packages(), "package"),
        plural(t.nodes(), "NUMA node"),
        plural(t.cores(), "core"),
        if t.smt() { "on" } else { "off" },
    );
    let mut details = vec![
        format!(
            "offline: {}; outside this process's affinity (cpuset): {}; isolated: {}",
            list_or_none(&t.offline),
            list_or_none(&t.not_allowed),
            list_or_none(&t.isolated)
        ),
        format!("last-level cache domains: {}", domains(&t.l3_domains())),
    ];
    // The idle state decides how fast an idle CPU wakes (this machine's only).
    if a.sysfs.is_none() {
        let idle = ipcperf_core::idle::IdleInfo::current();
        details.push(format!(
            "idle: {}{}",
            idle.summary(),
            if idle.request_matters() {
                "; --idle poll keeps idle CPUs polling"
            } else {
                ""
            }
        ));
    }
    details.push(format!("L2 domains: {}", domains(&t.l2_domains())));
    let cpu_header = ["CPU", "package", "die", "core", "node", "SMT", "L2", "L3"];
    let cpu_cells: Vec<Vec<String>> = t
        .cpus
        .iter()
        .map(|p| {
            vec![
                p.cpu.to_string(),
                p.package.to_string(),
                p.die.to_string(),
                p.core.to_string(),
                p.node.map(|n| n.to_string()).unwrap_or("-".into()),
                format_cpu_list(&p.smt_siblings),
                p.l2.as_deref().map(format_cpu_list).unwrap_or("-".into()),
                p.l3.as_deref().map(format_cpu_list).unwrap_or("-".into()),
            ]
        })
        .collect();
    let classes_title = "Placement classes (--pin CLASS picks the pair shown):";
    let absent: Vec<&str> = PlacementClass::ALL
        .iter()
        .filter(|c| !classes.iter().any(|(k, _)| k == *c))
        .map(|c| c.name())
        .collect();

    // Each line fits the terminal, wrapped under a hanging indent.
    let line = |text: &str| format!("{}\n", crate::console::fit_line(text, 4));
    let mut out = line(&summary);
    for d in &details {
        out.push_str(&line(&format!("  {d}")));
    }
    if a.cpus {
        let mut tb = Table::new();
        tb.load_style(ipcperf_results::console::table_style());
        tb.set_header(cpu_header.to_vec());
        for r in &cpu_cells {
            tb.add_row(r.clone());
        }
        crate::console::fit(&mut tb);
        out.push_str(&format!("{tb}\n"));
    }
    out.push('\n');
    out.push_str(&line(classes_title));
    for (c, (x, y)) in &classes {
        out.push_str(&line(&format!(
            "  {:<13} {x}→{y}  {}",
            c.name(),
            c.describe()
        )));
    }
    if !absent.is_empty() {
        out.push_str(&line(&format!("  absent here: {}", absent.join(", "))));
    }
    // Markdown: the summary, its details as a list, the tables as tables.
    let mut md = format!("{summary}\n\n");
    for d in &details {
        md.push_str(&format!("- {d}\n"));
    }
    if a.cpus {
        md.push('\n');
        md.push_str(&markdown_rows(&cpu_header, &cpu_cells));
    }
    md.push_str(&format!("\n{classes_title}\n\n"));
    let class_rows: Vec<Vec<String>> = classes
        .iter()
        .map(|(c, (x, y))| {
            vec![
                c.name().to_string(),
                format!("{x}→{y}"),
                c.describe().to_string(),
            ]
        })
        .collect();
    md.push_str(&markdown_rows(&["class", "CPUs", "means"], &class_rows));
    if !absent.is_empty() {
        md.push_str(&format!("\nAbsent here: {}\n", absent.join(", ")));
    }
    // CSV: a missing node or cache is an empty field.
    let cpu_rows: Vec<Vec<String>> = cpu_cells
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| if c == "-" { String::new() } else { c.clone() })
                .collect()
        })
        .collect();
    let doc = Document {
        what: "a topology",
        json: json!({
            "topology": t,
            "classes": classes.iter().map(|(c, (x, y))| json!({
                "class": c.name(), "cpus": [x, y], "means": c.describe(),
            })).collect::<Vec<_>>(),
            "absent": PlacementClass::ALL.iter()
                .filter(|c| !classes.iter().any(|(k, _)| k == *c))
                .map(|c| c.name()).collect::<Vec<_>>(),
        }),
        csv: csv_rows(
            &[
                "cpu",
                "package",
                "die",
                "core",
                "node",
                "smt_siblings",
                "l2",
                "l3",
            ],
            &cpu_rows,
        ),
        table: out,
        markdown: md,
    };
    crate::console::out(&emit(&doc, a.format)?);
    Ok(0)
}

/// `topology --measure`: every pair measured, shown, drawn and saved.
fn measure(a: &TopologyArgs, t: &Topology) -> Result<i32, Fail> {
    a.format.refuse_metrics("a topology")?;
    if let Some(p) = &a.heatmap {
        crate::shared::values::heatmap_is_svg(p)?;
        crate::fail::check_writable(p)?;
    }
    let usable: Vec<usize> = t.cpus.iter().map(|p| p.cpu).collect();
    if let Some(c) = a
        .only
        .as_ref()
        .and_then(|l| l.0.iter().find(|c| !usable.contains(c)))
    {
        return Err(Fail::usage(format!(
            "CPU {c} is not one this process may use (usable: {})",
            format_cpu_list(&usable)
        )));
    }
    let mut run = ipcperf_core::record::RunRecord::begin("topology", std::env::args().collect());
    crate::console::machine_warnings(&run.machine);
    let m = crate::measured::measure(t, a.only.as_ref().map(|l| l.0.as_slice()))?;
    let in_vm = run.machine.virtualization.is_some();
    // A heatmap that cannot be written once the pairs are measured (a disk
    // that filled) loses neither the table nor the run: said after them, exit 1
    // (it returned before both: nothing was kept).
    let drawn = a
        .heatmap
        .as_ref()
        .map(|p| crate::shared::values::write_heatmap(&crate::measured::heatmap(&m, t), p));
    if let (Some(Ok(())), Some(p)) = (&drawn, &a.heatmap) {
        ipcperf_results::console::note(&format!("heatmap drawn in {}", p.display()));
    }
    run.machine.measured = Some(m.clone());
    run.finished_ms = Some(ipcperf_core::record::unix_ms());
    run.complete = true;
    let mut saver = crate::shared::db::Saver::start(&a.save, &mut run)?;
    let saved = saver.finish_quietly(&run);
    match a.format {
        Format::Json => {
            let matrix: Vec<Vec<Option<f64>>> = m
                .cpus
                .iter()
                .map(|&x| {
                    m.cpus
                        .iter()
                        .map(|&y| {
                            m.pairs
                                .iter()
                                .find(|p| p.ping == x && p.pong == y)
                                .map(|p| p.one_way_ns)
                        })
                        .collect()
                })
                .collect();
            let v = json!({
                "measured": m,
                "matrix": { "cpus": m.cpus, "one_way_ns": matrix, "rows": "ping", "columns": "pong" },
                "classes": ipcperf_core::c2c::class_medians(&m.pairs, t).iter()
                    .map(|(c, ns)| json!({"class": c.name(), "median_one_way_ns": ns}))
                    .collect::<Vec<_>>(),
            });
            ipcperf_results::outln!("{}", serde_json::to_string_pretty(&v).expect("json"));
        }
        Format::Csv => crate::console::out(&crate::measured::csv(&m, t)),
        _ => ipcperf_results::outln!(
            "{}",
            crate::measured::text(&m, t, in_vm, a.format == Format::Markdown).trim_end()
        ),
    }
    if let Some(kept) = saved {
        kept.say();
    }
    drawn.transpose()?;
    // Not kept in the history (the disk filled): said above, and not a success.
    Ok(i32::from(saver.lost()))
}
