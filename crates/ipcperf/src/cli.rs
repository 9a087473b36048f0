//! The command line's top: the subcommands, each with its arguments in its own
//! `cmd/` file (argument groups they share in `cmd/args.rs`). Parsing only.

use clap::{Parser, Subcommand};

use crate::cmd;

#[derive(Parser, Debug)]
#[command(
    name = "ipcperf",
    version,
    about = "How fast can two processes talk on this machine, by each way the OS offers?",
    long_about = "ipcperf measures Linux interprocess communication side by side under one method: \
throughput against block size (run), round-trip latency with its tails (latency), \
synchronization primitives' cycle rates (sync) and core-to-core round trips (matrix), over \
pipes, FIFOs, Unix, TCP and UDP sockets, SysV and POSIX queues, shared memory, zero-copy \
paths, signals and files, in one thread, two threads or two processes, with both sides' CPUs \
and how they relate recorded in every result. Runs are kept and can be shown, plotted, \
reported and compared.\n\n\
Start with `ipcperf run` (a quick default suite, about 20 s), `ipcperf list` and \
`ipcperf topology`.",
    after_help = "Examples:\n  ipcperf run\n  ipcperf run pipe unix --sizes 64,4k,64k --mode threads --pin 0,1\n  ipcperf run pipe --mode single --sizes bradford\n  ipcperf run tcp --sizes 16..1M --nodelay --sndbuf 1M --rcvbuf 1M\n  ipcperf list\n\nEnvironment (set but empty is the same as unset):\n  IPCPERF_DB       --db: the run history (a file or a postgres:// URL)\n  IPCPERF_NO_SAVE  --no-save: keep nothing (true/false, yes/no, 1/0)\n  NO_COLOR         no colour in warnings\n\nNumbers with a suffix: sizes: k, M, G (KiB, MiB, GiB) are 1024-based, kB, MB, GB\n  1000-based (64k = 65,536 B, 64kB = 64,000 B); counts and rates: k = 1000, M = 10^6.\n\nExit codes:\n  0  everything asked ran (and no gate fired)\n  1  a case failed while it ran, the history could not keep the run, or memory ran out\n  2  bad input: nothing was measured (or a read named a history, run or label that is not there)\n  3  compare --fail-on-regression called a regression\n  A failure outranks a regression; 101 is an internal error (a bug), 130 Ctrl-C\n  (another signal 128 + its number: 131 Ctrl-\\, 143 SIGTERM), 141 a measuring\n  command's output cut off (`run | head`): run kept, stopped."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print the results only: no progress, warnings or skipped-case lines.
    #[arg(long, short, global = true)]
    pub quiet: bool,

    /// Also say every case as it ends (commands that measure).
    #[arg(long, short, global = true, conflicts_with = "quiet")]
    pub verbose: bool,

    /// Colour in warnings and failures: auto (when stderr is a terminal and
    /// NO_COLOR is unset), always or never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure stream throughput (MB/s against block size).
    ///
    /// With no mechanism named it runs the quick default suite: every stream
    /// mechanism between two processes at 64 B, 4 KiB, 64 KiB and 1 MiB, each on the
    /// same CPU and on different CPUs, side by side.
    Run(Box<crate::shared::stream::RunArgs>),
    /// Measure round-trip latency (p50, p99, p99.9, max) with an HDR histogram.
    ///
    /// With no mechanism named it measures every mechanism that can carry round
    /// trips, with 512-byte messages between two processes.
    Latency(Box<crate::shared::round_trip::LatencyArgs>),
    /// Mechanisms, the modes they run in, and this system's limits.
    List(cmd::list::ListArgs),
    /// Measure the round trip between every pair of CPUs (core to core): a
    /// table of p50 (p99), a heatmap with -o FILE, saved like every run.
    Matrix(Box<cmd::matrix::MatrixArgs>),
    /// Show where the CPUs sit: packages, NUMA nodes, cores, SMT siblings, cache
    /// domains, and the placement classes `--pin` can name.
    Topology(cmd::topology::TopologyArgs),
    /// Write random printable ASCII to stdout, in fixed-size writes (Stover's generator).
    ///
    /// Composes with any program: `ipcperf gen --bytes 512M | gzip | wc -c`.
    Gen(cmd::gen::GenArgs),
    /// Read stdin to end of file and report bytes, seconds and MB/s on stderr (Stover's sink).
    Sink(cmd::sink::SinkArgs),
    /// Time Stover's pipelines: gen | sink, a temp file, /dev/null, cat, and ipcperf's own
    /// mechanisms, as real processes, start-up included.
    Pipeline(cmd::pipeline::PipelineArgs),
    /// Synchronization primitives: request/release and set/clear cycles per second,
    /// tare subtracted (Duncan's semaphore table); `--robustness`: a holder dies.
    Sync(cmd::sync::SyncArgs),
    /// Remove what a killed run left behind (only ours, only if its run is dead).
    Clean(cmd::clean::CleanArgs),
    /// The runs kept: id, when, host, kernel, what was measured, complete or not.
    History(cmd::history::HistoryArgs),
    /// A kept run's tables again.
    Show(cmd::show::ShowArgs),
    /// Write a kept run as csv, json (the run record) or markdown.
    Export(cmd::export::ExportArgs),
    /// Keep runs exported on another machine (JSON run records).
    Import(cmd::import::ImportArgs),
    /// Draw a run (SVG or PNG): MB/s against block size, and latency percentiles.
    Plot(cmd::plot::PlotArgs),
    /// One self-contained HTML file: machine, tables, charts, ratios.
    Report(cmd::report::ReportArgs),
    /// Two runs case by case: what got faster or slower beyond the noise.
    Compare(cmd::compare::CompareArgs),
    /// Every host of a shared history against its peers (same CPU model and
    /// kernel): each host's newest figures, outliers beyond the noise first.
    Fleet(cmd::fleet::FleetArgs),
    /// One case across runs in time (a host, a label, a group of hosts), each
    /// run with its spread; a step beyond the noise marked, the newest run judged
    /// against the runs before it.
    Trend(cmd::trend::TrendArgs),
    /// What an application's traffic looks like, from an strace trace or a CSV:
    /// its conversations, sizes, gaps and rates, and a fitted pattern.
    Pattern(cmd::pattern::PatternArgs),
    /// Replay an application's traffic (a trace's conversation, a CSV or a fitted
    /// pattern) over each mechanism at its recorded times: each message's
    /// latency, the schedule kept, CPU of both sides.
    Replay(Box<crate::shared::replay::ReplayArgs>),
    /// Which mechanism to use here: measures what the question needs (saved
    /// like any run), ranks the candidates under your constraints, and says why.
    Advise(cmd::advise::AdviseArgs),
    /// Be the peer of `run`/`latency --peer` from another machine (tcp), one run
    /// at a time; with --token-file, only for clients that know the token.
    Serve(cmd::serve::ServeArgs),
    /// A shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the manual page (roff), or write a page per subcommand with --dir.
    Man(cmd::man::ManArgs),
    /// (internal) the peer side of a two-process case; started by ipcperf itself.
    #[command(name = "__peer", hide = true)]
    Peer,
    /// (internal) every subcommand and its arguments as JSON: what the fuzz test
    /// generates its command lines from, so a new flag is fuzzed the day it lands.
    #[command(name = "__cli-tree", hide = true)]
    CliTree,
}

/// The parser: `Cli`'s, with a value that starts with '-' taken as the value it
/// is, so that `--rate -5`, `--sizes -64k` or `show -3` say what is wrong with the
/// number ("'-5': a rate from 1 to 10M …") instead of clap's "unexpected argument
/// '-6' found". Only a value parsed into a figure (a size, count, rate, CPU list)
/// takes any such value, which its parser then refuses with its own line; free
/// text (a label, a path) and a positional, which may take many values, take
/// only a negative number, so that `--label --no-save` is still a missing label.
pub fn command() -> clap::Command {
    fn adjust(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|a| {
            if !a.get_action().takes_values() {
                return a;
            }
            let one_value = a.get_num_args().is_none_or(|n| n.max_values() <= 1);
            let t = a.get_value_parser().type_id();
            let text = [
                std::any::TypeId::of::<String>(),
                std::any::TypeId::of::<std::path::PathBuf>(),
                std::any::TypeId::of::<std::ffi::OsString>(),
            ]
            .iter()
            .any(|id| t == *id);
            if one_value && !text && !a.is_positional() {
                a.allow_hyphen_values(true)
            } else {
                a.allow_negative_numbers(true)
            }
        })
        .mut_subcommands(adjust)
    }
    adjust(<Cli as clap::CommandFactory>::command())
}

/// Every visible subcommand with its arguments: id, long and short names, whether
/// it takes a value, the value's name, the values it allows, and whether it is
/// positional.
pub fn tree(cmd: &clap::Command) -> serde_json::Value {
    let args = |c: &clap::Command| -> Vec<serde_json::Value> {
        c.get_arguments()
            .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
            .map(|a| {
                serde_json::json!({
                    "id": a.get_id().as_str(),
                    "long": a.get_long(),
                    "short": a.get_short().map(|c| c.to_string()),
                    "positional": a.is_positional(),
                    "takes_value": a.get_action().takes_values(),
                    "value_name": a.get_value_names().and_then(|v| v.first()).map(|v| v.as_str()),
                    "values": a.get_possible_values().iter().map(|v| v.get_name()).collect::<Vec<_>>(),
                    "many": a.get_num_args().is_some_and(|n| n.max_values() > 1),
                })
            })
            .collect()
    };
    serde_json::json!({
        "global": args(cmd),
        "subcommands": cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| serde_json::json!({
            "name": s.get_name(),
            "args": args(s),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::{CommandFactory, Parser};

    /// Every flag and argument of every command says what it is, on itself (an
    /// empty entry in `--help` is a flag nobody can learn; one flag's help once
    /// sat on its neighbour).
    #[test]
    fn no_help_entry_is_empty() {
        fn walk(cmd: &clap::Command, path: &str, empty: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if a.is_hide_set() || id == "help" || id == "version" {
                    continue;
                }
                let help = a
                    .get_help()
                    .or(a.get_long_help())
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                if help.trim().is_empty() {
                    empty.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_name() == "help" {
                    continue;
                }
                walk(sub, &format!("{path} {}", sub.get_name()), empty);
            }
        }
        let cmd = super::Cli::command();
        let mut empty = Vec::new();
        walk(&cmd, "ipcperf", &mut empty);
        assert!(cmd.get_subcommands().count() > 20);
        assert!(empty.is_empty(), "flags without help: {empty:#?}");
    }

    /// Renamed flags keep their old spelling for a release, out of `--help`
    /// (but `--sizes` of replay and pattern, now `--size-dist`: `--sizes` is
    /// every other command's block size, advise's among them).
    #[test]
    fn old_spellings_still_parse_and_are_not_shown() {
        use clap::Parser;
        for (old, new) in [
            (
                &["ipcperf", "advise", "--pattern", "stream"][..],
                &["ipcperf", "advise", "--traffic", "stream"][..],
            ),
            (
                &["ipcperf", "advise", "--only", "pipe,unix"],
                &["ipcperf", "advise", "--mechanisms", "pipe,unix"],
            ),
            (
                &["ipcperf", "topology", "--cpus"],
                &["ipcperf", "topology", "--per-cpu"],
            ),
            (
                &["ipcperf", "matrix", "pipe", "--heatmap", "m.png"],
                &["ipcperf", "matrix", "pipe", "-o", "m.png"],
            ),
            (
                &["ipcperf", "topology", "--measure", "--heatmap", "t.svg"],
                &["ipcperf", "topology", "--measure", "--output", "t.svg"],
            ),
            (
                &["ipcperf", "advise", "--size", "512"],
                &["ipcperf", "advise", "--sizes", "512"],
            ),
            (
                &["ipcperf", "trend", "pipe", "--size", "64k"],
                &["ipcperf", "trend", "pipe", "--sizes", "64k"],
            ),
        ] {
            let o = super::Cli::try_parse_from(old).map(|c| format!("{:?}", c.command));
            let n = super::Cli::try_parse_from(new).map(|c| format!("{:?}", c.command));
            assert!(o.is_ok(), "{old:?}: {o:?}");
            assert_eq!(o.unwrap(), n.unwrap(), "{old:?}");
        }
        let mut cmd = super::Cli::command();
        for (sub, old) in [
            ("advise", "--size <"),
            ("trend", "--size <"),
            ("advise", "--pattern <"),
            ("matrix", "--heatmap <"),
            ("topology", "--heatmap <"),
            ("advise", "--only <"),
            ("topology", "--cpus\n"),
        ] {
            let help = cmd
                .find_subcommand_mut(sub)
                .unwrap()
                .render_long_help()
                .to_string();
            assert!(!help.contains(old), "{sub} --help shows {old}");
        }
    }

    /// The ipcperf commands of an example line: `ipcperf gen … | gzip | ipcperf
    /// sink` gives both ipcperf parts, each without its redirections and
    /// comment.
    fn commands(line: &str) -> Vec<Vec<String>> {
        let line = line.split(" #").next().unwrap_or_default();
        line.split('|')
            .map(|part| {
                let mut words = Vec::new();
                let mut it = part.split_whitespace();
                while let Some(w) = it.next() {
                    if w == "<" || w == ">" {
                        it.next();
                    } else {
                        words.push(w.to_string());
                    }
                }
                words
            })
            .filter(|w| w.first().is_some_and(|w| w == "ipcperf"))
            .collect()
    }

    /// Every subcommand's --help ends with examples (hyperfine's and
    /// ripgrep's do; `run`, the one most asked for, had none), and every
    /// example parses.
    #[test]
    fn every_subcommand_shows_examples_that_parse() {
        let cli = Cli::command();
        let shown = |s: &&clap::Command| s.get_name() != "help" && !s.is_hide_set();
        for sub in cli.get_subcommands().filter(shown) {
            let name = sub.get_name();
            let help = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let at = help
                .find("Examples:")
                .unwrap_or_else(|| panic!("`ipcperf {name} --help` shows no examples"));
            let lines: Vec<&str> = help[at..]
                .lines()
                .skip(1)
                .take_while(|l| l.starts_with("  ipcperf") || l.starts_with("  strace"))
                .collect();
            assert!(!lines.is_empty(), "{name}: {help}");
            for l in lines {
                for words in commands(l) {
                    if let Err(e) = Cli::try_parse_from(&words) {
                        panic!("`ipcperf {name} --help` example {l:?}: {e}");
                    }
                }
            }
        }
    }
}
