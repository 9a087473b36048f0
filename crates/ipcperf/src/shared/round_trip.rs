//! `ipcperf latency`'s arguments and the round-trip cases they plan (advise plans
//! with them too).

use crate::export::Format;
use crate::fail::Fail;
use crate::shared::args::{parse_size_list, SizeList, TwoSides};
use crate::shared::plan::{parse_mechanisms, placements, series_length};
use crate::units;
use clap::Args;
use ipcperf_core::mechanism::{MechOptions, MechanismKind};
use ipcperf_core::mode::Mode;
use ipcperf_core::plan::CaseSpec;

/// The default block size: Duncan's 512-byte messages.
pub const DEFAULT_SIZE: usize = 512;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf latency\n  ipcperf latency pipe unix --sizes 1,64,512,4k,64k --mode threads --pin 0,1\n  ipcperf latency pipe --sizes 4 --pin 0,0 --count 100000\n  ipcperf latency tcp --sizes 64 --nodelay --format json\n  ipcperf latency pipe unix --pin 0,1 --explain   # where each round trip's time goes (root)"
)]
pub struct LatencyArgs {
    /// Mechanisms to measure (see `ipcperf list`); none means every one that can
    /// carry round trips.
    #[arg(value_name = "MECHANISM")]
    pub mechanisms: Vec<String>,

    /// Where the two sides run: threads or processes (default). Comma-separate for both.
    #[arg(long, short, value_enum, value_delimiter = ',')]
    pub mode: Vec<TwoSides>,

    /// Message sizes: a list (1,64,512,4k), a power-of-two range (16..64k) or
    /// `bradford`. k = 1024, kB = 1000. Default 512.
    #[arg(long, short, value_parser = parse_size_list)]
    pub sizes: Option<SizeList>,

    #[command(flatten)]
    pub case: crate::shared::args::CaseArgs,

    #[command(flatten)]
    pub series: crate::shared::args::SeriesArgs,

    /// Measure one-way latency too: the sender writes its send time into each
    /// message (8 bytes or more), the receiver takes the delay on the same
    /// clock; shown beside the round trip (p50/p99/p99.9, within 1%).
    #[arg(long)]
    pub one_way: bool,

    /// Also show half of each round trip (p50, p99), labelled half-rtt: an
    /// estimate of one way that assumes both ways cost the same.
    #[arg(long)]
    pub half_rtt: bool,

    /// Paced load: send round trips on a fixed schedule at this many per second
    /// (10k, 50k: k = 1000; a comma list measures each). Each latency runs from when its
    /// message was due, so a stall counts for every round trip it delays; a rate
    /// the mechanism cannot keep is reported as saturated. Default: back to back.
    #[arg(long, value_parser = units::parse_rates, value_name = "RATE[,RATE...]")]
    pub rate: Option<units::RateList>,

    /// The client never sleeps: its descriptor is non-blocking and each wait
    /// retries at once (as sockperf's client), a paced schedule spins to each
    /// send time; the answering side waits as usual. One CPU stays busy. For
    /// descriptor mechanisms (shm: --wake spin).
    #[arg(long)]
    pub busy_poll: bool,

    /// Fan-in: N clients (a list 1,4,8 or a range 1..8) send requests to one
    /// server, which waits on all of them at once and answers each; clients on
    /// the placement's first CPU, the server on its second. pipe, fifo, unix, tcp,
    /// unix-seqpacket, unix-dgram, udp, posix-mq.
    #[arg(long, value_parser = parse_clients, value_name = "N[,N...]", conflicts_with = "pairs")]
    pub clients: Option<crate::shared::args::PairsList>,

    /// Where the time goes: after the timed series, one traced series of up to
    /// 2,000 round trips with the scheduler's and the system calls' tracepoints
    /// sampled (needs root or CAP_PERFMON), each round trip split into its
    /// parts (send call, wake-up, run queue, return, and back), shown in a table
    /// per case. Without the rights, one line says so and the figures stand.
    #[arg(long, conflicts_with_all = ["clients", "pairs", "rate"])]
    pub explain: bool,

    #[command(flatten)]
    pub tracer: crate::shared::tracer::TracerArg,

    #[command(flatten)]
    pub mech: crate::shared::args::MechArgs,

    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub save: crate::shared::db::SaveArgs,
}

/// Every mechanism that can carry round trips, in the order `list` shows them.
pub fn round_trip_mechanisms() -> Vec<MechanismKind> {
    MechanismKind::ALL
        .iter()
        .copied()
        .filter(|k| k.round_trip().is_some())
        .collect()
}

/// What `latency` measures as `a` asks, each input checked: its cases, the
/// load beside them (`--background`, held until dropped) and what they share.
pub fn prepare(a: &LatencyArgs) -> Result<super::Prepared, Fail> {
    super::plan::prepare(
        &a.case,
        || plan(a),
        !a.mechanisms.is_empty(),
        (
            a.clients.as_ref(),
            "--clients",
            ipcperf_core::workload::fanin::refuse,
            |s, n| s.clients = n,
        ),
        true,
    )
}

/// Turn the arguments into the list of cases, in the order they run.
pub fn plan(a: &LatencyArgs) -> Result<Vec<CaseSpec>, Fail> {
    let all = a.mechanisms.is_empty();
    let mechs = if all {
        // With --peer: those that cross machines (see `run`'s plan).
        let mut v = round_trip_mechanisms();
        v.retain(|&m| a.case.peer.is_none() || ipcperf_core::runner::crosses_machines(m));
        v
    } else {
        parse_mechanisms(&a.mechanisms)?
    };
    for &m in &mechs {
        if m.round_trip().is_none() {
            return Err(Fail::usage(format!(
                "{} cannot carry round trips (it has no side that answers); try: {}",
                m.name(),
                round_trip_mechanisms()
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let mut modes = Vec::new();
    for m in &a.mode {
        let mode = m.mode();
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    if modes.is_empty() {
        modes.push(Mode::Processes);
    }
    let sizes = a
        .sizes
        .as_ref()
        .map(|s| s.0.clone())
        .unwrap_or_else(|| vec![DEFAULT_SIZE]);
    let length = ipcperf_core::plan::Length::Duration { ns: 0 };
    let topo = ipcperf_core::topology::Topology::current();
    let placements = placements(&a.case.pins(), false, &topo, a.save.db.db.as_deref())?;
    let payload = a.case.payload();
    if a.mech.zero_copy {
        return Err(Fail::usage(
            "--zero-copy measures shm streams (ipcperf run); a round trip copies its \
             message in and out",
        ));
    }
    if a.mech.wait.is_some() {
        if a.busy_poll {
            return Err(Fail::usage(
                "--busy-poll spins the client alone; with --wait, say both sides: \
                 --wait busy/block",
            ));
        }
        if let (Some(_), Some(list)) = (&a.clients, &a.mech.wait) {
            use ipcperf_core::mechanism::wait::Wait;
            let server = ipcperf_core::workload::fanin::SERVER_WAITS;
            if let Some(w) = list.0.iter().find(|w| !server.contains(&w.server)) {
                return Err(Fail::usage(format!(
                    "--wait {} with --clients: the server waits for any of its clients in one \
                     call, by {}; say the clients' wait and the server's apart, e.g. --wait \
                     {}/epoll",
                    w.label(),
                    Wait::list(server),
                    if w.client == Wait::Uring {
                        "block"
                    } else {
                        w.client.name()
                    }
                )));
            }
        }
    }
    let mut opts = a.mech.options(&mechs)?;
    // Round trips are whole messages: the message layout unless asked otherwise.
    opts.shm_messages = a.mech.shm_layout != Some(crate::shared::args::ShmLayout::Stream);
    let mut specs = Vec::new();
    for &m in &mechs {
        // Without --sizes, the wake-up mechanisms run at the one size they carry
        // (eventfd: its 8-byte counter; signal: a 4-byte sigval) instead of a refusal.
        let own = m
            .default_round_trip_sizes()
            .filter(|_| a.sizes.is_none())
            .map(|s| s.to_vec());
        let m_sizes = own.as_ref().unwrap_or(&sizes);
        let rates: Vec<Option<u64>> = match &a.rate {
            Some(r) => r.0.iter().map(|&x| Some(x)).collect(),
            None => vec![None],
        };
        for (m, v) in a.mech.cases(m, &opts) {
            for &rate in &rates {
                let o = MechOptions {
                    rate_per_sec: rate,
                    one_way: a.one_way,
                    explain: a.explain,
                    busy_poll: a.busy_poll,
                    ..v.clone()
                };
                for &mode in &modes {
                    for &size in m_sizes {
                        for &pl in &placements {
                            specs.push(CaseSpec {
                                payload,
                                length,
                                repeat: a.case.measure.repeat,
                                opts: o.clone(),
                                ..CaseSpec::new(m, mode, size, pl)
                            });
                        }
                    }
                }
            }
        }
    }
    series_length(&mut specs, a.series.count, a.series.duration);
    crate::shared::plan::idle_probes(&mut specs);
    Ok(specs)
}

/// `--clients`: counts from 1 to the most one server takes.
fn parse_clients(s: &str) -> Result<crate::shared::args::PairsList, String> {
    crate::shared::args::parse_counts(s, "clients", ipcperf_core::runner::fanin::MAX_CLIENTS)
}
