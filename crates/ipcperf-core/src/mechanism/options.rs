//! The options that shape a mechanism's kernel object (pipe size, ring
//! capacity, wake-up, ...), as the plan carries them to each side.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::*;

/// Options that shape a mechanism's kernel object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MechOptions {
    /// F_SETPIPE_SZ for pipe and fifo.
    pub pipe_size: Option<usize>,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// SO_SNDBUF / SO_RCVBUF on both sockets.
    pub sndbuf: Option<usize>,
    pub rcvbuf: Option<usize>,
    /// Non-blocking descriptors driven by poll(2).
    pub nonblocking: bool,
    /// TCP over ::1 instead of 127.0.0.1.
    pub ipv6: bool,
    /// Where private directories (FIFOs, socket paths, temp files) go.
    pub dir: Option<PathBuf>,
    /// POSIX message queues: the priority every message is sent with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mq_priority: Option<u32>,
    /// shm: how a waiting side is woken (default futex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_wake: Option<shm_ring::Wake>,
    /// shm: a named POSIX object the peer opens by name, instead of a memfd.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shm_named: bool,
    /// shm: the ring's capacity in bytes (a power of two; default 1 MiB or 4 blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_capacity: Option<usize>,
    /// Round trips: the offered load, round trips per second, sent on a fixed
    /// schedule (open loop); None: back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_sec: Option<u64>,
    /// Round trips: the sender writes its send time into each message and the
    /// receiver measures the one-way delay (messages of 8 bytes or more).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_way: bool,
    /// Round trips: after the timed series, one traced series split into the
    /// kernel's parts (`--explain`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub explain: bool,
    /// The idle state the case's series run under (`--idle`): the latency
    /// request held while they run. Part of the case's identity.
    #[serde(default, skip_serializing_if = "crate::idle::Idle::is_as_is")]
    pub idle: crate::idle::Idle,
    /// After the timed series, one series with the CPUs held at polling idle,
    /// so the table can say what share of the figure is wake-ups from idle.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle_probe: bool,
    /// shm streams: the writer builds blocks in the ring, the reader reads them there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shm_zero_copy: bool,
    /// shm: the message layout (each write a record with its own header word, in the
    /// line its data starts) instead of the byte layout (a shared head and tail).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shm_messages: bool,
    /// shm with `adaptive` wake: how long a wait spins before it sleeps (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_spin_ns: Option<u64>,
    /// io_uring mechanisms: each side's buffer registered in its ring (fixed
    /// buffers), read and written by index.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uring_fixed: bool,
    /// iceoryx2 round trips by its request-response pattern (a client's
    /// request, a server's response) instead of publish-subscribe each way.
    pub iox2_request_response: bool,
    /// Throughput: the writer's buffer starts this many bytes past a page boundary
    /// (0: page-aligned, like dd's). The reader's buffer stays page-aligned.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub buffer_offset: usize,
    /// Round trips: the timing side (the client) never sleeps: its descriptor is
    /// non-blocking and it retries at once (as sockperf's client does), and a
    /// paced schedule spins to each send time. The answering side waits as usual.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub busy_poll: bool,
    /// `--wait`: how each side waits on its descriptor (block unless told).
    #[serde(default, skip_serializing_if = "super::wait::Waits::is_default")]
    pub wait: super::wait::Waits,
    /// The peer starts in fresh namespaces of these kinds (`--across`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub across: Vec<crate::namespace::Namespace>,
    /// The network namespace the peer joins (a `/run/netns/NAME` path), made
    /// with the link: TCP across a network namespace, over a veth pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netns: Option<String>,
    /// `list --across`: run across even where the rule refuses, to see what
    /// happens here (never for a measurement that is kept).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub across_probe: bool,
    /// The background load the case ran under (`cpu:2 on 2-3`), for the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
    /// `--peer`: the address of ours the other machine reaches (TCP listens
    /// there instead of on loopback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind_ip: Option<std::net::IpAddr>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl MechOptions {
    /// The options that apply to `kind`, as name/value pairs for the record.
    pub fn describe(&self, kind: MechanismKind) -> Vec<(String, String)> {
        let mut v = Vec::new();
        let info = kind.info();
        if let Some(b) = info.base {
            v.push(("over".into(), b.name().into()));
        }
        if let Some(l) = info.library {
            v.push(("library".into(), l.into()));
        }
        let polls = with_mechanism!(kind, M => {
            M::describe(self, &mut v);
            M::POLLS
        });
        // --dir, where the mechanism makes its objects there (file says its
        // dir always).
        if let Some(d) = &self.dir {
            if info.in_dir && !v.iter().any(|(k, _)| k == "dir") {
                v.push(("dir".into(), d.display().to_string()));
            }
        }
        if self.nonblocking && polls && !kind.info().solo {
            v.push(("nonblocking".into(), "try-poll".into()));
        }
        if self.buffer_offset != 0 {
            v.push(("buffer_offset".into(), self.buffer_offset.to_string()));
        }
        if let Some(r) = self.rate_per_sec {
            v.push(("rate_per_sec".into(), r.to_string()));
        }
        if self.one_way {
            v.push(("one_way".into(), "measured".into()));
        }
        if !self.idle.is_as_is() {
            v.push(("idle".into(), self.idle.label()));
        }
        if self.busy_poll {
            v.push(("busy_poll".into(), "client".into()));
        }
        if !self.across.is_empty() {
            v.push((
                "across".into(),
                crate::namespace::Namespace::list_name(&self.across),
            ));
        }
        if let Some(b) = &self.background {
            v.push(("background".into(), b.clone()));
        }
        v
    }

    /// How a side waits, for the record's `wait` field: the shm ring's wake-up
    /// strategy, else `poll` (non-blocking descriptors) or `block`.
    pub fn wait_label(&self, kind: MechanismKind) -> String {
        if self.busy_poll {
            return "busy-poll".into();
        }
        if !self.wait.is_default() && self.wait.client != super::wait::Wait::Uring {
            return self.wait.label();
        }
        with_mechanism!(kind, M => M::wait_label(self))
    }

    /// The socket buffer sizes, for the record.
    /// io_uring's buffers: registered or the caller's plain ones.
    pub(crate) fn describe_uring(&self, v: &mut Vec<(String, String)>) {
        if self.uring_fixed {
            v.push(("buffers".into(), "registered".into()));
        }
    }

    pub(crate) fn describe_buffers(&self, v: &mut Vec<(String, String)>) {
        if let Some(s) = self.sndbuf {
            v.push(("sndbuf".into(), s.to_string()));
        }
        if let Some(s) = self.rcvbuf {
            v.push(("rcvbuf".into(), s.to_string()));
        }
    }

    pub fn base_dir(&self) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(ipcperf_sys::names::default_base)
    }
}
