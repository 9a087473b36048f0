//! "Which should I use?": a ranking of the mechanisms measured in a run, for
//! one pattern and the constraints a user gives. Records in, an answer out: no
//! system calls here, and every figure in the answer is a case's.

pub mod idle;
mod names;

use std::collections::BTreeMap;

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};
use ipcperf_core::workload::Workload;

/// What the user's processes do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    RequestReply,
    Stream,
    Notify,
    FanIn,
    FanOut,
    /// A recorded or fitted pattern replayed (`advise --pattern-file`): ranked by
    /// its messages' latency from when each was due. Not named by users.
    Replay,
}

/// Which figure decides, for round trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    P50,
    P99,
    P999,
    /// Round trips per second (`advise --throughput`). Not named by users.
    Rate,
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::P50 => "p50",
            Figure::P99 => "p99",
            Figure::P999 => "p99.9",
            Figure::Rate => "round trips/s",
        }
    }
}

/// The question.
#[derive(Debug, Clone)]
pub struct Ask {
    pub pattern: Pattern,
    pub figure: Figure,
    /// The most CPUs both sides may keep busy together (a spinning wait keeps one
    /// busy whatever the load); None: no limit.
    pub cpu_budget: Option<f64>,
    /// Only what POSIX offers (no eventfd, memfd, futex, vmsplice, process_vm_*).
    pub posix_only: bool,
    /// Message boundaries kept (no byte streams).
    pub messages: bool,
}

/// One mechanism as ranked: its worst figure over the placements measured.
#[derive(Debug, Clone)]
pub struct Row {
    /// The mechanism and its wait, as tables name it (`shm (spin)`).
    pub name: String,
    /// The deciding figure: ns for round trips (lower is better), bytes/s for
    /// streams (higher is better); at its worst placement.
    pub value: f64,
    /// The series' range around it (the same placement).
    pub low: f64,
    pub high: f64,
    /// The placement that gave the worst figure.
    pub placement: String,
    /// CPUs busy (both sides), the most over its cases.
    pub cpu_load: f64,
    /// Its wait spins (spin, busy-poll, adaptive's spinning part) rather than
    /// sleeping in the kernel.
    pub spins: bool,
    /// Why it qualifies.
    pub why: String,
    /// Every placement's figure, for "when would the runner-up win".
    pub by_placement: BTreeMap<String, f64>,
    /// The round trips beyond each percentile at that placement (what a tail
    /// figure rests on); None for streams and rates.
    pub beyond: Option<ipcperf_core::latency::Beyond>,
    /// Context switches per message, both sides, at that placement (None: not
    /// counted): part of why a figure is what it is.
    pub switches: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct Answer {
    pub ranked: Vec<Row>,
    /// Mechanisms measured but left out, and why.
    pub excluded: Vec<(String, String)>,
    /// Cases that could not run, and why (refused or failed).
    pub not_run: Vec<(String, String)>,
    pub first: Option<String>,
    pub runner_up: Option<String>,
    pub caveats: Vec<String>,
    /// Reference ceilings measured beside the candidates (`memcpy`, `null`: one
    /// side, no IPC), never ranked: their names and figures, as shown.
    pub ceilings: Vec<(String, String)>,
}

/// Mechanisms Linux has and POSIX does not (or that need a Linux call to set up:
/// the ring is a memfd woken by a futex). Real-time signals with sigqueue are
/// POSIX.1b.
const LINUX_ONLY: &[&str] = &["eventfd", "vmsplice", "cma", "shm", "memcpy", "null"];

/// What makes a case Linux only, beyond its mechanism: io_uring (the `uring-*`
/// twins and their `io_uring` wait) and epoll are Linux calls; POSIX waits with
/// a blocking call, poll or select. None: nothing (the mechanism may still be).
fn linux_only_wait(mech: &str, wait: &str) -> Option<&'static str> {
    if mech.starts_with("uring-") || wait.split('/').any(|w| w == "io_uring" || w == "uring") {
        return Some("io_uring");
    }
    if wait.split('/').any(|w| w == "epoll" || w == "try-epoll") {
        return Some("epoll");
    }
    None
}

/// Whether a case's wait (the record's `wait`) spins on a CPU while it waits.
fn spinning_wait(wait: &str) -> bool {
    // A client/server pair (`busy/block`) spins where either side does.
    wait.split('/')
        .any(|w| matches!(w, "spin" | "busy-poll" | "busy" | "adaptive"))
}

/// Mechanisms that carry a byte stream (no message boundaries).
const BYTE_STREAMS: &[&str] = &[
    "pipe", "fifo", "unix", "tcp", "shm", "vmsplice", "file", "cma",
];

/// Whether a higher figure is better (streams) or a lower one (round trips).
/// Whether the pattern is a flow of blocks (throughput cases).
fn streams(p: Pattern) -> bool {
    matches!(p, Pattern::Stream | Pattern::FanOut)
}

/// Whether a higher figure is better: bytes or round trips per second.
fn higher_is_better(ask: &Ask) -> bool {
    streams(ask.pattern) || ask.figure == Figure::Rate
}

/// Whether a case is of the shape the pattern asks (fan-in and fan-out cases
/// only for those patterns; one pair otherwise).
fn shaped(c: &CaseRecord, p: Pattern) -> bool {
    match (p, &c.pairs) {
        (Pattern::FanIn, Some(pr)) => pr.fan_in,
        (Pattern::FanOut, Some(pr)) => pr.fan_out,
        (Pattern::FanIn | Pattern::FanOut, None) => false,
        (_, pairs) => pairs.is_none(),
    }
}

/// The deciding figure of a case and its range over the series.
fn figure(c: &CaseRecord, ask: &Ask) -> Option<(f64, f64, f64)> {
    if ask.pattern == Pattern::FanOut {
        // The slowest reader's own rate; the case's series range, scaled.
        let pr = c.pairs.as_ref()?;
        let slowest = pr
            .per_pair
            .iter()
            .filter(|p| p.elapsed_ns > 0)
            .map(|p| p.bytes as f64 / p.elapsed_ns as f64 * 1e9)
            .fold(f64::INFINITY, f64::min);
        let m = c.median_bytes_per_sec?;
        if !slowest.is_finite() || m <= 0.0 {
            return None;
        }
        let scale = |x: Option<f64>| x.map_or(slowest, |x| x / m * slowest);
        return Some((
            slowest,
            scale(c.min_bytes_per_sec),
            scale(c.max_bytes_per_sec),
        ));
    }
    if streams(ask.pattern) {
        let m = c.median_bytes_per_sec?;
        return Some((
            m,
            c.min_bytes_per_sec.unwrap_or(m),
            c.max_bytes_per_sec.unwrap_or(m),
        ));
    }
    let l = c.latency.as_ref()?;
    if ask.figure == Figure::Rate {
        // A rate goes as one over the round trip: the series' p50s, inverted.
        let v = l.round_trips_per_sec;
        let (lo, hi) = match (l.series_p50_ns.iter().max(), l.series_p50_ns.iter().min()) {
            (Some(&slow), Some(&fast)) if slow > 0 && fast > 0 => (
                l.p50_ns as f64 / slow as f64 * v,
                l.p50_ns as f64 / fast as f64 * v,
            ),
            _ => (v, v),
        };
        return Some((v, lo, hi));
    }
    let v = match ask.figure {
        Figure::P50 => l.p50_ns,
        Figure::P99 => l.p99_ns,
        Figure::P999 | Figure::Rate => l.p999_ns,
    } as f64;
    // Ranked on the p99: its spread is the series' own p99s, where they were kept.
    if ask.figure == Figure::P99 && !l.series_p99_ns.is_empty() {
        let (lo, hi) = (
            l.series_p99_ns.iter().copied().min().unwrap_or(l.p99_ns),
            l.series_p99_ns.iter().copied().max().unwrap_or(l.p99_ns),
        );
        return Some((v, (lo as f64).min(v), (hi as f64).max(v)));
    }
    // Else the series' p50s give the spread; a tail percentile kept over all the
    // round trips at once (the p99.9) takes the p50s' relative range, scaled.
    let (lo, hi) = match (l.series_p50_ns.iter().min(), l.series_p50_ns.iter().max()) {
        (Some(&lo), Some(&hi)) if l.p50_ns > 0 => (
            lo as f64 / l.p50_ns as f64 * v,
            hi as f64 / l.p50_ns as f64 * v,
        ),
        _ => (v, v),
    };
    Some((v, lo, hi))
}

fn constraint(name: &str, (mech, wait): (&str, &str), cpu_load: f64, ask: &Ask) -> Option<String> {
    if ask.posix_only && LINUX_ONLY.contains(&mech) {
        return Some(format!("{name} is Linux only (--posix-only)"));
    }
    if ask.posix_only {
        if let Some(call) = linux_only_wait(mech, wait) {
            return Some(format!("{name}: {call} is Linux only (--posix-only)"));
        }
    }
    if ask.messages && BYTE_STREAMS.contains(&mech) {
        return Some(format!(
            "{name} is a byte stream: message boundaries are not kept (--messages)"
        ));
    }
    if let Some(b) = ask.cpu_budget {
        if cpu_load > b + 0.05 {
            return Some(format!(
                "{name} kept {cpu_load:.2} CPUs busy, over the budget of {b}"
            ));
        }
    }
    None
}

/// Why a case would be left out whatever it measured (`--posix-only`,
/// `--messages`): its name as the answer says it and the reason. None: it
/// must be measured to tell (a CPU budget) or it qualifies. advise leaves such
/// cases unmeasured.
pub fn left_out_unmeasured(c: &CaseRecord, ask: &Ask) -> Option<(String, String)> {
    let name = crate::export::view::mechanism_label(c);
    let unbounded = Ask {
        cpu_budget: None,
        ..ask.clone()
    };
    constraint(&name, (&c.mechanism, &c.wait), 0.0, &unbounded).map(|why| (name, why))
}

/// Rank the run's cases for `ask`.
pub fn rank(run: &RunRecord, ask: &Ask) -> Answer {
    let want = if streams(ask.pattern) {
        Workload::Stream
    } else if ask.pattern == Pattern::Replay {
        Workload::Replay
    } else {
        Workload::RoundTrip
    };
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut mech_of: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut not_run = Vec::new();
    let mut ceilings: BTreeMap<String, f64> = BTreeMap::new();
    let better = |a: f64, b: f64| {
        if higher_is_better(ask) {
            a > b
        } else {
            a < b
        }
    };
    for c in run
        .cases
        .iter()
        .filter(|c| c.workload == want && shaped(c, ask.pattern))
    {
        // Named as the tables name it (`shm (spin)`, `shm (spin, zero-copy)`).
        let name = crate::export::view::mechanism_label(c);
        if c.status != CaseStatus::Ok {
            // One line for a mechanism and reason, its placements together.
            let why = c.message.clone().unwrap_or_else(|| "did not run".into());
            let place = c.placement.label.clone();
            match not_run
                .iter_mut()
                .find(|(n, _, w): &&mut (String, Vec<String>, String)| *n == name && *w == why)
            {
                Some((_, places, _)) => places.push(place),
                None => not_run.push((name, vec![place], why)),
            }
            continue;
        }
        let Some((v, lo, hi)) = figure(c, ask) else {
            continue;
        };
        // A mechanism with one side (a copy in memory, writes to nothing) is
        // how fast bytes move without IPC: a ceiling beside the ranking, no
        // way for two processes to talk. Its best placement.
        if crate::export::cells::one_sided(c) {
            let e = ceilings.entry(name).or_insert(v);
            if better(v, *e) {
                *e = v;
            }
            continue;
        }
        let load = c.median_cpu_load.unwrap_or(0.0);
        let beyond = c.latency.as_ref().and_then(|l| l.beyond());
        mech_of.insert(name.clone(), (c.mechanism.clone(), c.wait.clone()));
        let row = rows.entry(name.clone()).or_insert_with(|| Row {
            name: name.clone(),
            value: v,
            low: lo,
            high: hi,
            placement: c.placement.label.clone(),
            cpu_load: load,
            spins: spinning_wait(&c.wait),
            why: String::new(),
            by_placement: BTreeMap::new(),
            beyond,
            switches: c.per_message().map(|p| p.switches()),
        });
        row.cpu_load = row.cpu_load.max(load);
        row.by_placement.insert(c.placement.label.clone(), v);
        // The worst placement decides: the answer must hold wherever it runs.
        if better(row.value, v) {
            row.value = v;
            row.low = lo;
            row.high = hi;
            row.placement = c.placement.label.clone();
            row.beyond = beyond;
            row.switches = c.per_message().map(|p| p.switches());
        }
    }
    let mut ranked = Vec::new();
    let mut excluded = Vec::new();
    for (name, mut row) in rows {
        let (mech, wait) = mech_of.get(&name).cloned().unwrap_or_default();
        match constraint(&name, (&mech, &wait), row.cpu_load, ask) {
            Some(why) => excluded.push((name, why)),
            None => {
                row.why = qualifies(&mech, &wait, ask);
                ranked.push(row);
            }
        }
    }
    ranked.sort_by(|a, b| {
        let o = a.value.total_cmp(&b.value);
        if higher_is_better(ask) {
            o.reverse()
        } else {
            o
        }
    });
    let first = ranked.first().map(|r| sentence_first(r, ranked.len(), ask));
    let runner_up = match (ranked.first(), ranked.get(1)) {
        (Some(a), Some(b)) => Some(sentence_runner_up(a, b, ask)),
        _ => None,
    };
    let caveats = caveats(run, &ranked, &excluded, ask);
    let ceilings = ceilings
        .into_iter()
        .map(|(n, v)| (n, fmt_figure(v, ask)))
        .collect();
    Answer {
        ranked,
        excluded,
        not_run: not_run
            .into_iter()
            .map(|(n, places, why)| (format!("{n} {}", places.join(", ")), why))
            .collect(),
        first,
        runner_up,
        caveats,
        ceilings,
    }
}

fn qualifies(mech: &str, wait: &str, ask: &Ask) -> String {
    let mut v = Vec::new();
    if let Some(b) = ask.cpu_budget {
        v.push(format!("keeps at most {b} CPUs busy"));
    }
    if ask.messages {
        v.push("keeps message boundaries".to_string());
    }
    if ask.posix_only {
        v.push("POSIX".to_string());
    } else if LINUX_ONLY.contains(&mech) || linux_only_wait(mech, wait).is_some() {
        v.push("Linux only".to_string());
    }
    v.join(", ")
}

/// A figure as the answer writes it.
pub fn fmt_figure(v: f64, ask: &Ask) -> String {
    if streams(ask.pattern) {
        format!("{:.0} MB/s", v / 1e6)
    } else if ask.figure == Figure::Rate {
        format!("{:.1}k/s", v / 1e3)
    } else if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

fn what(ask: &Ask) -> String {
    match ask.pattern {
        Pattern::Stream => "throughput".into(),
        Pattern::RequestReply | Pattern::Notify | Pattern::FanIn if ask.figure == Figure::Rate => {
            "rate of round trips".into()
        }
        Pattern::RequestReply => format!("{} round trip", ask.figure.name()),
        Pattern::Notify => format!("{} wake-up round trip", ask.figure.name()),
        Pattern::FanIn => format!("{} round trip over every client", ask.figure.name()),
        Pattern::FanOut => "slowest reader's throughput".into(),
        Pattern::Replay => format!("{} message latency from when due", ask.figure.name()),
    }
}

/// The answers a report shows for a run: for round trips, the p99 ranking at
/// each message size measured (three at most); for streams, the throughput
/// ranking at 64 KiB (else the largest block). Each as a table whose notes
/// carry the first choice, the runner-up and the caveats.
pub fn report_answers(run: &RunRecord) -> Vec<crate::export::view::Table> {
    // At the machine's own idle: an advise run's polling-idle twins are not
    // more placements of the same candidates.
    let (run, _) = idle::split(run);
    let run = &run;
    let plain = |c: &&CaseRecord| {
        c.status == CaseStatus::Ok && c.pairs.is_none() && !c.options.contains_key("rate_per_sec")
    };
    let mut out = Vec::new();
    let mut sizes: Vec<u64> = run
        .cases
        .iter()
        .filter(plain)
        .filter(|c| c.workload == Workload::RoundTrip)
        .map(|c| c.block_size)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut asks: Vec<(Ask, u64)> = sizes
        .into_iter()
        .take(3)
        .map(|s| (Ask::plain(Pattern::RequestReply), s))
        .collect();
    let streams: Vec<u64> = run
        .cases
        .iter()
        .filter(plain)
        .filter(|c| c.workload == Workload::Stream)
        .map(|c| c.block_size)
        .collect();
    if let Some(&s) = streams
        .iter()
        .find(|&&s| s == 64 * 1024)
        .or(streams.iter().max())
    {
        asks.push((Ask::plain(Pattern::Stream), s));
    }
    for (ask, size) in asks {
        let mut sub = run.clone();
        sub.cases.retain(|c| plain(&c) && c.block_size == size);
        let ans = rank(&sub, &ask);
        if ans.ranked.len() < 2 {
            continue;
        }
        let what = match ask.pattern {
            Pattern::Stream => format!("stream, {size} B blocks, by throughput"),
            _ => format!("request-reply, {size} B messages, by the p99 round trip"),
        };
        let mut t = ranked_table(&ans, &ask, format!("Which to use here: {what}"));
        let mut notes = Vec::new();
        notes.extend(ans.first.iter().map(|f| format!("first choice: {f}")));
        notes.extend(ans.runner_up.iter().map(|r| format!("runner-up: {r}")));
        notes.extend(ans.caveats.iter().cloned());
        notes.append(&mut t.notes);
        t.notes = notes;
        out.push(t);
    }
    out
}

impl Ask {
    /// The question with no constraint: `ipcperf advise`'s defaults.
    pub fn plain(pattern: Pattern) -> Ask {
        Ask {
            pattern,
            figure: Figure::P99,
            cpu_budget: None,
            posix_only: false,
            messages: false,
        }
    }
}

fn sentence_first(r: &Row, n: usize, ask: &Ask) -> String {
    format!(
        "{}: its {} of {} ({}) is the best of the {n} that qualify.{}",
        r.name,
        what(ask),
        fmt_figure(r.value, ask),
        r.placement,
        cost(r)
    )
}

/// What a message costs the machine there, from the counters: a wait that
/// spins instead of switching keeps CPUs busy; a sleeping one switches.
fn cost(r: &Row) -> String {
    match r.switches {
        Some(s) if s < 0.05 && r.spins => format!(
            " It makes no context switch ({s:.2} a message): its wait spins, keeping {:.2} CPUs \
             busy.",
            r.cpu_load
        ),
        Some(s) => format!(
            " Each message costs {s:.2} context switches (both sides), {:.2} CPUs busy.",
            r.cpu_load
        ),
        None => String::new(),
    }
}

fn sentence_runner_up(a: &Row, b: &Row, ask: &Ask) -> String {
    let mut s = format!(
        "{} ({}){}",
        b.name,
        fmt_figure(b.value, ask),
        if tie(a, b) {
            ": a tie with the first, their series' ranges overlap"
        } else {
            ""
        }
    );
    // Where it does better than the first: a placement of its own.
    let better = |x: f64, y: f64| {
        if higher_is_better(ask) {
            x > y
        } else {
            x < y
        }
    };
    let wins: Vec<&String> = b
        .by_placement
        .iter()
        .filter(|(p, v)| a.by_placement.get(*p).is_some_and(|av| better(**v, *av)))
        .map(|(p, _)| p)
        .collect();
    if !wins.is_empty() {
        s.push_str(&format!(
            "; it wins where both sides run {}",
            wins.iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else if b.cpu_load + 0.2 < a.cpu_load {
        s.push_str(&format!(
            "; it wins on CPU: {:.2} CPUs busy against {:.2}",
            b.cpu_load, a.cpu_load
        ));
    }
    if let (Some(x), Some(y)) = (a.switches, b.switches) {
        if (x - y).abs() >= 0.5 {
            s.push_str(&format!(
                "; it makes {y:.2} context switches a message against the first's {x:.2}"
            ));
        }
    }
    s.push('.');
    s
}

mod caveats;
use caveats::caveats;
mod table;
pub use table::{left_out_lines, ranked_table, tie, tie_groups};

#[cfg(test)]
mod tests;
