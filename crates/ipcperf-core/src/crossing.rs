//! IPC across namespace boundaries (`--across`): the peer process starts in
//! fresh namespaces of the kinds asked, and a mechanism that a container could
//! not use across such a boundary, by the means a container would use, is
//! refused with the reason instead of measuring something else (ipcperf hands
//! its peer descriptors, which containers do not share, and names objects in its
//! own namespaces).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::mechanism::MechanismKind;

/// A kind of namespace the peer can be started in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Namespace {
    Net,
    Ipc,
    Mnt,
    Uts,
}

impl Namespace {
    pub const ALL: [Namespace; 4] = [
        Namespace::Net,
        Namespace::Ipc,
        Namespace::Mnt,
        Namespace::Uts,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Namespace::Net => "net",
            Namespace::Ipc => "ipc",
            Namespace::Mnt => "mnt",
            Namespace::Uts => "uts",
        }
    }

    /// Its unshare(2) flag.
    pub fn flag(self) -> i32 {
        match self {
            Namespace::Net => ipcperf_sys::ns::NET,
            Namespace::Ipc => ipcperf_sys::ns::IPC,
            Namespace::Mnt => ipcperf_sys::ns::MNT,
            Namespace::Uts => ipcperf_sys::ns::UTS,
        }
    }

    /// A comma list (`net,ipc`); pid and user are named with why they are not
    /// offered.
    pub fn parse_list(s: &str) -> std::result::Result<Vec<Namespace>, String> {
        let mut v = Vec::new();
        for part in s.split(',').map(str::trim) {
            let ns = match part {
                "net" => Namespace::Net,
                "ipc" => Namespace::Ipc,
                "mnt" => Namespace::Mnt,
                "uts" => Namespace::Uts,
                "pid" => {
                    return Err(
                        "pid: not built yet (a new PID namespace takes a fork after \
                                unshare, and signal and cma would need the peer's pid there)"
                            .into(),
                    )
                }
                "user" => {
                    return Err("user: not built yet (it is for runs without root; run as \
                                root for net, ipc, mnt, uts)"
                        .into())
                }
                other => {
                    return Err(format!(
                        "{other:?}: a namespace kind is net, ipc, mnt or uts"
                    ))
                }
            };
            if !v.contains(&ns) {
                v.push(ns);
            }
        }
        v.sort();
        Ok(v)
    }

    pub fn list_name(v: &[Namespace]) -> String {
        v.iter().map(|n| n.name()).collect::<Vec<_>>().join(",")
    }
}

/// The unshare(2) flags of `v`.
pub fn flags(v: &[Namespace]) -> i32 {
    v.iter().fold(0, |f, n| f | n.flag())
}

/// Why `kind` does not cross a boundary of `ns` (None: it does).
pub fn refuse(kind: MechanismKind, ns: Namespace) -> Option<String> {
    use MechanismKind as K;
    let why = match (ns, kind) {
        (Namespace::Net, K::Udp) => {
            "loopback belongs to its network namespace, and ipcperf makes both UDP sockets \
             itself (a passed socket would cross, which no container's does); across one, \
             TCP runs over a veth pair, UDP is not built yet"
        }
        (Namespace::Ipc, K::SysvMsg) => "a SysV queue lives in its IPC namespace",
        (Namespace::Ipc, K::PosixMq) => {
            "a POSIX queue is named in its IPC namespace (its mqueue filesystem); ipcperf \
             would hand the peer an open descriptor, which two containers do not share"
        }
        (_, K::Memcpy | K::Null) => "not IPC: one side only",
        _ => return None,
    };
    Some(format!("{} across {}: {why}", kind.name(), ns.name()))
}

/// Refuse a case across `ns` that cannot be measured so: a peer that is not a
/// process of its own (`processes` false: threads share the namespaces), or a
/// mechanism that does not cross (unless `probe`: see what happens).
pub fn check(kind: MechanismKind, processes: bool, ns: &[Namespace], probe: bool) -> Result<()> {
    if ns.is_empty() {
        return Ok(());
    }
    if !processes {
        return Err(Error::Refused(format!(
            "--across {}: the peer must be a process of its own (--mode processes); threads \
             share their process's namespaces",
            Namespace::list_name(ns)
        )));
    }
    for &n in ns.iter().filter(|_| !probe) {
        if let Some(why) = refuse(kind, n) {
            return Err(Error::Refused(why));
        }
    }
    Ok(())
}

/// How each crossing mechanism reaches its peer across the boundary (for `list
/// --across`): inherited or passed descriptors, or a path in a shared directory.
pub fn means(kind: MechanismKind) -> &'static str {
    use MechanismKind as K;
    match kind {
        K::Fifo | K::Unix | K::File => "a path in a shared directory",
        K::Shm => "a memfd passed over a socket",
        K::Tcp => "loopback; across net, a veth pair",
        K::Udp => "loopback",
        K::SysvMsg => "a SysV queue id",
        K::PosixMq => "a queue descriptor",
        K::Signal | K::Cma => "the peer's pid",
        _ => "a descriptor passed over a socket",
    }
}
