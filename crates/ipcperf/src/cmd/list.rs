//! `ipcperf list`: mechanisms, their modes and properties, and this system's limits.

use ipcperf_core::machine::Machine;
use ipcperf_core::mechanism::MechanismKind;
use serde_json::json;

use clap::Args;

use crate::export::emit::{csv_rows, emit, markdown_rows, Document};
use crate::export::list::*;
use crate::export::Format;
use crate::fail::Fail;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf list\n  ipcperf list shm\n  ipcperf list --format json\n  ipcperf list --across net,ipc,mnt"
)]
pub struct ListArgs {
    /// One mechanism's whole description: what it is, its modes, the named objects
    /// it makes, what it is built on, and the limits that bound it here.
    #[arg(value_name = "MECHANISM")]
    pub mechanism: Option<String>,
    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = Format::Table)]
    pub format: Format,
    /// Which mechanisms cross which namespace boundary, checked on this machine:
    /// each one's peer started in a fresh namespace of each kind (net, ipc, mnt,
    /// uts; root), 50 verified round trips.
    #[arg(long, value_parser = crate::shared::args::parse_across, value_name = "KIND[,KIND...]")]
    pub across: Option<crate::shared::args::AcrossList>,
}

/// The one mechanism `name` names (an empty name, or a list, is bad input).
fn the_one(name: &str) -> Result<MechanismKind, Fail> {
    let named = match name.split(',').all(str::is_empty) {
        true => Vec::new(),
        false => crate::shared::plan::parse_mechanisms(&[name.to_string()])?,
    };
    match named[..] {
        [k] => Ok(k),
        _ => Err(Fail::usage(format!(
            "'{name}': name one mechanism (ipcperf list names them)"
        ))),
    }
}

/// The ways a mechanism's ends wait, as `--wait` names them, and how the
/// ring's `--wake` and the io_uring mechanisms relate to them.
fn waits_text(k: MechanismKind) -> String {
    use ipcperf_core::mechanism::wait::Wait;
    let own = k.waits();
    if k == MechanismKind::Shm {
        return "its own, by --wake (futex, eventfd or sem sleep as block does; spin is \
                its busy; adaptive spins, then sleeps); --wait does not apply"
            .into();
    }
    if let Some(base) = k.uring_of() {
        return format!(
            "uring: each call an io_uring completion (--wait uring on {} runs it)",
            base.name()
        );
    }
    if own == [Wait::Uring] || own == [Wait::Block] {
        return "block only: it waits its own way".into();
    }
    let mut s = Wait::list(own);
    if k.waiting(Wait::Uring) != k {
        s.push_str(&format!("; uring (runs {})", k.waiting(Wait::Uring).name()));
    }
    let apart = if own.contains(&Wait::Epoll) {
        "poll/epoll"
    } else {
        "busy/block"
    };
    s + &format!("; CLIENT/SERVER apart ({apart})")
}

/// `list MECHANISM`: everything about one.
fn one(name: &str, m: &Machine, width: usize) -> Result<String, Fail> {
    let k = the_one(name)?;
    let i = k.info();
    let modes: Vec<_> = i.modes.iter().map(|m| m.name()).collect();
    let opts = wrap_opts(width).subsequent_indent("    ");
    let mut out = String::new();
    for (label, text) in [
        ("", format!("{}: {}", i.name, i.summary)),
        ("modes", modes.join(", ")),
        ("named objects", i.names.to_string()),
        ("built on", built_on(i)),
        ("waits (--wait)", waits_text(k)),
    ] {
        let line = if label.is_empty() {
            text
        } else {
            format!("  {label}: {text}")
        };
        out.push_str(&textwrap::fill(&line, &opts));
        out.push('\n');
    }
    let prefix = limit_prefix(k);
    let limits: Vec<_> = m
        .limits
        .iter()
        .filter(|(key, _)| prefix.iter().any(|p| key.starts_with(p)))
        .collect();
    if !limits.is_empty() {
        out.push_str("  limits here:\n");
        for (key, v) in limits {
            out.push_str(&format!("    {key} = {v}\n"));
        }
    }
    Ok(out)
}

pub fn run(a: ListArgs) -> Result<i32, Fail> {
    if let Some(kinds) = &a.across {
        return across(&kinds.0, a.format);
    }
    let m = Machine::collect();
    if let Some(name) = &a.mechanism {
        let i = the_one(name)?.info();
        let modes: Vec<_> = i.modes.iter().map(|m| m.name()).collect();
        let k = the_one(name)?;
        let header = [
            "name",
            "modes",
            "named_objects",
            "built_on",
            "waits",
            "summary",
        ];
        let row = vec![vec![
            i.name.to_string(),
            modes.join(" "),
            i.names.to_string(),
            built_on(i),
            waits_text(k),
            i.summary.to_string(),
        ]];
        let doc = Document {
            what: "a mechanism",
            json: json!({
                "name": i.name,
                "summary": i.summary,
                "modes": modes,
                "named_objects": i.names,
                "built_on": built_on(i),
                "waits": k.waits().iter().map(|w| w.name()).collect::<Vec<_>>(),
                "waits_text": waits_text(k),
            }),
            csv: csv_rows(&header, &row),
            table: one(name, &m, width())?,
            markdown: markdown_rows(&header, &row),
        };
        crate::console::out(&emit(&doc, a.format)?);
        return Ok(0);
    }
    let mechanisms: Vec<serde_json::Value> = MechanismKind::INFOS
        .iter()
        .map(|i| {
            json!({
                "name": i.name,
                "summary": i.summary,
                "modes": i.modes.iter().map(|m| m.name()).collect::<Vec<_>>(),
                "named_objects": i.names,
                "built_on": built_on(i),
                "over": i.base.map(|b| b.name()),
                "library": i.library,
            })
        })
        .collect();
    let rows = |sep: &str| -> Vec<Vec<String>> {
        MechanismKind::INFOS
            .iter()
            .map(|i| {
                let modes: Vec<_> = i.modes.iter().map(|m| m.name()).collect();
                vec![
                    i.name.to_string(),
                    modes.join(sep),
                    i.names.to_string(),
                    built_on(i),
                    i.summary.to_string(),
                ]
            })
            .collect()
    };
    let key_w = m.limits.keys().map(|k| k.len()).max().unwrap_or(10);
    let mut limits = format!(
        "\n{}\n",
        crate::console::fit_line(
            &format!(
                "Limits on this system ({} CPUs, Linux {}):",
                m.cpus, m.kernel
            ),
            4
        )
    );
    for (k, v) in &m.limits {
        // A long value wraps under its column, or, where its longest word
        // would not fit there, under the name.
        let longest = v.split(' ').map(str::len).max().unwrap_or(0);
        let more = if 2 + key_w + 2 + longest <= width() {
            key_w + 2
        } else {
            4
        };
        let line = crate::console::fit_line(&format!("  {k:key_w$}  {v}"), more);
        limits.push_str(&format!("{line}\n"));
    }
    let doc = Document {
        what: "the mechanism list",
        json: json!({
            "mechanisms": mechanisms,
            "limits": m.limits,
            "cpus": m.cpus,
        }),
        csv: csv_rows(
            &["name", "modes", "named_objects", "built_on", "summary"],
            &rows(" "),
        ),
        table: format!("{}\n{}", compact(width()), limits.trim_end()),
        markdown: markdown_rows(
            &[
                "mechanism",
                "modes",
                "named objects",
                "built on",
                "what it is",
            ],
            &rows(", "),
        ),
    };
    crate::console::out(&emit(&doc, a.format)?);
    Ok(0)
}

/// `list --across`: for each mechanism that carries round trips and each kind,
/// 50 verified round trips with the peer in a fresh namespace of that kind. A
/// mechanism the rules refuse is tried anyway (nothing is kept), so the table
/// shows what happens here beside why it is refused.
fn across(kinds: &[ipcperf_core::crossing::Namespace], format: Format) -> Result<i32, Fail> {
    use ipcperf_core::crossing;
    use ipcperf_core::mode::{Mode, Placement};
    use ipcperf_core::payload::Payload;
    use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
    use ipcperf_core::record::CaseStatus;
    if matches!(format, Format::OpenMetrics | Format::Prometheus) {
        // Said before the probes, not after their seconds.
        return Err(format.not_a_run("the namespace crossings"));
    }
    if !ipcperf_sys::ns::may_unshare() {
        return Err(Fail::usage(
            "--across starts peers in new namespaces, which takes root (CAP_SYS_ADMIN)",
        ));
    }
    let env = RunEnv::new(
        ipcperf_core::mode::process::PeerCommand::current_exe()
            .map_err(|e| Fail::failure(e.to_string()))?,
    );
    let mechs: Vec<MechanismKind> = MechanismKind::ALL
        .iter()
        .copied()
        .filter(|k| k.round_trip().is_some() && k.info().modes.contains(&Mode::Processes))
        .collect();
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let mut csv = Vec::new();
    let mut obs = ipcperf_core::observer::Quiet;
    // A cell is a peer started in a namespace: seconds in all, so a bar says
    // where it is (on a terminal; the probes' failures are the table's, not errors).
    let total = mechs.len() * kinds.len();
    let mut bar = ipcperf_results::console::Console::new(total);
    for k in &mechs {
        let mut row = vec![k.name().to_string(), crossing::means(*k).to_string()];
        for &ns in kinds {
            bar.started(format!("{} across {}", k.name(), ns.name()));
            let size = k.default_round_trip_sizes().map_or(64, |s| s[0]);
            let spec = CaseSpec {
                payload: Payload::Verify,
                length: Length::Count { blocks: 50 },
                opts: ipcperf_core::mechanism::MechOptions {
                    across: vec![ns],
                    across_probe: true,
                    ..Default::default()
                },
                ..CaseSpec::new(*k, Mode::Processes, size, Placement::UNPINNED)
            };
            let rec = ipcperf_core::runner::run_latency_case(&spec, &env, &mut obs);
            let here = match rec.status {
                CaseStatus::Ok => format!(
                    "{} verified round trips",
                    rec.latency.as_ref().map_or(0, |l| l.round_trips)
                ),
                _ => format!("failed: {}", rec.message.clone().unwrap_or_default()),
            };
            let rule = crossing::refuse(*k, ns);
            let ok = rec.status == CaseStatus::Ok;
            let crosses = rule.is_none() && ok;
            let cell = match (&rule, ok) {
                (None, true) => format!("yes ({here})"),
                (None, _) => format!("no: {here}"),
                (Some(why), _) => format!(
                    "refused: {}; here: {here}",
                    why.split_once(": ").map_or(why.as_str(), |(_, w)| w)
                ),
            };
            csv.push(vec![
                k.name().to_string(),
                ns.name().to_string(),
                crosses.to_string(),
                rule.clone().unwrap_or_default(),
                here.clone(),
            ]);
            json_rows.push(json!({
                "mechanism": k.name(),
                "namespace": ns.name(),
                "crosses": crosses,
                "rule": rule,
                "checked": here,
            }));
            row.push(cell);
            ipcperf_core::observer::Observer::progress(&mut bar, csv.len(), total);
        }
        rows.push(row);
    }
    bar.finish();
    let mut header = vec!["mechanism".to_string(), "reaches its peer by".to_string()];
    header.extend(kinds.iter().map(|n| format!("across {}", n.name())));
    let t = crate::export::view::Table {
        title: "Which mechanism crosses which namespace boundary, checked here".into(),
        header: header.clone(),
        rows: rows.clone(),
        notes: vec![
            "each cell: 50 round trips, every byte verified, the peer process started \
             in a fresh namespace of that kind; \"refused\": what ipcperf refuses to \
             measure across it, and why, beside what happened when it tried"
                .into(),
        ],
    };
    let doc = Document {
        what: "the namespace crossings",
        json: serde_json::Value::Array(json_rows),
        csv: csv_rows(
            &["mechanism", "namespace", "crosses", "rule", "checked"],
            &csv,
        ),
        table: crate::export::table::render_tables(&[t])
            .trim_start_matches('\n')
            .to_string(),
        markdown: markdown_rows(&header, &rows),
    };
    crate::console::out(&emit(&doc, format)?);
    Ok(0)
}
