//! `ipcperf clean`: remove what a killed run left behind — only ours, and only
//! when the run that made it is dead.
//!
//! Ours means: a name `ipcperf-<pid>-...` (private directories in the temp
//! directory, /dev/shm entries including `sem.ipcperf-...` semaphores, and POSIX
//! queues, listed through an mqueue file system: see `ipcperf_sys::mqueue::list`),
//! or a SysV message queue or semaphore set whose key is
//! `0x7000_0000 | pid << 6 | seq` (queues also mode 0600) with our uid (see
//! `ipcperf_sys::sysv_msg`, `ipcperf_sys::sem`). The pid in the name or key must
//! not be alive.

use std::path::PathBuf;

use clap::Args;
use ipcperf_sys::names::{owner_pid, pid_alive, PREFIX};
use ipcperf_sys::{mqueue, sysv_msg};

use crate::Fail;

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// Only list what would be removed.
    #[arg(long)]
    pub dry_run: bool,

    /// The directory private directories were made in (default: $TMPDIR or /tmp).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// An orphan: what it is, and how to remove it.
struct Orphan {
    what: String,
    remove: Box<dyn Fn() -> std::io::Result<()>>,
}

fn dead_owner(name: &str) -> bool {
    owner_pid(name).is_some_and(|p| p != std::process::id() as i32 && !pid_alive(p))
}

fn entries(dir: &std::path::Path) -> Vec<(String, PathBuf)> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .filter(|(n, _)| n.strip_prefix("sem.").unwrap_or(n).starts_with(PREFIX))
                .collect()
        })
        .unwrap_or_default()
}

fn find(base: &std::path::Path) -> (Vec<Orphan>, Vec<String>) {
    let mut v: Vec<Orphan> = Vec::new();
    let mut notes = Vec::new();
    for (n, p) in entries(base) {
        if dead_owner(&n) && p.is_dir() {
            v.push(Orphan {
                what: format!("directory {}", p.display()),
                remove: Box::new(move || std::fs::remove_dir_all(&p)),
            });
        }
    }
    for (n, p) in entries(std::path::Path::new("/dev/shm")) {
        // POSIX named semaphores live there as `sem.<name>`.
        if dead_owner(n.strip_prefix("sem.").unwrap_or(&n)) {
            v.push(Orphan {
                what: format!("shared memory {}", p.display()),
                remove: Box::new(move || std::fs::remove_file(&p)),
            });
        }
    }
    match mqueue::list() {
        Some(names) => {
            for name in names {
                if name.trim_start_matches('/').starts_with(PREFIX) && dead_owner(&name) {
                    let n2 = name.clone();
                    v.push(Orphan {
                        what: format!("POSIX message queue {name}"),
                        remove: Box::new(move || {
                            mqueue::unlink(&n2).map_err(|e| std::io::Error::other(e.to_string()))
                        }),
                    });
                }
            }
        }
        None => notes.push(
            "no mqueue file system is mounted and this user cannot mount one: POSIX \
             queues cannot be listed (as root, clean mounts one for the look; or \
             mount -t mqueue none /dev/mqueue)"
                .to_string(),
        ),
    }
    // Our uid: the owner of our own /proc entry.
    let uid = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .ok();
    for q in sysv_msg::list() {
        let Some(pid) = sysv_msg::owner_of_key(q.key) else {
            continue;
        };
        if q.mode & 0o777 == 0o600
            && Some(q.uid) == uid
            && pid != std::process::id() as i32
            && !pid_alive(pid)
        {
            let id = q.id;
            v.push(Orphan {
                what: format!(
                    "SysV message queue id {id} (key 0x{:08x}, pid {pid})",
                    q.key
                ),
                remove: Box::new(move || {
                    sysv_msg::remove(id).map_err(|e| std::io::Error::other(e.to_string()))
                }),
            });
        }
    }
    for (key, id, quid) in ipcperf_sys::sem::sysv_sem_list() {
        let Some(pid) = ipcperf_sys::sem::sem_owner_of_key(key) else {
            continue;
        };
        if Some(quid) == uid && pid != std::process::id() as i32 && !pid_alive(pid) {
            v.push(Orphan {
                what: format!("SysV semaphore set id {id} (key 0x{key:08x}, pid {pid})"),
                remove: Box::new(move || {
                    ipcperf_sys::sem::sysv_sem_remove(id);
                    Ok(())
                }),
            });
        }
    }
    (v, notes)
}

pub fn run(a: CleanArgs) -> Result<i32, Fail> {
    let base = a
        .dir
        .clone()
        .unwrap_or_else(ipcperf_sys::names::default_base);
    let (orphans, notes) = find(&base);
    for n in notes {
        eprintln!("ipcperf: note: {n}");
    }
    let mut failed = 0;
    for o in &orphans {
        if a.dry_run {
            println!("would remove {}", o.what);
            continue;
        }
        match (o.remove)() {
            Ok(()) => println!("removed {}", o.what),
            Err(e) => {
                failed += 1;
                eprintln!("ipcperf: cannot remove {}: {e}", o.what);
            }
        }
    }
    if orphans.is_empty() {
        println!("nothing to clean: no ipcperf objects whose run is dead");
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
