//! What killed runs left behind (`ipcperf clean`): named objects of ours whose
//! run is dead, owned by the user asked about. See the binary's `clean` for the
//! rules of what is ours.

use ipcperf_sys::names::{owner_pid, pid_alive, PREFIX};
use ipcperf_sys::{mqueue, sysv_msg};
use std::path::PathBuf;

/// Whose objects clean may remove: the user it runs as, plus those named.
pub struct Owners {
    pub me: u32,
    pub also: Vec<u32>,
}

impl Owners {
    fn allows(&self, uid: u32) -> bool {
        uid == self.me || self.also.contains(&uid)
    }

    /// "" for our own; " (uid N)" for another user's, so the output names them.
    fn tag(&self, uid: u32) -> String {
        if uid == self.me {
            String::new()
        } else {
            format!(" (uid {uid})")
        }
    }
}

/// The effective uid: the owner of our own /proc entry.
pub fn effective_uid() -> Option<u32> {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .ok()
}

/// An orphan: what it is, and how to remove it.
pub struct Orphan {
    pub what: String,
    pub remove: Box<dyn Fn() -> std::io::Result<()>>,
}

pub fn dead_owner(name: &str) -> bool {
    owner_pid(name).is_some_and(|p| p != std::process::id() as i32 && !pid_alive(p))
}

/// Entries of `dir` under our prefix: name, path, and the entry itself (not what a
/// symbolic link points to).
pub fn entries(dir: &std::path::Path) -> Vec<(String, PathBuf, std::fs::Metadata)> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let meta = std::fs::symlink_metadata(e.path()).ok()?;
                    Some((e.file_name().to_string_lossy().into_owned(), e.path(), meta))
                })
                .filter(|(n, _, _)| n.strip_prefix("sem.").unwrap_or(n).starts_with(PREFIX))
                .collect()
        })
        .unwrap_or_default()
}

pub fn find(base: &std::path::Path, who: &Owners) -> (Vec<Orphan>, Vec<String>) {
    use std::os::unix::fs::MetadataExt;
    let mut v: Vec<Orphan> = Vec::new();
    let mut notes = Vec::new();
    for (n, p, meta) in entries(base) {
        // A real directory or file of an allowed user (a file: the copy a
        // killed `import -` was making of its stream); never a link someone
        // planted.
        let t = meta.file_type();
        if !(dead_owner(&n) && (t.is_dir() || t.is_file()) && who.allows(meta.uid())) {
            continue;
        }
        let what = if t.is_dir() { "directory" } else { "file" };
        v.push(Orphan {
            what: format!("{what} {}{}", p.display(), who.tag(meta.uid())),
            remove: Box::new(move || {
                if t.is_dir() {
                    std::fs::remove_dir_all(&p)
                } else {
                    std::fs::remove_file(&p)
                }
            }),
        });
    }
    for (n, p, meta) in entries(std::path::Path::new("/dev/shm")) {
        // POSIX named semaphores live there as `sem.<name>`.
        if dead_owner(n.strip_prefix("sem.").unwrap_or(&n))
            && meta.file_type().is_file()
            && who.allows(meta.uid())
        {
            v.push(Orphan {
                what: format!("shared memory {}{}", p.display(), who.tag(meta.uid())),
                remove: Box::new(move || std::fs::remove_file(&p)),
            });
        }
    }
    match mqueue::list_owned() {
        Some(names) => {
            for (name, quid) in names {
                if name.trim_start_matches('/').starts_with(PREFIX)
                    && dead_owner(&name)
                    && who.allows(quid)
                {
                    let n2 = name.clone();
                    v.push(Orphan {
                        what: format!("POSIX message queue {name}{}", who.tag(quid)),
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
    for q in sysv_msg::list() {
        let Some(pid) = sysv_msg::owner_of_key(q.key) else {
            continue;
        };
        if q.mode & 0o777 == 0o600
            && who.allows(q.uid)
            && pid != std::process::id() as i32
            && !pid_alive(pid)
        {
            let id = q.id;
            v.push(Orphan {
                what: format!(
                    "SysV message queue id {id} (key 0x{:08x}, pid {pid}){}",
                    q.key,
                    who.tag(q.uid)
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
        if who.allows(quid) && pid != std::process::id() as i32 && !pid_alive(pid) {
            v.push(Orphan {
                what: format!(
                    "SysV semaphore set id {id} (key 0x{key:08x}, pid {pid}){}",
                    who.tag(quid)
                ),
                remove: Box::new(move || {
                    ipcperf_sys::sem::sysv_sem_remove(id);
                    Ok(())
                }),
            });
        }
    }
    // ftrace instances of `--explain --tracer tracefs` (root's) whose run was killed.
    // (Listing them takes no lock; removing one takes tracing's, so it is done
    // only where tracing answers: where it does not, the note says why.)
    if let Ok(tfs) = ipcperf_sys::trace::Tracefs::find() {
        let found = ipcperf_sys::ftrace::orphans(&tfs);
        let found = match found.is_empty() {
            true => found,
            false => match tfs.answers() {
                Err(why) => {
                    let n = found.len();
                    let s = if n == 1 { "" } else { "s" };
                    notes.push(format!("{n} ftrace instance{s} left: {why}"));
                    Vec::new()
                }
                Ok(()) => found,
            },
        };
        for (p, uid) in found {
            if who.allows(uid) {
                let name = p
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                v.push(Orphan {
                    what: format!("ftrace instance {name}{}", who.tag(uid)),
                    remove: Box::new(move || std::fs::remove_dir(&p)),
                });
            }
        }
    }
    // Network namespaces of `--across net` with tcp (root's): deleting one deletes
    // its veth end, and with it ours.
    for (n, _, meta) in entries(std::path::Path::new("/run/netns")) {
        if dead_owner(&n) && meta.file_type().is_file() && who.allows(meta.uid()) {
            v.push(Orphan {
                what: format!(
                    "network namespace {n} and its veth pair{}",
                    who.tag(meta.uid())
                ),
                remove: Box::new(move || {
                    let out = std::process::Command::new("ip")
                        .args(["netns", "del", &n])
                        .output()?;
                    if out.status.success() {
                        Ok(())
                    } else {
                        Err(std::io::Error::other(
                            String::from_utf8_lossy(&out.stderr).trim().to_string(),
                        ))
                    }
                }),
            });
        }
    }
    (v, notes)
}
