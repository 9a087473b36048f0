//! The kinds of namespace a peer can be started in (`--across`), and their
//! unshare(2) flags. A leaf: the rules of what crosses are in [`crate::crossing`].

use serde::{Deserialize, Serialize};

/// A kind of namespace the peer can be started in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Namespace {
    Net,
    Ipc,
    Mnt,
    Uts,
    Pid,
    User,
}

impl Namespace {
    pub const ALL: [Namespace; 6] = [
        Namespace::Net,
        Namespace::Ipc,
        Namespace::Mnt,
        Namespace::Uts,
        Namespace::Pid,
        Namespace::User,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Namespace::Net => "net",
            Namespace::Ipc => "ipc",
            Namespace::Mnt => "mnt",
            Namespace::Uts => "uts",
            Namespace::Pid => "pid",
            Namespace::User => "user",
        }
    }

    /// Its unshare(2) flag.
    pub fn flag(self) -> i32 {
        match self {
            Namespace::Net => ipcperf_sys::ns::NET,
            Namespace::Ipc => ipcperf_sys::ns::IPC,
            Namespace::Mnt => ipcperf_sys::ns::MNT,
            Namespace::Uts => ipcperf_sys::ns::UTS,
            Namespace::Pid => ipcperf_sys::ns::PID,
            Namespace::User => ipcperf_sys::ns::USER,
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
                "pid" => Namespace::Pid,
                "user" => Namespace::User,
                other => {
                    return Err(format!(
                        "{other:?}: a namespace kind is net, ipc, mnt, uts, pid or user"
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
