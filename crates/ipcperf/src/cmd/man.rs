//! `ipcperf man`: the manual page (roff), generated from the same definitions as
//! `--help` (clap_mangen), e.g. `ipcperf man > /usr/local/share/man/man1/ipcperf.1`;
//! `--dir D` writes one page per subcommand too (`ipcperf-run.1`, ...).

use std::path::PathBuf;

use clap::Args;

use crate::fail::Fail;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf man | man -l -\n  ipcperf man --dir /usr/local/share/man/man1"
)]
pub struct ManArgs {
    /// Write ipcperf.1 and a page per subcommand into this directory instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

fn render(cmd: clap::Command) -> Result<Vec<u8>, Fail> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut page)
        .map_err(|e| Fail::failure(format!("cannot render the manual page: {e}")))?;
    Ok(page)
}

/// `cmd` is the whole command line's definition (main hands it over).
pub fn run(a: ManArgs, cmd: clap::Command) -> Result<i32, Fail> {
    let Some(dir) = &a.dir else {
        // Rendered into memory first, so a closed reader ends quietly.
        crate::console::out(&String::from_utf8_lossy(&render(cmd)?));
        return Ok(0);
    };
    if !dir.exists() {
        return Err(Fail::usage(format!(
            "{}: no such directory (make it first)",
            dir.display()
        )));
    }
    if !dir.is_dir() {
        return Err(Fail::usage(format!("{}: not a directory", dir.display())));
    }
    let write = |name: &str, page: Vec<u8>| {
        let p = dir.join(name);
        std::fs::write(&p, page)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", p.display())))
    };
    let mut cmd = cmd;
    cmd.build();
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("ipcperf-{}", sub.get_name());
        write(
            &format!("{name}.1"),
            render(sub.clone().name(name.clone()))?,
        )?;
    }
    write("ipcperf.1", render(cmd)?)?;
    Ok(0)
}
