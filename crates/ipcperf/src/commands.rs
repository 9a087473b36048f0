//! The command table: each command's entry says what it is (a [`Kind`]) beside
//! the function that runs it, and [`dispatch`] arms what that kind needs. Adding a
//! command: its arguments in `cli.rs`, its module in `cmd/`, its entry here.

use crate::cli::Command;
use crate::cmd::*;
use crate::fail::Fail;

/// What a command is, as its entry in [`dispatch`] declares it; the entry's
/// kind decides what is armed before the command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Reads and writes files and the store only: Ctrl-C's default (the process
    /// ends at once) leaves nothing of ours behind.
    Plain,
    /// Starts peers, makes named kernel objects or holds tracing state: Ctrl-C,
    /// SIGTERM, SIGHUP and SIGQUIT are taken by a thread that removes every registered
    /// object, kills our peers, and exits 128 + the signal.
    Measures,
    /// Reads and writes files and the store, and copies a stream to a
    /// temporary file (`import -`): Ctrl-C is taken as for [`Kind::Measures`],
    /// so that the copy is removed; its output is a reader's.
    Spools,
}

/// A command, ready to run.
pub type Runs = Box<dyn FnOnce() -> Result<i32, Fail>>;

/// Run a command: its entry in [`entry`], with what its kind needs armed first.
pub fn dispatch(command: Command) -> Result<i32, Fail> {
    let (kind, runs) = entry(command);
    if kind == Kind::Measures {
        temp_dir_usable()?;
        open_files_enough()?;
        ipcperf_sys::signal::cleanup_on_interrupt();
        crate::console::on_stdout_failed(stdout_failed);
    }
    if kind == Kind::Spools {
        ipcperf_sys::signal::cleanup_on_interrupt();
    }
    runs()
}

/// A measuring command whose standard output fails ends cleaned up as Ctrl-C
/// does, its run kept and marked stopped: where its reader went away (`ipcperf
/// run | head -3`) as SIGPIPE would end it, 141; where a write fails (a full
/// disk), 1. (Exiting there left a run cut short looking complete to the shell
/// and "killed or running" to the history.)
fn stdout_failed(why: &str, code: i32) -> ! {
    ipcperf_sys::signal::end_as_interrupted(why, code)
}

/// A measuring command makes its FIFOs, sockets and files under $TMPDIR: one
/// set to what is not a directory is bad input, said once before anything runs
/// (not a failure of every case that needs it).
fn temp_dir_usable() -> Result<(), Fail> {
    match std::env::var_os("TMPDIR") {
        Some(d) if !d.is_empty() && !std::path::Path::new(&d).is_dir() => {
            Err(Fail::usage(format!(
                "TMPDIR={} is not a directory: ipcperf makes its FIFOs, sockets and files \
             there (point it at one, or unset it for /tmp)",
                d.to_string_lossy()
            )))
        }
        _ => Ok(()),
    }
}

/// The open files a measuring command may hold: the soft limit raised as far
/// as the hard one allows (pairs, clients and their peers take many; a low soft
/// limit failed every case with EMFILE, one line each); a hard limit below the
/// fewest any case needs is bad input, said once before anything runs.
fn open_files_enough() -> Result<(), Fail> {
    const FEWEST: u64 = 32;
    match ipcperf_sys::fd::raise_open_files(4096) {
        Ok((soft, hard)) if soft < FEWEST => Err(Fail::usage(format!(
            "open files are limited to {hard} here (`ulimit -Hn`): ipcperf needs {FEWEST} or \
             more (its cases, their peers and the history each hold some)"
        ))),
        _ => Ok(()),
    }
}

/// The command table: every command's entry names its [`Kind`] beside the
/// function that runs it, so a new command cannot be dispatched without saying
/// whether it needs the clean-up (the match is exhaustive).
pub fn entry(command: Command) -> (Kind, Runs) {
    use Kind::{Measures, Plain, Spools};
    match command {
        Command::Peer => at(Plain, peer),
        Command::Run(a) => at(Measures, || run::run(*a)),
        Command::Latency(a) => at(Measures, || latency::run(*a)),
        Command::Matrix(a) => at(Measures, || matrix::run(*a)),
        Command::Pipeline(a) => at(Measures, || pipeline::run(a)),
        Command::Sync(a) => at(Measures, || sync::run(a)),
        Command::Replay(a) => at(Measures, || replay::run(*a)),
        // Your own traffic, replayed, or a pattern named by kind.
        Command::Advise(a) if a.pattern_file.is_some() || a.source.sizes.is_some() => {
            at(Measures, || advise::pattern::run(a))
        }
        Command::Advise(a) => at(Measures, || advise::run(a)),
        Command::Serve(a) => at(Measures, || serve::run(a)),
        Command::Topology(a) if a.measure => at(Measures, || topology::run(a)),
        Command::Topology(a) => at(Plain, || topology::run(a)),
        // --across starts peers in fresh namespaces, with their objects.
        Command::List(a) if a.across.is_some() => at(Measures, || list::run(a)),
        Command::List(a) => at(Plain, || list::run(a)),
        Command::Gen(a) => at(Plain, || gen::run(a)),
        Command::Sink(a) => at(Plain, || sink::run(a)),
        Command::Clean(a) => at(Plain, || clean::run(a)),
        Command::History(a) => at(Plain, || history::run(a)),
        Command::Show(a) => at(Plain, || show::run(a)),
        Command::Export(a) => at(Plain, || export::run(a)),
        Command::Import(a) => at(Spools, || import::run(a)),
        Command::Plot(a) => at(Plain, || plot::run(a)),
        Command::Report(a) => at(Plain, || report::run(a)),
        Command::Compare(a) => at(Plain, || compare::run(a)),
        Command::Fleet(a) => at(Plain, || fleet::run(a)),
        Command::Trend(a) => at(Plain, || trend::run(a)),
        Command::Pattern(a) => at(Plain, || pattern::run(a)),
        Command::Completions(a) => at(Plain, || {
            completions::run(a, <crate::cli::Cli as clap::CommandFactory>::command())
        }),
        Command::Man(a) => at(Plain, || {
            man::run(a, <crate::cli::Cli as clap::CommandFactory>::command())
        }),
        Command::CliTree => at(Plain, || {
            let mut c = <crate::cli::Cli as clap::CommandFactory>::command();
            c.build();
            ipcperf_results::outln!("{}", crate::cli::tree(&c));
            Ok(0)
        }),
    }
}

fn at(kind: Kind, f: impl FnOnce() -> Result<i32, Fail> + 'static) -> (Kind, Runs) {
    (kind, Box::new(f))
}

/// `ipcperf __peer`: the other side of a case. It reports its errors to its
/// owner over the control socket, and ends the process itself.
fn peer() -> Result<i32, Fail> {
    std::process::exit(match ipcperf_core::peer::main() {
        Ok(()) => 0,
        Err(ipcperf_core::error::Error::Invalid(why)) => {
            ipcperf_results::errln!("ipcperf: error: {why}");
            2
        }
        Err(_) => 1,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn kind(args: &str) -> Kind {
        let cli = crate::cli::Cli::try_parse_from(args.split_whitespace()).unwrap();
        entry(cli.command).0
    }

    /// Every command that starts peers, makes named objects or measures has
    /// the clean-up armed; the ones that only read the store do not.
    #[test]
    fn measuring_commands_are_armed_and_readers_are_not() {
        for args in [
            "ipcperf run pipe",
            "ipcperf latency pipe",
            "ipcperf matrix pipe",
            "ipcperf sync posix-sem",
            "ipcperf replay t.strace posix-mq",
            "ipcperf advise --traffic request-reply",
            "ipcperf advise --size-dist fixed:64 --gaps fixed:1k",
            "ipcperf serve --no-token",
            "ipcperf topology --measure",
            "ipcperf list --across ipc",
        ] {
            assert_eq!(kind(args), Kind::Measures, "{args}");
        }
        for args in [
            "ipcperf list",
            "ipcperf topology",
            "ipcperf show last",
            "ipcperf compare 1 2",
            "ipcperf clean",
            "ipcperf history",
        ] {
            assert_eq!(kind(args), Kind::Plain, "{args}");
        }
        assert_eq!(kind("ipcperf import -"), Kind::Spools);
    }
}
