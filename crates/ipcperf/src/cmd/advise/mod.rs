//! `ipcperf advise`: which mechanism to use here, measured now. It plans the
//! cases the question needs (every candidate at the size asked, at every
//! placement class this machine has unless one is named), runs and saves them
//! as any run is saved, then ranks them (see [`crate::advise`]).

mod candidates;
mod flags;
pub mod pattern;
pub(crate) use candidates::{candidates, left_across};

use clap::{Args, Parser};

use crate::advise::{self, Answer, Ask, Figure, Pattern};
use crate::console::Console;
use crate::fail::Fail;
use crate::shared::db::{SaveArgs, Saver};
use crate::units;
use ipcperf_core::mechanism::MechanismKind;
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::plan::{CaseSpec, RunEnv};
use ipcperf_core::record::RunRecord;
use ipcperf_core::runner;

#[derive(Args, Debug)]
#[command(
    after_help = "Every figure in the answer comes from the run it makes and saves (`ipcperf show` \
                  it). Examples:\n  ipcperf advise --traffic request-reply --sizes 512\n  ipcperf \
                  advise --traffic stream --sizes 64k --cpu-budget 1\n  ipcperf advise --traffic \
                  notify --latency p99 --placement other-l3\n  ipcperf advise --messages \
                  --posix-only --quick"
)]
pub struct AdviseArgs {
    /// What the processes' traffic is: request-reply (round trips), stream
    /// (throughput), notify (a wake-up, the smallest message each mechanism
    /// carries), fan-in (--fan clients, one server), fan-out (one writer, --fan
    /// readers). Was --pattern, which still works.
    #[arg(long = "traffic", alias = "pattern", value_parser = crate::shared::choice::choice::<Pattern>(), default_value_t = Pattern::RequestReply)]
    pub pattern: Pattern,

    /// Output format: the answer as tables (the default), its ranking as JSON
    /// (every figure with its range, the tie groups, the first choice and why),
    /// CSV or Markdown.
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = crate::export::Format::Table)]
    pub format: crate::export::Format,

    /// Message or block size: one, as the answer is for one traffic (default 512
    /// for round trips, 64k for streams; k = 1024, kB = 1000). Was --size, which
    /// still works.
    #[arg(long = "sizes", alias = "size", value_name = "SIZE", value_parser = units::parse_block)]
    pub size: Option<usize>,

    /// Fan-in: how many clients; fan-out: how many readers (default 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=64))]
    pub fan: Option<u32>,

    /// Which round-trip figure decides (default p99; streams and fan-out are
    /// ranked by throughput).
    #[arg(long, value_parser = crate::shared::choice::choice::<Figure>())]
    pub latency: Option<Figure>,

    /// Rank round trips by how many per second, not by a latency (streams are
    /// always ranked by throughput).
    #[arg(long, conflicts_with = "latency")]
    pub throughput: bool,

    /// The most CPUs both sides may keep busy together: a mechanism over it (a
    /// spinning wait keeps a CPU busy) is left out.
    #[arg(long, value_name = "CPUS")]
    pub cpu_budget: Option<f64>,

    /// Where the two sides will run: a class (same-cpu, smt-sibling, shared-l3,
    /// other-l3, ...; see `ipcperf topology`), or unknown: every class this
    /// machine has, and each mechanism ranked by its worst.
    #[arg(long, default_value = "unknown", value_parser = parse_placement)]
    pub placement: String,

    /// Only what POSIX offers (no eventfd, memfd rings, futex, vmsplice, cma,
    /// io_uring or epoll: the event loop's wait measured is poll).
    #[arg(long)]
    pub posix_only: bool,

    /// Message boundaries must be kept (no byte streams).
    #[arg(long)]
    pub messages: bool,

    /// The two sides are in different namespaces of these kinds (net, ipc, mnt,
    /// uts; root): only mechanisms that cross, measured with the peer in fresh
    /// namespaces (see `ipcperf list --across`).
    #[arg(long, value_parser = crate::shared::args::parse_across, value_name = "KIND[,KIND...]")]
    pub across: Option<crate::shared::args::AcrossList>,

    /// Only these candidates (comma list; default: every mechanism that fits
    /// the pattern). Was --only, which still works.
    #[arg(
        long = "mechanisms",
        alias = "only",
        value_delimiter = ',',
        value_name = "MECHANISM"
    )]
    pub only: Vec<String>,

    /// The CPUs' idle state: as-is (the default) ranks at the machine's own idle
    /// and, where an idle CPU may halt, measures each candidate across CPUs at
    /// polling idle too and says what that changes; poll (or a latency in µs,
    /// 20us) ranks there alone. Root, for poll.
    #[arg(long, value_parser = ipcperf_core::idle::parse_idle, default_value = "as-is", value_name = "as-is|poll|LATENCY")]
    pub idle: ipcperf_core::idle::Idle,

    /// The ways the descriptor candidates (pipe, fifo, sockets) wait, each
    /// measured and ranked beside the others (`unix (epoll)`): block, poll,
    /// epoll, busy, or CLIENT/SERVER (poll/epoll), a comma list. Default: block,
    /// epoll (an event loop's wait; poll with --posix-only) and, unless
    /// --cpu-budget is under 2, busy.
    /// Mechanisms that wait their own way keep it (shm: --wake futex,spin).
    #[arg(long, value_name = "WAIT[,WAIT...]")]
    pub wait: Option<String>,

    /// Shorter series (100 ms each instead of 300 ms): a faster, rougher answer.
    #[arg(long, conflicts_with = "from_history")]
    pub quick: bool,

    /// Length of each of a candidate's 5 series (default 300ms; 100ms with
    /// --quick, which this overrides): longer for a firmer answer, shorter
    /// for a rougher one sooner.
    #[arg(long, short, value_parser = units::parse_series_duration, value_name = "DURATION", conflicts_with_all = ["from_history", "pattern_file"])]
    pub duration: Option<std::time::Duration>,

    /// Measure nothing: rank what the kept runs of this host (same ipcperf
    /// version, complete) measured, the newest figure of each case; the answer
    /// names the runs it read.
    #[arg(long)]
    pub from_history: bool,

    /// Rank on your application's traffic instead: replay this trace's
    /// conversation (strace's output or a CSV; see `ipcperf replay`) over each
    /// candidate, ranked by its messages' latency from when each was due.
    #[arg(long, value_name = "TRACE", conflicts_with_all = ["pattern", "size", "fan", "throughput", "from_history", "sizes"])]
    pub pattern_file: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub source: crate::shared::replay::PatternSource,

    #[command(flatten)]
    pub save: SaveArgs,
}

/// The argument lines of the measuring commands the question needs.
fn plan(a: &AdviseArgs) -> Result<Vec<CaseSpec>, Fail> {
    #[derive(Parser)]
    struct Latency {
        #[command(flatten)]
        a: crate::shared::round_trip::LatencyArgs,
    }
    #[derive(Parser)]
    struct Stream {
        #[command(flatten)]
        a: crate::shared::stream::RunArgs,
    }
    let mechs = candidates(a)?;
    let series = format!("{}ns", series_len(a).as_nanos());
    let place: Vec<String> = if a.placement == "unknown" {
        vec!["--placements".into(), "all".into()]
    } else {
        vec!["--pin".into(), a.placement.clone()]
    };
    let mut specs = Vec::new();
    // Each group of candidates with the same size rule is one plan.
    let groups: Vec<(Vec<String>, Option<String>)> = match a.pattern {
        // Planned by `advise_pattern`.
        Pattern::Replay => Vec::new(),
        Pattern::RequestReply | Pattern::FanIn => {
            vec![(mechs, Some(a.size.unwrap_or(512).to_string()))]
        }
        Pattern::Stream | Pattern::FanOut => {
            vec![(mechs, Some(a.size.unwrap_or(64 * 1024).to_string()))]
        }
        // The smallest message each carries: its own size, else 1 byte.
        Pattern::Notify => {
            let (own, rest): (Vec<String>, Vec<String>) = mechs.into_iter().partition(|m| {
                MechanismKind::from_name(m).is_some_and(|k| k.default_round_trip_sizes().is_some())
            });
            vec![(own, None), (rest, Some("1".to_string()))]
        }
    };
    for (mechs, size) in groups {
        if mechs.is_empty() {
            continue;
        }
        let mut argv: Vec<String> = vec!["ipcperf".into()];
        argv.extend(mechs.iter().cloned());
        if let Some(s) = size {
            argv.extend(["--sizes".into(), s]);
        }
        argv.extend(["-d".into(), series.clone(), "-r".into(), "5".into()]);
        if let Some(ns) = &a.across {
            argv.extend([
                "--across".into(),
                ipcperf_core::crossing::Namespace::list_name(&ns.0),
            ]);
        }
        argv.extend(place.iter().cloned());
        if !a.idle.is_as_is() {
            argv.extend(["--idle".into(), a.idle.label()]);
        }
        match a.pattern {
            Pattern::FanIn => argv.extend(["--clients".into(), a.fans().to_string()]),
            Pattern::FanOut => argv.extend(["--subscribers".into(), a.fans().to_string()]),
            _ => {}
        }
        // The ring: sleeping and spinning waits, both named in the answer.
        if mechs.iter().any(|m| m == "shm") {
            argv.extend(["--wake".into(), "futex,spin".into()]);
        }
        let usage = |e: clap::Error| Fail::usage(first_line(&e.to_string()));
        let parsed = match a.pattern {
            Pattern::Stream | Pattern::FanOut => {
                let s = Stream::try_parse_from(&argv).map_err(usage)?;
                crate::shared::args::fan_cases(
                    crate::shared::stream::plan(&s.a)?,
                    s.a.subscribers.as_ref(),
                    true,
                    (
                        "--subscribers",
                        ipcperf_core::workload::fanin::refuse_fan_out,
                    ),
                    |s, n| s.subscribers = n,
                )
            }
            _ => {
                let l = Latency::try_parse_from(&argv).map_err(usage)?;
                crate::shared::args::fan_cases(
                    crate::shared::round_trip::plan(&l.a)?,
                    l.a.clients.as_ref(),
                    true,
                    ("--clients", ipcperf_core::workload::fanin::refuse),
                    |s, n| s.clients = n,
                )
            }
        };
        specs.extend(parsed?);
    }
    specs = candidates::with_waits(specs, &candidates::waits(a)?);
    // At the machine's idle, each cross-CPU candidate at polling idle too.
    if a.idle.is_as_is() && !a.from_history {
        crate::shared::plan::idle_twins(&mut specs);
    }
    Ok(specs)
}

/// Each series' length: --duration, else 100 ms (--quick) or 300 ms.
fn series_len(a: &AdviseArgs) -> std::time::Duration {
    let ms = std::time::Duration::from_millis;
    a.duration
        .unwrap_or(if a.quick { ms(100) } else { ms(300) })
}

/// `--placement`: unknown, or what `--pin` takes (said in `--placement`'s
/// name: it was refused as a bad `--pin`, a flag the user never gave).
fn parse_placement(s: &str) -> Result<String, String> {
    if s == "unknown" {
        return Ok(s.to_string());
    }
    crate::shared::values::parse_pin(s)
        .map(|_| s.to_string())
        .map_err(|e| format!("{e}; or unknown: every class this machine has"))
}

pub(crate) fn first_line(s: &str) -> String {
    s.lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_string()
}

pub fn run(a: AdviseArgs) -> Result<i32, Fail> {
    a.format.refuse_metrics("an answer")?;
    a.check_applies()?;
    let mut specs = plan(&a)?;
    let streams = matches!(a.pattern, Pattern::Stream | Pattern::FanOut);
    let ask = Ask {
        pattern: a.pattern,
        figure: if a.throughput && !streams {
            Figure::Rate
        } else {
            a.figure()
        },
        cpu_budget: a.cpu_budget,
        posix_only: a.posix_only,
        messages: a.messages,
    };
    let left = candidates::drop_left_out(&mut specs, &ask)?;
    if a.from_history {
        return from_history(&a, (&ask, &left), &specs);
    }
    // Said up front: what it will measure, and for about how long.
    // Five series and a warm-up a case, and its set-up.
    let per_case_ms = series_len(&a).as_millis() as u64 * 6 + 200;
    crate::console::note(&format!(
        "measuring {} cases for the answer, about {} s",
        specs.len(),
        (specs.len() as u64 * per_case_ms).div_ceil(1000)
    ));
    let env = RunEnv::new(PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?);
    let mut run = RunRecord::begin("advise", std::env::args().collect());
    let mut saver = Saver::start(&a.save, &mut run)?;
    crate::console::machine_warnings(&run.machine);
    let mut console = Console::new(specs.len());
    run.cases = match a.pattern {
        Pattern::Stream | Pattern::FanOut => {
            runner::run_all(&specs, &env, &mut saver.observe(&mut console))
        }
        _ => runner::run_all_latency(&specs, &env, &mut saver.observe(&mut console)),
    };
    answer(run, saver, &mut console, (&ask, &left), &a, |_| {
        String::new()
    })
}

/// The ending of both forms of advise: the run saved, ranked and answered (with
/// `more` after the answer); exit 0 when there is an answer. A candidate that
/// failed is in the answer's list of what did not run; the answer stands.
pub(crate) fn answer(
    run: RunRecord,
    saver: Saver,
    console: &mut Console,
    (ask, left): (&Ask, &[(String, String)]),
    a: &AdviseArgs,
    more: impl FnOnce(&RunRecord) -> String,
) -> Result<i32, Fail> {
    let answered = std::cell::Cell::new(false);
    let code = crate::shared::ending::finish(
        run,
        saver,
        console,
        |r| {
            let (asis, held) = advise::idle::split(r);
            let mut ans = advise::rank(&asis, ask);
            // Left out unmeasured beside those measured and left out, by name.
            ans.excluded.extend(left.iter().cloned());
            ans.excluded.sort();
            ans.excluded.extend(left_across(a));
            answered.set(ans.first.is_some());
            let poll = held.map(|h| advise::rank(&h, ask));
            if a.format != crate::export::Format::Table {
                return formatted(&ans, poll.as_ref(), ask, a);
            }
            let mut out = render(&ans, ask, a);
            if let Some(p) = &poll {
                out.push_str(&advise::idle::section(&ans, p, ask));
            }
            out.push_str(&more(r));
            out
        },
        false,
    )?;
    Ok(if answered.get() { 0 } else { code.max(1) })
}

/// The newest kept figure of each planned case, from complete runs of this host
/// and ipcperf version, ranked without measuring.
fn from_history(
    a: &AdviseArgs,
    (ask, left): (&Ask, &[(String, String)]),
    specs: &[CaseSpec],
) -> Result<i32, Fail> {
    use ipcperf_core::record::CaseRecord;
    let here = RunRecord::begin("advise", Vec::new());
    let mut store = a.save.db.open_read()?;
    let runs = store
        .list_runs()
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    // What each planned case is, to find it again in a kept run: the placement
    // class, not the CPUs, which may differ from run to run.
    let key = |c: &CaseRecord| {
        (
            c.mechanism.clone(),
            c.wait.clone(),
            c.block_size,
            c.placement.label.clone(),
            // A case held at another idle (an advise's polling-idle twin) is
            // another case.
            c.options.get("idle").cloned(),
        )
    };
    let want_workload = match a.pattern {
        Pattern::Stream | Pattern::FanOut => ipcperf_core::workload::Workload::Stream,
        _ => ipcperf_core::workload::Workload::RoundTrip,
    };
    // Fan-in and fan-out cases are found by their shape and count too.
    let fan = |c: &CaseRecord| match &c.pairs {
        Some(p) if p.fan_in || p.fan_out => (p.fan_in, p.fan_out, p.count),
        _ => (false, false, 0),
    };
    let want_fan = match a.pattern {
        Pattern::FanIn => (true, false, a.fans()),
        Pattern::FanOut => (false, true, a.fans()),
        _ => (false, false, 0),
    };
    let planned: Vec<CaseRecord> = specs.iter().map(CaseRecord::for_spec).collect();
    let wanted: Vec<_> = planned.iter().map(key).collect();
    let mut found: Vec<Option<(i64, CaseRecord)>> = vec![None; wanted.len()];
    let mut newest_first: Vec<_> = runs
        .iter()
        .filter(|r| r.complete && r.hostname == here.machine.host())
        .collect();
    newest_first.sort_by_key(|r| std::cmp::Reverse(r.started_ms));
    for r in newest_first {
        if found.iter().all(Option::is_some) {
            break;
        }
        let Ok(Some(run)) = store.load_run(r.id) else {
            continue;
        };
        if run.ipcperf_version != here.ipcperf_version {
            continue;
        }
        for c in run.cases.iter().filter(|c| {
            c.status == ipcperf_core::record::CaseStatus::Ok
                && fan(c) == want_fan
                && (want_fan.2 > 0 || c.pairs.is_none())
                && c.workload == want_workload
                && !c.options.contains_key("rate_per_sec")
        }) {
            if let Some(i) = wanted.iter().position(|w| *w == key(c)) {
                if found[i].is_none() {
                    found[i] = Some((r.id, c.clone()));
                }
            }
        }
    }
    // Named with their wait and idle: "pipe same-cpu" said three times was
    // three cases.
    let missing: Vec<String> = planned
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|(c, _)| {
            let idle = c.options.get("idle").map(|v| format!(" idle={v}"));
            let name = crate::export::cells::mechanism_label(c);
            format!("{name} {}{}", c.placement.label, idle.unwrap_or_default())
        })
        .collect();
    let mut ids: Vec<i64> = found.iter().flatten().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut kept = here.clone();
    kept.cases = found.into_iter().flatten().map(|(_, c)| c).collect();
    if kept.cases.is_empty() {
        return Err(Fail::failure(format!(
            "no kept run of {} (ipcperf {}) measured these cases: run `ipcperf advise` without \
             --from-history to measure them",
            here.machine.hostname, here.ipcperf_version
        )));
    }
    // Every input check is behind (the plan's notes were held till now).
    crate::console::release();
    let mut ans = advise::rank(&kept, ask);
    // What the question rules out was not looked up: said with the rest.
    ans.excluded.extend(left.iter().cloned());
    ans.excluded.sort();
    ans.excluded.extend(left_across(a));
    if a.format != crate::export::Format::Table {
        crate::console::out(&formatted(&ans, None, ask, a));
        return Ok(if ans.first.is_some() { 0 } else { 1 });
    }
    let mut out = render(&ans, ask, a);
    let line = format!(
        "Figures from kept run{} {} ({} of {} cases found; `ipcperf show ID` for each)",
        if ids.len() == 1 { "" } else { "s" },
        ids.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        kept.cases.len(),
        wanted.len()
    );
    out.push_str(&format!("\n{}\n", crate::console::fit_line(&line, 2)));
    if !missing.is_empty() {
        let line = format!(
            "  not in any kept run (measure them without --from-history): {}",
            missing.join(", ")
        );
        out.push_str(&format!("{}\n", crate::console::fit_line(&line, 2)));
    }
    crate::console::out(&out);
    Ok(if ans.first.is_some() { 0 } else { 1 })
}

/// The answer in `a.format` other than the table (json, csv, markdown): the
/// ranking row by row, with the first choice, runner-up, what was left out or
/// could not run, the caveats and the ceilings.
fn formatted(ans: &Answer, poll: Option<&Answer>, ask: &Ask, a: &AdviseArgs) -> String {
    let t = advise::ranked_table(ans, ask, title(ask, a));
    let groups = advise::tie_groups(&ans.ranked);
    // Where measured, the ranking at polling idle: rank, tie group, figure.
    let at_poll = poll.map(|p| {
        let g = advise::tie_groups(&p.ranked);
        p.ranked
            .iter()
            .enumerate()
            .map(|(i, r)| {
                serde_json::json!({
                    "rank": i + 1, "tie_with_rank": g[i] + 1, "mechanism": r.name,
                    "value": r.value, "low": r.low, "high": r.high,
                })
            })
            .collect::<Vec<_>>()
    });
    let pairs = |v: &[(String, String)]| -> Vec<serde_json::Value> {
        v.iter()
            .map(|(n, why)| serde_json::json!({ "mechanism": n, "why": why }))
            .collect()
    };
    let json = serde_json::json!({
        "question": t.title,
        "ranked": ans.ranked.iter().enumerate().map(|(i, r)| serde_json::json!({
            "rank": i + 1,
            // The rank of the group's first row: rows of one group tie.
            "tie_with_rank": groups[i] + 1,
            "mechanism": r.name,
            "value": r.value,
            "low": r.low,
            "high": r.high,
            "unit": if matches!(ask.pattern, Pattern::Stream | Pattern::FanOut) { "bytes/s" } else if ask.figure == Figure::Rate { "round trips/s" } else { "ns" },
            "placement": r.placement,
            "cpu_load": r.cpu_load,
            "spins": r.spins,
            "why": r.why,
        })).collect::<Vec<_>>(),
        "first_choice": ans.first,
        "runner_up": ans.runner_up,
        "left_out": pairs(&ans.excluded),
        "could_not_run": pairs(&ans.not_run),
        "caveats": ans.caveats,
        "ceilings": ans.ceilings.iter().map(|(n, v)| serde_json::json!({ "mechanism": n, "figure": v })).collect::<Vec<_>>(),
        "at_polling_idle": at_poll,
    });
    let mut markdown = format!("**{}**\n\n", t.title);
    markdown.push_str(&crate::export::emit::markdown_rows(&t.header, &t.rows));
    for line in ans
        .first
        .iter()
        .map(|f| format!("First choice: {f}"))
        .chain(ans.runner_up.iter().map(|r| format!("Runner-up: {r}")))
        .chain(t.notes.iter().cloned())
        .chain(ans.caveats.iter().cloned())
    {
        markdown.push_str(&format!("\n- {line}"));
    }
    markdown.push('\n');
    let doc = crate::export::emit::Document {
        what: "an answer",
        json,
        csv: crate::export::emit::csv_rows(&t.header, &t.rows),
        table: String::new(),
        markdown,
    };
    crate::export::emit::emit(&doc, a.format).unwrap_or_else(|f| f.message)
}

/// The question, as the answer's title: the traffic, its size, how it is
/// ranked, and every constraint asked.
fn title(ask: &Ask, a: &AdviseArgs) -> String {
    let by = if ask.figure == Figure::Rate {
        "round trips per second".to_string()
    } else {
        format!("the {} round trip", ask.figure.name())
    };
    let what = match a.pattern {
        Pattern::RequestReply => format!(
            "request-reply, {} B messages, ranked by {by}",
            a.size.unwrap_or(512)
        ),
        Pattern::Stream => format!(
            "stream, {} B blocks, ranked by throughput",
            a.size.unwrap_or(64 * 1024)
        ),
        Pattern::Notify => {
            format!("notify (the smallest message each carries), ranked by {by}")
        }
        Pattern::FanIn => format!(
            "fan-in, {} clients to one server, {} B messages, ranked by {by}",
            a.fans(),
            a.size.unwrap_or(512)
        ),
        Pattern::FanOut => format!(
            "fan-out, one writer to {} readers, {} B blocks, ranked by the slowest reader",
            a.fans(),
            a.size.unwrap_or(64 * 1024)
        ),
        Pattern::Replay => format!(
            "the replayed pattern, ranked by the {} message latency from when due",
            ask.figure.name()
        ),
    };
    let mut title = format!("Which to use here: {what}; placement {}", a.placement);
    if let Some(b) = a.cpu_budget {
        title.push_str(&format!("; CPU budget {b}"));
    }
    if a.posix_only {
        title.push_str("; POSIX only");
    }
    if a.messages {
        title.push_str("; message boundaries kept");
    }
    if let Some(ns) = &a.across {
        title.push_str(&format!(
            "; across {}",
            ipcperf_core::crossing::Namespace::list_name(&ns.0)
        ));
    }
    title
}

pub(crate) fn render(ans: &Answer, ask: &Ask, a: &AdviseArgs) -> String {
    let mut out = String::new();
    let title = title(ask, a);
    if ans.ranked.is_empty() {
        out.push_str(&format!("{title}\n\nNo mechanism qualifies.\n"));
    } else {
        let t = advise::ranked_table(ans, ask, title);
        out.push_str(crate::export::table::render_tables(&[t]).trim_start_matches('\n'));
    }
    // Prose wrapped to the terminal, each line's later lines under its words.
    let say = |out: &mut String, line: String, more: usize| {
        out.push_str(&crate::console::fit_line(&line, more));
        out.push('\n');
    };
    if let Some(f) = &ans.first {
        out.push('\n');
        say(&mut out, format!("First choice: {f}"), 2);
    }
    if let Some(r) = &ans.runner_up {
        say(&mut out, format!("Runner-up: {r}"), 2);
    }
    for (names, why) in advise::left_out_lines(&ans.excluded) {
        say(&mut out, format!("  left out: {names}: {why}"), 2);
    }
    for (n, why) in &ans.not_run {
        say(&mut out, format!("  could not run: {n}: {why}"), 2);
    }
    if !ans.caveats.is_empty() {
        out.push_str("\nMeasured on this machine:\n");
        for c in &ans.caveats {
            say(&mut out, format!("  - {c}"), 2);
        }
    }
    out
}
