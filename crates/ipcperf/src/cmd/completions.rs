//! `ipcperf completions SHELL`: a completion script for bash, zsh, fish, elvish or
//! PowerShell, written to standard output (or a file), e.g.
//! `ipcperf completions bash > /etc/bash_completion.d/ipcperf`.

use std::path::PathBuf;

use clap::Args;
use clap_complete::Shell;

use crate::fail::Fail;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf completions bash > /etc/bash_completion.d/ipcperf\n  ipcperf completions zsh -o ~/.zfunc/_ipcperf"
)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish, powershell.
    #[arg(value_enum)]
    pub shell: Shell,
    /// Write here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// `cmd` is the whole command line's definition (main hands it over: the commands
/// know nothing of the list they are in).
pub fn run(a: CompletionsArgs, mut cmd: clap::Command) -> Result<i32, Fail> {
    if let Some(p) = &a.output {
        crate::fail::check_writable(p)?;
    }
    // Generated into memory first: clap_complete's writer panics on a broken pipe.
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "ipcperf", &mut script);
    match &a.output {
        Some(p) => std::fs::write(p, &script)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", p.display())))?,
        None => crate::console::out(&String::from_utf8_lossy(&script)),
    }
    Ok(0)
}
