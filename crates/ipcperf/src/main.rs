//! ipcperf: how fast can two processes talk on this machine, by each way the OS offers?
//!
//! The binary turns arguments into plans, runs them through `ipcperf-core`, and
//! hands the records to the console and the exporters. Exit codes: 0 success,
//! 1 a case failed, 2 bad input.

#![forbid(unsafe_code)]

mod background;
mod cli;
mod cmd;
mod commands;
mod shared;
#[cfg(test)]
mod snapshot_tests;

// The results library under the names the commands have always used.
#[cfg(test)]
use ipcperf_results::testdata;
use ipcperf_results::{
    advise, chart, choice, compare, console, document, export, fail, fleet, import, measured,
    pattern, report, store, units,
};

/// The system's allocator, except that a failed allocation (`ulimit -v`) ends
/// the run in one line, its named objects removed, exit 1, not an abort.
#[global_allocator]
static ALLOCATOR: ipcperf_sys::alloc::Guarded = ipcperf_sys::alloc::Guarded;

/// A panic (a bug of ours) says one line, with the version and where to report it
/// (the backtrace only with RUST_BACKTRACE), removes every named object still
/// registered and kills our peers, as Ctrl-C does, and exits 101.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let what = what.split_whitespace().collect::<Vec<_>>().join(" ");
        ipcperf_results::errln!(
            "ipcperf: internal error{at}: {what} (ipcperf {}; a bug, not your input: please \
             report it with the command line at {}/issues)",
            env!("CARGO_PKG_VERSION"),
            env!("CARGO_PKG_REPOSITORY")
        );
        if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| !v.is_empty() && v != "0") {
            ipcperf_results::errln!("{}", std::backtrace::Backtrace::force_capture());
        }
        ipcperf_sys::cleanup::run_all();
        std::process::exit(101);
    }));
}

/// A variable set but empty (`IPCPERF_NO_SAVE=`, as CI templates and shells leave
/// them) means the same as one not set. Called first in `main`, before any thread.
fn forget_empty_variables() {
    let empty: Vec<_> = std::env::vars_os()
        .filter(|(k, v)| k.to_string_lossy().starts_with("IPCPERF_") && v.is_empty())
        .map(|(k, _)| k)
        .collect();
    for k in empty {
        std::env::remove_var(k);
    }
}

/// Parse the arguments; bad input is one line on stderr and exit code 2 (help and
/// --version print as clap prints them).
fn parse_args() -> cli::Cli {
    use clap::error::ErrorKind;
    use clap::FromArgMatches;
    let parsed = cli::command()
        .try_get_matches()
        .and_then(|m| cli::Cli::from_arg_matches(&m));
    parsed.unwrap_or_else(|e| {
        if matches!(
            e.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        ) {
            // Help and --version print as clap prints them; one that cannot be
            // written (`--help > /dev/full`) is said, exit 1, not passed as 0.
            match e.print() {
                Err(w) if w.kind() != std::io::ErrorKind::BrokenPipe => {
                    ipcperf_results::errln!("ipcperf: error: cannot write to standard output: {w}");
                    std::process::exit(1);
                }
                _ => std::process::exit(e.exit_code()),
            }
        }
        // clap's first paragraph says what is wrong; the rest is usage and tips.
        let text = e.render().to_string();
        let first = text.split("\n\n").next().unwrap_or_default();
        let mut line = first.split_whitespace().collect::<Vec<_>>().join(" ");
        // A missing argument named alone ("<B>", "<MECHANISM>") says little:
        // its usage line goes with it.
        if e.kind() == ErrorKind::MissingRequiredArgument {
            let usage = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("Usage: "))
                .map(|u| without_env_db(u.split_whitespace()).join(" "));
            if let Some(u) = usage {
                line = format!("{line} (usage: {u}; see --help)");
            }
        }
        ipcperf_results::errln!("ipcperf: {}", printable_line(&line));
        std::process::exit(2);
    })
}

/// A usage line's words without `--db <PATH|URL>` when the history came from
/// `IPCPERF_DB`, not the command line: clap counts an option set from the
/// environment as given, and `compare 1` answered "usage: ipcperf compare --db
/// <PATH|URL> <A> <B>", as if the command needed it.
fn without_env_db<'a>(words: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let typed = std::env::args_os().any(|a| {
        let a = a.to_string_lossy();
        a == "--db" || a.starts_with("--db=")
    });
    let mut words: Vec<&str> = words.collect();
    if !typed {
        if let Some(i) = words.iter().position(|w| *w == "--db") {
            words.drain(i..(i + 2).min(words.len()));
        }
    }
    words
}

/// An error line as the terminal should show it: each word of over 256
/// characters (no path a user types) cut to its first 60 and last 20, how many
/// were left out between (a 100,000-character `--label` was echoed whole, twice:
/// clap's "invalid value" and the reason, a 200 KB line).
///
/// Control characters (but newline and tab) are written as escapes: `run
/// $'pi\rpe'` echoed the carriage return, and the terminal wrote the rest of
/// the line over its start.
///
/// std's "(os error 28)" is said as every system call's error is: "(ENOSPC)".
fn printable_line(line: &str) -> String {
    const MOST: usize = 256;
    static OS_ERROR: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\(os error (\d+)\)").expect("a regex"));
    let line = OS_ERROR.replace_all(line, |c: &regex::Captures| {
        match c[1].parse().map(ipcperf_sys::error::Errno::from_raw) {
            Ok(n) if n != ipcperf_sys::error::Errno::UnknownErrno => format!("({n:?})"),
            _ => c[0].to_string(),
        }
    });
    let line = ipcperf_results::console::printable(&line);
    line.split(' ')
        .map(|w| {
            let chars: Vec<char> = w.chars().collect();
            if chars.len() <= MOST {
                return w.to_string();
            }
            let head: String = chars[..60].iter().collect();
            let tail: String = chars[chars.len() - 20..].iter().collect();
            format!("{head}…({} characters left out)…{tail}", chars.len() - 80)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Stack the main thread is given where `ulimit -s` allowed less (clap's
/// parsing overflowed 64 KiB: a SIGSEGV, exit 134, even for `--version`).
const MAIN_STACK: u64 = 8 << 20;
/// Under this (a hard `ulimit -s` that cannot be raised) ipcperf refuses to
/// start: every command ran under 128 KiB here, none under 64 KiB.
const LEAST_STACK: u64 = 256 << 10;

/// `main` keeps its own frame small, so that the stack's limit is seen to
/// before the frames that need it.
fn main() {
    match ipcperf_sys::fd::raise_stack(MAIN_STACK) {
        Ok(have) if have < LEAST_STACK => {
            ipcperf_results::errln!(
                "ipcperf: error: the stack is limited to {} KiB (`ulimit -s`), under the {} KiB \
                 ipcperf needs; raise it (`ulimit -s 8192`)",
                have / 1024,
                LEAST_STACK / 1024
            );
            std::process::exit(2);
        }
        _ => {}
    }
    // Too little address space left to work in: the stack's next page could
    // not be had, a SIGSEGV with no word (seen 1 MiB above the mapping).
    if let Some((limit, mapped)) = ipcperf_sys::alloc::address_space() {
        if limit.saturating_sub(mapped) < LEAST_ROOM {
            ipcperf_results::errln!(
                "ipcperf: error: the address-space limit (`ulimit -v` {} KiB) leaves {} KiB beyond \
                 the {} KiB ipcperf has mapped; it needs {} KiB more to work in: raise it",
                limit / 1024,
                limit.saturating_sub(mapped) / 1024,
                mapped / 1024,
                LEAST_ROOM / 1024
            );
            std::process::exit(2);
        }
    }
    run()
}

/// Address space a process of ipcperf needs beyond its own mapping at start:
/// with 4.4 MiB, glibc's first thread-local destructor could not be had
/// (`run`, `latency` and `sync` each aborted, "Fatal glibc error"); from 4.8
/// MiB on, each ended cleanly (as far as 9.6 MiB, a sweep of 400 KiB steps).
const LEAST_ROOM: u64 = 6 << 20;

#[inline(never)]
fn run() {
    // Before any thread exists (the Ctrl-C thread, peers, watchdogs), so that every
    // thread of this process, and of a `__peer` process, inherits the blocked mask:
    // the `signal` mechanism's real-time signals are then queued, never fatal.
    if let Err(e) = ipcperf_sys::rtsig::block_all() {
        ipcperf_results::errln!("ipcperf: {e}");
        std::process::exit(1);
    }
    ipcperf_sys::signal::ignore_file_size_limit_signal();
    ipcperf_sys::signal::count_continues();
    ipcperf_sys::alloc::keep_reserve();
    forget_empty_variables();
    quiet_panics();
    let cli = parse_args();
    console::set_verbosity(if cli.quiet { -1 } else { i8::from(cli.verbose) });
    console::set_color(&cli.color);
    match &cli.command {
        cli::Command::Run(a) => a.tracer.apply(),
        cli::Command::Latency(a) => a.tracer.apply(),
        cli::Command::Matrix(a) => a.tracer.apply(),
        cli::Command::Sync(a) => a.tracer.apply(),
        _ => {}
    }
    // A measuring command's plan notes wait for its last input check
    // (`console::machine_warnings`): bad input found late is still one line.
    if matches!(
        &cli.command,
        cli::Command::Run(_)
            | cli::Command::Latency(_)
            | cli::Command::Matrix(_)
            | cli::Command::Sync(_)
            | cli::Command::Advise(_)
            | cli::Command::Replay(_)
    ) {
        console::hold();
    }
    // Boxes on a terminal; ASCII lines into a pipe or a file.
    console::set_boxes(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    let result = commands::dispatch(cli.command);
    // Interrupted (Ctrl-C) while the run ended: the handler's exit, 128 + the
    // signal, is the one that counts; wait for it.
    let wait_for_the_handler = || {
        while ipcperf_sys::signal::interrupted() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    match result {
        Ok(code) => {
            console::release();
            wait_for_the_handler();
            std::process::exit(code)
        }
        Err(f) => {
            if f.code == 2 {
                console::forget_held();
            } else {
                console::release();
            }
            wait_for_the_handler();
            console::err_raw(&format!(
                "ipcperf: {} {}\n",
                console::paint("error:", 31),
                printable_line(&f.message)
            ));
            std::process::exit(f.code);
        }
    }
}
