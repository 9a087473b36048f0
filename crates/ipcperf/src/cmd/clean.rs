//! `ipcperf clean`: remove what a killed run left behind — only ours, and only
//! when the run that made it is dead.
//!
//! Ours means: a name `ipcperf-<pid>-...` (private directories in the temp
//! directory and files there, the copy `import -` makes of its stream;
//! /dev/shm entries including `sem.ipcperf-...` semaphores; POSIX queues,
//! listed through an mqueue file system: see `ipcperf_sys::mqueue::list`),
//! or a SysV message queue or semaphore set whose key is
//! `0x7000_0000 | pid << 6 | seq` (queues also mode 0600) with our uid (see
//! `ipcperf_sys::sysv_msg`, `ipcperf_sys::sem`), or an ftrace instance
//! `instances/ipcperf-<pid>-...` of `--explain --tracer tracefs` (root's: see
//! `ipcperf_sys::ftrace`). The pid in the name or key must
//! not be alive. And ours means owned by the user `clean` runs as: root touches
//! another user's objects only when `--user UID` names that user, and never
//! follows a symbolic link planted under our prefix.

use std::path::PathBuf;

use clap::Args;

use crate::fail::Fail;
use ipcperf_core::orphans::{effective_uid, find, Owners};

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  ipcperf clean --dry-run\n  ipcperf clean")]
pub struct CleanArgs {
    /// Only list what would be removed.
    #[arg(long)]
    pub dry_run: bool,

    /// The directory private directories were made in (default: $TMPDIR or /tmp).
    #[arg(long)]
    pub dir: Option<PathBuf>,

    /// Also remove the orphans of this user (a uid or a user name; repeat for
    /// several). Root only: without it, clean touches only objects of the user
    /// it runs as.
    #[arg(long = "user", value_name = "UID|NAME", value_parser = parse_user)]
    pub users: Vec<u32>,
}

/// `--user`: a uid, or the name of a user of this machine (it said "invalid
/// digit found in string" to `--user nobody`).
fn parse_user(s: &str) -> Result<u32, String> {
    if let Ok(uid) = s.parse::<u32>() {
        return Ok(uid);
    }
    ipcperf_sys::user::uid_of(s)
        .ok_or_else(|| format!("'{s}' is neither a uid nor a user of this machine"))
}

pub fn run(a: CleanArgs) -> Result<i32, Fail> {
    // A mistyped --dir looked nowhere and said "nothing to clean".
    if let Some(d) = &a.dir {
        if !d.is_dir() {
            return Err(Fail::usage(format!(
                "--dir {}: no such directory",
                d.display()
            )));
        }
    }
    let base = a
        .dir
        .clone()
        .unwrap_or_else(ipcperf_sys::names::default_base);
    let me = effective_uid().ok_or_else(|| Fail::failure("cannot tell which user this is"))?;
    if !a.users.is_empty() && me != 0 {
        return Err(Fail::usage(
            "--user: only root may remove another user's objects",
        ));
    }
    let who = Owners {
        me,
        also: a.users.clone(),
    };
    let (orphans, notes) = find(&base, &who);
    for n in notes {
        ipcperf_results::errln!("ipcperf: note: {n}");
    }
    let mut failed = 0;
    for o in &orphans {
        if a.dry_run {
            ipcperf_results::outln!("would remove {}", o.what);
            continue;
        }
        match (o.remove)() {
            Ok(()) => ipcperf_results::outln!("removed {}", o.what),
            Err(e) => {
                failed += 1;
                ipcperf_results::errln!("ipcperf: cannot remove {}: {e}", o.what);
            }
        }
    }
    if orphans.is_empty() {
        ipcperf_results::outln!("nothing to clean: no ipcperf objects whose run is dead");
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
