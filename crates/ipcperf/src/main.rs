//! ipcperf: how fast can two processes talk on this machine, by each way the OS offers?
//!
//! The binary turns arguments into plans, runs them through `ipcperf-core`, and
//! hands the records to the console and the exporters. Exit codes: 0 success,
//! 1 a case failed, 2 bad input.

mod cli;
mod cmd;
mod console;
mod export;
mod units;

use clap::Parser;

/// An error for the user: one line, and the exit code it deserves.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
}

impl Fail {
    /// Bad input: exit code 2.
    pub fn usage(message: impl Into<String>) -> Fail {
        Fail {
            code: 2,
            message: message.into(),
        }
    }
    /// Something failed while running: exit code 1.
    pub fn failure(message: impl Into<String>) -> Fail {
        Fail {
            code: 1,
            message: message.into(),
        }
    }
}

fn main() {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Peer => {
            // The peer reports its errors to its owner over the control socket.
            std::process::exit(match ipcperf_core::mode::process::peer_main() {
                Ok(()) => 0,
                Err(_) => 1,
            });
        }
        cli::Command::Run(a) => {
            ipcperf_sys::signal::cleanup_on_interrupt();
            cmd::run::run(*a)
        }
        cli::Command::List(a) => cmd::list::run(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(f) => {
            eprintln!("ipcperf: error: {}", f.message);
            std::process::exit(f.code);
        }
    }
}
