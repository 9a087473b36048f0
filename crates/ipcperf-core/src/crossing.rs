//! IPC across namespace boundaries (`--across`): the peer process starts in
//! fresh namespaces of the kinds asked, and a mechanism that a container could
//! not use across such a boundary, by the means a container would use, is
//! refused with the reason instead of measuring something else (ipcperf hands
//! its peer descriptors, which containers do not share, and names objects in its
//! own namespaces).

pub use crate::namespace::{flags, Namespace};

use crate::error::{Error, Result};
use crate::mechanism::MechanismKind;

/// Why `kind` does not cross a boundary of `ns` (None: it does).
pub fn refuse(kind: MechanismKind, ns: Namespace) -> Option<String> {
    use MechanismKind as K;
    let why = match (ns, kind) {
        (Namespace::Ipc, K::SysvMsg) => "a SysV queue lives in its IPC namespace",
        (Namespace::Ipc, K::PosixMq) => {
            "a POSIX queue is named in its IPC namespace (its mqueue filesystem); ipcperf \
             would hand the peer an open descriptor, which two containers do not share"
        }
        (Namespace::Pid, K::Signal | K::Cma) => {
            "a process is named by its pid in its PID namespace: the peer's pid there is not \
             one this side can name"
        }
        (Namespace::Mnt, K::IpcChannel) => {
            "ipc-channel's one-shot server is a socket in the owner's temp folder, which the \
             peer's private /tmp does not hold"
        }
        #[cfg(feature = "zmq")]
        (Namespace::Net, K::ZmqTcp) => {
            "ZeroMQ binds loopback here, which another network namespace does not reach (tcp \
             and uring-tcp cross over a veth pair)"
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
        K::Fifo | K::Unix | K::UringUnix | K::File => {
            "a path in a shared directory (across mnt, the only one in the peer's own /tmp)"
        }
        K::Shm => "a memfd passed over a socket",
        #[cfg(feature = "iceoryx2")]
        K::Iceoryx2 => "its services by name, under the shared case directory and /dev/shm",
        K::IpcChannel => {
            "the crate's one-shot server socket in the owner's temp folder, then its channels in \
             a message"
        }
        #[cfg(feature = "zmq")]
        K::ZmqIpc => "an ipc:// path in a shared directory",
        #[cfg(feature = "zmq")]
        K::ZmqTcp => "tcp:// on loopback",
        #[cfg(feature = "grpc")]
        K::GrpcUds => "a socket path in a shared directory (the peer connects, then serves)",
        K::Tcp | K::UringTcp => "loopback; across net, a veth pair",
        K::Udp => "loopback; across net, a veth pair (the peer makes its own socket)",
        K::SysvMsg => "a SysV queue id",
        K::PosixMq => "a queue descriptor",
        K::Signal | K::Cma => "the peer's pid",
        _ => "a descriptor passed over a socket",
    }
}
