//! `ipcperf replay`'s arguments, the pattern they load and the cases they plan
//! (`advise --pattern-file` replays with them too).

use crate::export::Format;
use crate::fail::Fail;
use crate::pattern::{self, fitted};
use crate::shared::args::{PinArg, TwoSides};
use crate::shared::plan::{parse_mechanisms, placements};
use clap::Args;
use ipcperf_core::mechanism::MechanismKind;
use ipcperf_core::mode::Mode;
use ipcperf_core::plan::CaseSpec;
use ipcperf_core::record::ReplayRecord;
use ipcperf_core::workload::replay::{Answers, Script};
use std::path::{Path, PathBuf};

/// The mechanisms replayed when none is named.
pub const DEFAULT_MECHANISMS: [MechanismKind; 3] =
    [MechanismKind::Pipe, MechanismKind::Unix, MechanismKind::Shm];

/// Where a pattern comes from: a trace and its conversation, or a description.
#[derive(Args, Debug, Clone)]
pub struct PatternSource {
    /// Which conversation of the trace (`ipcperf pattern` numbers them, the
    /// busiest first).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub conversation: u64,
    /// Instead, one channel alone, by the name `ipcperf pattern` shows
    /// (`pipe:[335]`, `pipe[100:3,4]`, a FIFO's path), never joined to another.
    #[arg(long, conflicts_with = "conversation", value_name = "NAME", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub channel: Option<String>,
    /// Instead of a trace, a fitted pattern's size distribution: fixed:512,
    /// uniform:64,4k, lognormal:MEDIAN,SPREAD (with --gaps; its messages all go A
    /// to B). Was --sizes, now the block size of every other command.
    #[arg(long = "size-dist", requires = "gaps", value_parser = clap::value_parser!(fitted::Sizes), value_name = "DIST")]
    pub sizes: Option<fitted::Sizes>,
    /// Its gaps: fixed:RATE, poisson:RATE, bursts:COUNT,RATE_IN_A_BURST,BURSTS_A_SECOND;
    /// a rate a second (20k) or the mean gap (50us).
    #[arg(long, requires = "sizes", value_parser = clap::value_parser!(fitted::Gaps), value_name = "DIST")]
    pub gaps: Option<fitted::Gaps>,
    /// How long a fitted pattern runs.
    #[arg(long = "for", default_value = "1s", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub for_: std::time::Duration,
    /// The seed a fitted pattern is drawn with (the same seed, the same messages).
    #[arg(long, default_value_t = 1, value_parser = crate::units::parse_seed)]
    pub seed: u64,
    /// Replay this many times faster than recorded (0.5: half as fast).
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
}

fn parse_speed(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches(['x', '×'])
        .parse()
        .map_err(|_| format!("`{s}` is not a speed (2, 0.5, 10x)"))?;
    ipcperf_core::workload::replay::check_speed_as(v, s.trim())
}

/// The most messages a fitted pattern draws.
const FITTED_MOST: u64 = 10_000_000;

/// A pattern loaded for replay: its script and what the record says of it.
pub struct Loaded {
    pub script: Script,
    pub about: ReplayRecord,
}

/// Load the pattern: conversation `--conversation` of `trace`, or the fitted one.
/// A bad trace (a line that cannot be read, no conversation) is bad input.
pub fn load(trace: Option<&Path>, src: &PatternSource) -> Result<Loaded, Fail> {
    let mut about = ReplayRecord {
        speed: src.speed,
        loops: 1,
        ..ReplayRecord::default()
    };
    let msgs = match (trace, &src.sizes, &src.gaps) {
        (Some(_), Some(_), _) => {
            return Err(Fail::usage(
                "give a trace or --size-dist and --gaps, not both",
            ))
        }
        (Some(t), None, _) => {
            // One pass over the trace: its conversations, every call and its hash.
            let mut traced = pattern::script::read_once(t, src.channel.as_deref())
                .map_err(|e| Fail::usage(e.to_string()))?;
            let conversations = std::mem::take(&mut traced.pattern.conversations);
            let wanted = if src.channel.is_some() {
                1
            } else {
                src.conversation
            };
            let n = conversations.len();
            let c = conversations
                .iter()
                .find(|c| c.number as u64 == wanted)
                .ok_or_else(|| {
                    Fail::usage(format!(
                        "{}: no conversation {} (it has {n}; see ipcperf pattern {})",
                        t.display(),
                        src.conversation,
                        t.display()
                    ))
                })?;
            about.source = t.file_name().map_or_else(
                || t.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            );
            about.conversation = Some(c.number);
            about.channel = c.what.clone();
            about.fitted = fitted_text(c);
            about.sha256 = Some(traced.sha256.clone());
            traced.into_messages(c)
        }
        (None, Some(s), Some(g)) => {
            about.source = format!("--size-dist {s} --gaps {g} --for {:?}", src.for_);
            about.fitted = Some(format!("--size-dist {s} --gaps {g}"));
            pattern::script::fitted_messages(s, g, src.for_.as_secs_f64(), src.seed, FITTED_MOST)
                .into_iter()
                .map(|(t, ab, size)| (t, ab, size, Answers::Previous))
                .collect()
        }
        _ => return Err(Fail::usage("give a trace, or --size-dist and --gaps")),
    };
    let script = Script::answering(msgs, src.speed).map_err(|e| Fail::usage(e.to_string()))?;
    (
        about.a_to_b,
        about.a_to_b_bytes,
        about.b_to_a,
        about.b_to_a_bytes,
    ) = script.counts();
    about.largest_bytes = script.largest() as u64;
    about.recorded_ns = script.span_ns();
    Ok(Loaded { script, about })
}

/// A conversation's fitted pattern, one way or both, in `--size-dist .. --gaps ..` form.
fn fitted_text(c: &pattern::Conversation) -> Option<String> {
    let way = |f: &pattern::Flow| {
        Some(format!(
            "--size-dist {} --gaps {}",
            f.size_fit()?,
            f.gap_fit()
                .map_or_else(|| "-".to_string(), |g| g.to_string())
        ))
    };
    match (way(&c.a_to_b), way(&c.b_to_a)) {
        (Some(a), Some(b)) => Some(format!("A→B {a}; B→A {b}")),
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(format!("B→A {b}")),
        (None, None) => None,
    }
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  strace -f -ttt -yy -e trace=read,write,sendmsg,recvmsg,sendto,recvfrom -o app.trace ./myapp
  ipcperf pattern app.trace                          # its conversations, the busiest first
  ipcperf replay app.trace --conversation 2 pipe unix shm tcp
  ipcperf replay pattern.csv shm unix                # time_ns,direction,size per line
  ipcperf replay --size-dist lognormal:300,2 --gaps poisson:20k --for 2s unix shm
  ipcperf replay app.trace --speed 2 --loop 10s unix -o replay.png

Each message goes at its recorded time (B's answers at their recorded offset after
the message they answer arrived); its latency counts from when it was due, so a
mechanism that falls behind pays for every message it delays.")]
pub struct ReplayArgs {
    /// The trace (strace's output or a CSV), then the mechanisms; with --size-dist
    /// and --gaps, only mechanisms. Default mechanisms: pipe, unix, shm.
    #[arg(value_name = "TRACE|MECHANISM")]
    pub args: Vec<String>,

    #[command(flatten)]
    pub source: PatternSource,

    /// Replay the pattern round and round for this long in each pass (10s, 1m).
    #[arg(long = "loop", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub loop_for: Option<std::time::Duration>,

    #[command(flatten)]
    pub measure: crate::shared::args::MeasureArgs,

    /// Where the two sides run: threads or processes (default). Comma-separate for both.
    #[arg(long, short, value_enum, value_delimiter = ',')]
    pub mode: Vec<TwoSides>,

    /// Check every byte of every message.
    #[arg(long, conflicts_with = "no_touch")]
    pub verify: bool,

    /// Send and receive without writing or reading the payload.
    #[arg(long)]
    pub no_touch: bool,

    /// Spin to each send time instead of sleeping (a CPU stays busy on each side).
    #[arg(long)]
    pub busy_poll: bool,

    #[command(flatten)]
    pub mech: crate::shared::args::MechArgs,

    /// Also draw each mechanism's latency against time in the trace to FILE
    /// (.png or .svg): where one fell behind.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub save: crate::shared::db::SaveArgs,
}

/// The trace and the mechanisms among the positional arguments.
pub fn split_args(a: &ReplayArgs) -> Result<(Option<PathBuf>, Vec<MechanismKind>), Fail> {
    let (trace, names) = if a.source.sizes.is_some() {
        (None, &a.args[..])
    } else {
        match a.args.split_first() {
            Some((t, rest)) => (Some(PathBuf::from(t)), rest),
            None => {
                return Err(Fail::usage(
                    "give a trace (or --size-dist and --gaps), then the mechanisms",
                ))
            }
        }
    };
    // `replay pipe app.trace`: the trace named after a mechanism, said so (it
    // was "unknown mechanism 'app.trace'").
    if let (Some(t), Some(file)) = (
        &trace,
        names.iter().find(|n| std::path::Path::new(n).is_file()),
    ) {
        if !t.is_file() && parse_mechanisms(&[t.display().to_string()]).is_ok() {
            return Err(Fail::usage(format!(
                "the trace comes first, then the mechanisms: ipcperf replay {file} {}",
                [t.to_str().unwrap_or_default()]
                    .into_iter()
                    .chain(names.iter().filter(|n| *n != file).map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        }
    }
    let mechs = if names.is_empty() {
        DEFAULT_MECHANISMS.to_vec()
    } else {
        parse_mechanisms(names)?
    };
    for &m in &mechs {
        if m.round_trip().is_none() {
            return Err(Fail::usage(format!(
                "{} cannot carry a conversation (it has no way back); try: pipe, unix, shm, tcp",
                m.name()
            )));
        }
    }
    Ok((trace, mechs))
}

/// The cases: each mechanism (and its variants), mode and placement.
pub fn plan(
    mechs: &[MechanismKind],
    modes: &[TwoSides],
    pins: &[PinArg],
    db: Option<&str>,
    mech: &crate::shared::args::MechArgs,
    payload: ipcperf_core::payload::Payload,
    largest: usize,
) -> Result<Vec<CaseSpec>, Fail> {
    let topo = ipcperf_core::topology::Topology::current();
    let placements = placements(pins, false, &topo, db)?;
    if mech.zero_copy {
        return Err(Fail::usage(
            "--zero-copy measures shm streams (ipcperf run); a replay copies each message",
        ));
    }
    let mut opts = mech.options(mechs)?;
    opts.shm_messages = mech.shm_layout != Some(crate::shared::args::ShmLayout::Stream);
    let mut modes: Vec<Mode> = modes.iter().map(|m| m.mode()).collect();
    modes.dedup();
    if modes.is_empty() {
        modes.push(Mode::Processes);
    }
    let mut specs = Vec::new();
    for &m in mechs {
        for (m, o) in mech.cases(m, &opts) {
            for &mode in &modes {
                for &pl in &placements {
                    specs.push(CaseSpec {
                        payload,
                        length: ipcperf_core::plan::Length::Count { blocks: 1 },
                        opts: o.clone(),
                        ..CaseSpec::new(m, mode, largest, pl)
                    });
                }
            }
        }
    }
    Ok(specs)
}

/// Times round the script for `--loop`.
pub fn reps(script: &Script, loop_for: Option<std::time::Duration>) -> u64 {
    match loop_for {
        Some(d) => u64::try_from(d.as_nanos())
            .unwrap_or(u64::MAX)
            .div_ceil(script.period_ns().max(1))
            .max(1),
        None => 1,
    }
}

/// Seconds as they are read: 4 ms, 0.3 s, 45 s, 12 min, 5.0 h, 3.2 days (a
/// trace's 4 ms pass read "5 passes of 0.0 s each").
pub fn long_secs(s: f64) -> String {
    if s < 0.1 {
        let ms = s * 1e3;
        if ms < 1.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.0} ms")
        }
    } else if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_passes_are_not_zero_seconds() {
        let shown: Vec<String> = [0.0043, 0.00021, 0.3, 45.0, 720.0]
            .into_iter()
            .map(super::long_secs)
            .collect();
        assert_eq!(shown, ["4 ms", "0.21 ms", "0.3 s", "45 s", "12 min"]);
    }
}
