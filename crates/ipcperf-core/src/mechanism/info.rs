//! What each mechanism is, as `ipcperf list` shows it: its name, the modes it
//! runs in, the named objects it makes, a one-line summary.

use serde::Serialize;

use super::MechanismKind;
use crate::kind::Mode;

/// What a user can know about a mechanism before running it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct MechanismInfo {
    pub kind: MechanismKind,
    pub name: &'static str,
    pub summary: &'static str,
    /// Modes it can run in.
    pub modes: &'static [Mode],
    /// One side only (no reader): `null`, `memcpy`.
    pub solo: bool,
    /// The reader starts only after the writer has written everything (`file`).
    pub reader_after_writer: bool,
    /// Named objects it creates, for `list`.
    pub names: &'static str,
}

const ALL_MODES: &[Mode] = &[Mode::Single, Mode::Threads, Mode::Processes];
const SOLO: &[Mode] = &[Mode::Single];

pub const MECHANISMS: &[MechanismInfo] = &[
    MechanismInfo {
        kind: MechanismKind::Pipe,
        name: "pipe",
        summary: "anonymous pipe (pipe2); --pipe-size sets its buffer",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "none",
    },
    MechanismInfo {
        kind: MechanismKind::Fifo,
        name: "fifo",
        summary: "named pipe (mkfifo) in a private directory",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "FIFO path",
    },
    MechanismInfo {
        kind: MechanismKind::Unix,
        name: "unix",
        summary: "Unix-domain stream socket on a path",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "socket path",
    },
    MechanismInfo {
        kind: MechanismKind::Tcp,
        name: "tcp",
        summary: "TCP over loopback (--ipv6, --nodelay, --sndbuf, --rcvbuf, --nonblocking)",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "none (ephemeral port)",
    },
    MechanismInfo {
        kind: MechanismKind::File,
        name: "file",
        summary: "temp file: the writer writes everything, then the reader reads it (--dir)",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: true,
        names: "temp file",
    },
    MechanismInfo {
        kind: MechanismKind::Null,
        name: "null",
        summary: "the writer alone into /dev/null: a sender's ceiling",
        modes: SOLO,
        solo: true,
        reader_after_writer: false,
        names: "none",
    },
    MechanismInfo {
        kind: MechanismKind::Memcpy,
        name: "memcpy",
        summary: "one thread copying between two buffers: the memory-bandwidth ceiling",
        modes: SOLO,
        solo: true,
        reader_after_writer: false,
        names: "none",
    },
    MechanismInfo {
        kind: MechanismKind::SysvMsg,
        name: "sysv-msg",
        summary: "System V message queue (msgget/msgsnd/msgrcv); one queue, a type per direction",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "SysV queue id (key 0x7<pid><seq>)",
    },
    MechanismInfo {
        kind: MechanismKind::PosixMq,
        name: "posix-mq",
        summary: "POSIX message queue (mq_open/mq_send/mq_receive; --priority)",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "/ipcperf-<pid>-... queue name",
    },
    MechanismInfo {
        kind: MechanismKind::UnixDgram,
        name: "unix-dgram",
        summary: "Unix-domain datagram socketpair (message boundaries kept, no loss)",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "none (socketpair)",
    },
    MechanismInfo {
        kind: MechanismKind::UnixSeqpacket,
        name: "unix-seqpacket",
        summary: "Unix-domain SOCK_SEQPACKET socketpair",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "none (socketpair)",
    },
    MechanismInfo {
        kind: MechanismKind::Udp,
        name: "udp",
        summary: "UDP over loopback; sequence-numbered datagrams, loss/duplication/reordering counted (max 65,507 B)",
        modes: ALL_MODES,
        solo: false,
        reader_after_writer: false,
        names: "none (ephemeral ports)",
    },
    MechanismInfo {
        kind: MechanismKind::Vmsplice,
        name: "vmsplice",
        summary: "pipe fed with vmsplice, drained with splice to /dev/null: zero-copy (--no-touch only)",
        modes: &[Mode::Threads, Mode::Processes],
        solo: false,
        reader_after_writer: false,
        names: "none",
    },
    MechanismInfo {
        kind: MechanismKind::Cma,
        name: "cma",
        summary: "cross-memory attach: the receiver copies with process_vm_readv; pipes notify",
        modes: &[Mode::Threads, Mode::Processes],
        solo: false,
        reader_after_writer: false,
        names: "none",
    },
    MechanismInfo {
        kind: MechanismKind::Shm,
        name: "shm",
        summary: "SPSC ring in shared memory (memfd; --shm-named: POSIX object); --wake spin|futex|eventfd|sem",
        modes: &[Mode::Threads, Mode::Processes],
        solo: false,
        reader_after_writer: false,
        names: "none (memfd); /ipcperf-<pid>-...-ring with --shm-named",
    },
    MechanismInfo {
        kind: MechanismKind::Eventfd,
        name: "eventfd",
        summary: "wake-up carrying an 8-byte counter, one eventfd per direction (latency only, 8 B)",
        modes: &[Mode::Threads, Mode::Processes],
        solo: false,
        reader_after_writer: false,
        names: "none",
    },
    MechanismInfo {
        kind: MechanismKind::Signal,
        name: "signal",
        summary: "real-time signal with sigqueue carrying a 32-bit value (latency only, <= 4 B)",
        modes: &[Mode::Threads, Mode::Processes],
        solo: false,
        reader_after_writer: false,
        names: "none",
    },
];
