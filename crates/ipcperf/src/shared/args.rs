//! Argument groups and values that several commands share: the mode, the
//! mechanism options, block sizes, CPU pins.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use ipcperf_core::mechanism::{MechOptions, MechanismKind};

use crate::fail::Fail;
pub use crate::shared::measure::{MeasureArgs, SeriesArgs};
pub use crate::shared::values::{
    parse_across, parse_counts, parse_pairs, parse_size_list, AcrossList, PairsList, PinArg,
    SizeList,
};
use crate::units;

/// How messages lie in the shm ring (`--shm-layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ShmLayout {
    /// Bytes between a shared head and tail.
    Stream,
    /// Each write a record whose header word shares a cache line with its first bytes.
    Message,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Single,
    Threads,
    Processes,
}

/// Where the two sides of a round trip run: a round trip needs two sides, so
/// `single` is not offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TwoSides {
    Threads,
    Processes,
}

impl TwoSides {
    pub fn mode(self) -> ipcperf_core::mode::Mode {
        match self {
            TwoSides::Threads => ipcperf_core::mode::Mode::Threads,
            TwoSides::Processes => ipcperf_core::mode::Mode::Processes,
        }
    }
}

/// The io_uring mechanisms that read and write buffers (`--fixed-buffers`).
/// The mechanisms' names, for a line saying a flag applies to none of them.
fn names(mechs: &[MechanismKind]) -> String {
    mechs
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `m` is the mechanism `--request-response` applies to (by name: it
/// is built only with the iceoryx2 feature).
fn is_iox2(m: MechanismKind) -> bool {
    m.name() == "iceoryx2"
}

const URING_BUFFERED: [MechanismKind; 3] = [
    MechanismKind::UringUnix,
    MechanismKind::UringTcp,
    MechanismKind::UringPipe,
];

/// Options that shape a mechanism's kernel object, shared by `run` and `latency`.
#[derive(Args, Debug, Clone)]
pub struct MechArgs {
    /// The CPUs' idle state while the series run: as-is (the default: what an
    /// application gets), poll (no idle state deeper than polling:
    /// /dev/cpu_dma_latency held at 0; root), or a latency in µs (20us: only
    /// idle states that exit within it). Where an idle CPU may halt, each case
    /// across CPUs also takes one series at polling idle, and the table says
    /// how much of its figure is wake-ups from idle. See `ipcperf topology`.
    #[arg(long, value_parser = ipcperf_core::idle::parse_idle, default_value = "as-is", value_name = "as-is|poll|LATENCY")]
    pub idle: ipcperf_core::idle::Idle,

    /// shm: how a waiting side is woken: spin (busy-poll, burns a CPU), futex,
    /// eventfd, sem (POSIX semaphores in the shared page) or adaptive (spin for
    /// --spin-for, then sleep on the futex). A comma list measures each, side by side.
    #[arg(long, value_parser = units::parse_wakes, value_name = "WAKE[,WAKE...]")]
    pub wake: Option<units::WakeList>,

    /// shm streams (`ipcperf run`): also measure the ring zero-copy, beside the
    /// copying ring: the writer builds each block in the shared memory, the reader
    /// reads it there (touching it unless --no-touch) and releases it.
    #[arg(long)]
    pub zero_copy: bool,

    /// shm with --wake adaptive: how long a waiting side spins before it sleeps
    /// (default 5us).
    #[arg(long, value_parser = units::parse_duration, value_name = "DURATION")]
    pub spin_for: Option<std::time::Duration>,

    /// shm: a named POSIX shared-memory object the peer opens by name (default: a
    /// memfd handed over with SCM_RIGHTS).
    #[arg(long)]
    pub shm_named: bool,

    /// shm: ring capacity, a power of two >= 512 (default: 1M, or 4 blocks if larger;
    /// round trips of up to 64k: four messages' records, from 512 to 4k, and in the
    /// message layout up to 1k one slot, the least ring holding one message).
    #[arg(long, value_parser = units::parse_block)]
    pub shm_capacity: Option<usize>,

    /// shm: how messages lie in the ring: `stream` (bytes between a shared head and
    /// tail; the default for `run`) or `message` (each write a record whose header word
    /// the reader waits on shares a cache line with the record's first bytes; the
    /// default for `latency`). Both carry any size; the record names the layout.
    #[arg(long, value_enum)]
    pub shm_layout: Option<ShmLayout>,

    /// io_uring mechanisms (uring-unix, uring-tcp, uring-pipe): also measure with
    /// each side's buffer registered in its ring (fixed buffers: READ_FIXED and
    /// WRITE_FIXED), beside the plain submissions.
    #[arg(long)]
    pub fixed_buffers: bool,

    /// iceoryx2: also measure round trips with its request-response pattern
    /// (a client's request, a server's response), beside publish-subscribe each
    /// way. Streams stay publish-subscribe.
    #[arg(long)]
    pub request_response: bool,

    /// Pipe and FIFO kernel buffer size (F_SETPIPE_SZ), e.g. 1M.
    #[arg(long, value_parser = units::parse_block)]
    pub pipe_size: Option<usize>,

    /// TCP_NODELAY: turn off Nagle's algorithm.
    #[arg(long)]
    pub nodelay: bool,

    /// SO_SNDBUF for sockets.
    #[arg(long, value_parser = units::parse_block)]
    pub sndbuf: Option<usize>,

    /// SO_RCVBUF for sockets.
    #[arg(long, value_parser = units::parse_block)]
    pub rcvbuf: Option<usize>,

    /// Non-blocking descriptors, each call tried first and poll(2) when it
    /// would block: `--wait try-poll`.
    #[arg(long, conflicts_with = "wait")]
    pub nonblocking: bool,

    /// How each side waits on its descriptor: block (a blocking call; the
    /// default), poll (poll(2), then the read), epoll (epoll_wait(2) on a
    /// level-triggered instance, then the read: Redis, nginx), try-poll and
    /// try-epoll (the read first, the wait only when it would block: libpq and
    /// pgbench, a PostgreSQL backend), uring (each call an io_uring completion:
    /// runs uring-pipe, uring-unix, uring-tcp) or busy (non-blocking calls
    /// retried at once: a CPU per side). CLIENT/SERVER waits apart
    /// (try-poll/try-epoll: pgbench and its backend); for streams the writer is
    /// the client. A comma list measures each side by side. pipe, fifo, unix,
    /// tcp, unix-dgram, unix-seqpacket, udp; `ipcperf list NAME` says which.
    #[arg(long, value_parser = crate::shared::values::parse_waits, value_name = "WAIT[,WAIT...]")]
    pub wait: Option<crate::shared::values::WaitList>,

    /// Start the peer in fresh namespaces of these kinds (net, ipc, mnt, uts, pid,
    /// user; root, or user without it; --mode processes): IPC across a container
    /// boundary. A mechanism a container could not use across one is refused with
    /// the reason.
    #[arg(long, value_parser = parse_across, value_name = "KIND[,KIND...]")]
    pub across: Option<AcrossList>,

    /// TCP and UDP over ::1 instead of 127.0.0.1.
    #[arg(long)]
    pub ipv6: bool,

    /// POSIX message queues: send every message with this priority.
    #[arg(long)]
    pub priority: Option<u32>,

    /// Directory for FIFOs, socket paths and temp files (tmpfs or disk).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

impl CaseArgs {
    /// `--peer`: the server to reach, and the address of ours it reaches back.
    pub fn remote(&self) -> Result<Option<ipcperf_core::mode::remote::Remote>, Fail> {
        self.peer
            .as_deref()
            .map(|p| {
                crate::shared::peer::remote(p, self.token_file.as_deref())
                    .map(|r| r.with_wait(self.peer_wait))
            })
            .transpose()
    }

    /// What every case of a `run` or `latency` shares: the peer command, series in
    /// rounds unless `--consecutive`, and with `--peer` the other machine (each
    /// case placed for it: see [`CaseArgs::place_remote`]).
    pub fn run_env(
        &self,
        specs: &mut Vec<ipcperf_core::plan::CaseSpec>,
    ) -> Result<ipcperf_core::plan::RunEnv, Fail> {
        let mut env = ipcperf_core::plan::RunEnv::new(
            ipcperf_core::kind::PeerCommand::current_exe()
                .map_err(|e| Fail::failure(e.to_string()))?,
        );
        env.interleave = !self.consecutive;
        env.remote = self.remote()?;
        if let Some(r) = &env.remote {
            self.place_remote(r, specs)?;
        }
        Ok(env)
    }

    /// `--peer`: a placement named by relation (a class, `all`, `same`, `cross`)
    /// is a pair of this machine's CPUs, which a peer on another machine cannot
    /// be in: refused, rather than quietly using its first CPU. Checked before
    /// the cases are planned.
    pub fn check_remote_pins(&self) -> Result<(), Fail> {
        if self.peer.is_none() {
            return Ok(());
        }
        let relation = self.placements.is_some()
            || self
                .measure
                .pin
                .iter()
                .any(|p| !matches!(p, PinArg::Cpus(..) | PinArg::None));
        if relation {
            return Err(Fail::usage(
                "--peer: a placement class (or all, same, cross) names two CPUs of this machine; \
                 give this side's CPU with --pin A,B (A is used) and the other machine's with --peer-pin",
            ));
        }
        Ok(())
    }

    /// `--peer`: each case's sides on two machines: this side where `--pin` put
    /// it, the peer on `--peer-pin`; the TCP listener on the address the other
    /// machine reaches. Cases that became the same are run once.
    pub fn place_remote(
        &self,
        remote: &ipcperf_core::mode::remote::Remote,
        specs: &mut Vec<ipcperf_core::plan::CaseSpec>,
    ) -> Result<(), Fail> {
        let ip = remote
            .local_ip()
            .map_err(|e| Fail::usage(format!("--peer: {e}")))?;
        for s in specs.iter_mut() {
            s.opts.bind_ip = Some(ip);
            s.placement = ipcperf_core::mode::Placement {
                writer_cpu: s.placement.writer_cpu,
                reader_cpu: self.peer_pin,
                class: Some(ipcperf_core::topology::PlacementClass::OtherHost),
                measured_ns: None,
            };
        }
        // Cases the same but for an idle probe (planned where this machine's
        // CPUs were apart) are kept once, probed if either was.
        let key = |s: &ipcperf_core::plan::CaseSpec| {
            let mut k = s.clone();
            k.opts.idle_probe = false;
            k
        };
        let mut kept: Vec<ipcperf_core::plan::CaseSpec> = Vec::new();
        for s in specs.drain(..) {
            match kept.iter_mut().find(|k| key(k) == key(&s)) {
                Some(k) => k.opts.idle_probe |= s.opts.idle_probe,
                None => kept.push(s),
            }
        }
        *specs = kept;
        Ok(())
    }
}

impl MechArgs {
    /// The shm wake-ups asked for (futex when none).
    pub fn wakes(&self) -> Vec<ipcperf_core::mechanism::shm_ring::Wake> {
        match &self.wake {
            Some(v) if !v.0.is_empty() => v.0.clone(),
            _ => vec![ipcperf_core::mechanism::shm_ring::Wake::Futex],
        }
    }

    /// The options of each variant of mechanism `m` to measure: one per wake-up
    /// for shm, plain and registered buffers for io_uring with --fixed-buffers,
    /// else `opts` alone.
    pub(crate) fn variants(&self, m: MechanismKind, opts: &MechOptions) -> Vec<MechOptions> {
        if self.fixed_buffers && URING_BUFFERED.contains(&m) {
            return [false, true]
                .map(|fixed| MechOptions {
                    uring_fixed: fixed,
                    ..opts.clone()
                })
                .to_vec();
        }
        if self.request_response && is_iox2(m) {
            return [false, true]
                .map(|rr| MechOptions {
                    iox2_request_response: rr,
                    ..opts.clone()
                })
                .to_vec();
        }
        if m != MechanismKind::Shm {
            return vec![opts.clone()];
        }
        let copies: &[bool] = if self.zero_copy {
            &[false, true]
        } else {
            &[false]
        };
        let mut v = Vec::new();
        for w in self.wakes() {
            for &zero_copy in copies {
                v.push(MechOptions {
                    shm_wake: Some(w),
                    shm_zero_copy: zero_copy,
                    // Zero-copy lends raw bytes: the stream layout.
                    shm_messages: opts.shm_messages && !zero_copy,
                    ..opts.clone()
                });
            }
        }
        v
    }

    /// `--across`: without root, the peer's other namespaces need a user
    /// namespace of its own (unshare takes CAP_SYS_ADMIN, which one gives).
    pub fn check_across(&self) -> Result<(), Fail> {
        let Some(kinds) = &self.across else {
            return Ok(());
        };
        let user = kinds.0.contains(&ipcperf_core::crossing::Namespace::User);
        if !user && !ipcperf_sys::ns::may_unshare() {
            return Err(Fail::usage(
                "--across starts the peer in new namespaces, which takes root, or without \
                 root a user namespace of its own: add user (--across user,ipc,mnt)",
            ));
        }
        Ok(())
    }

    /// The mechanism options these flags ask for, for a run of `mechs`; a `--dir`
    /// that is not a directory, or an shm flag where no mechanism is shm, is bad input.
    pub fn options(&self, mechs: &[MechanismKind]) -> Result<MechOptions, Fail> {
        self.check_across()?;
        if !mechs.contains(&MechanismKind::Shm) {
            let given = [
                ("--wake", self.wake.is_some()),
                ("--shm-named", self.shm_named),
                ("--shm-capacity", self.shm_capacity.is_some()),
                ("--spin-for", self.spin_for.is_some()),
                ("--zero-copy", self.zero_copy),
                ("--shm-layout", self.shm_layout.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
                return Err(Fail::usage(format!(
                    "{flag} applies to the shm mechanism only, and none of {} is shm",
                    names(mechs)
                )));
            }
        }
        if self.fixed_buffers && !mechs.iter().any(|m| URING_BUFFERED.contains(m)) {
            return Err(Fail::usage(format!(
                "--fixed-buffers applies to uring-unix, uring-tcp and uring-pipe, and none of {} \
                 is one",
                names(mechs)
            )));
        }
        if self.request_response && !mechs.iter().any(|&m| is_iox2(m)) {
            return Err(Fail::usage(format!(
                "--request-response applies to iceoryx2, and none of {} is it",
                names(mechs)
            )));
        }
        if let Some(d) = &self.dir {
            crate::shared::values::usable_dir(d)?;
        }
        ipcperf_core::idle::check(self.idle, &ipcperf_core::idle::IdleInfo::current())
            .map_err(Fail::usage)?;
        let opts = MechOptions {
            idle: self.idle,
            idle_probe: false,
            pipe_size: self.pipe_size,
            nodelay: self.nodelay,
            sndbuf: self.sndbuf,
            rcvbuf: self.rcvbuf,
            nonblocking: self.nonblocking,
            wait: Default::default(),
            ipv6: self.ipv6,
            dir: self.dir.clone(),
            mq_priority: self.priority,
            shm_wake: Some(self.wakes()[0]),
            shm_zero_copy: false,
            shm_messages: self.shm_layout == Some(ShmLayout::Message),
            rate_per_sec: None,
            one_way: false,
            explain: false,
            busy_poll: false,
            across: self.across.clone().map(|a| a.0).unwrap_or_default(),
            across_probe: false,
            netns: None,
            background: None,
            bind_ip: None,
            shm_spin_ns: self
                .spin_for
                .map(|d| d.as_nanos().min(u64::MAX as u128) as u64),
            shm_named: self.shm_named,
            shm_capacity: self.shm_capacity,
            buffer_offset: 0,
            uring_fixed: false,
            iox2_request_response: false,
        };
        super::applies::check(&opts, mechs)?;
        super::applies::check_spin_for(self.spin_for.is_some(), &self.wakes())?;
        Ok(opts)
    }
}

/// The flags `run` and `latency` share: how many series, where the two sides run,
/// what happens to the payload. (Sizes, lengths and modes differ in their
/// defaults and limits, so each command keeps its own.)
#[derive(clap::Args, Debug)]
pub struct CaseArgs {
    #[command(flatten)]
    pub measure: MeasureArgs,

    /// Take each case's series one after another. By default they are taken in
    /// rounds: series 1 of every case, then series 2 of every case, each on a fresh
    /// set-up, so each case's spread holds the drift of the whole run and of its
    /// set-up (where the peer landed, how its memory was laid out), and `compare`
    /// judges changes against it.
    #[arg(long)]
    pub consecutive: bool,

    /// Run the peer on another machine, under its `ipcperf serve` (HOST or
    /// HOST:PORT, port 7787 by default): tcp and udp, the data connection made
    /// from there to this machine; without mechanism names, the default suite's
    /// that cross machines. The record names both machines.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub peer: Option<String>,

    /// With --peer: a file holding the token the server asks for.
    #[arg(long, value_name = "FILE", requires = "peer")]
    pub token_file: Option<PathBuf>,

    /// With --peer: how long to keep trying a server busy with another run
    /// (pauses from 0.1 s doubling to 2 s); 0 fails at once.
    #[arg(long, value_name = "DURATION", requires = "peer", value_parser = parse_wait, default_value = "30s")]
    pub peer_wait: std::time::Duration,

    /// With --peer: the CPU the peer is pinned to on the other machine (this
    /// side's CPU: --pin's first). The placement is named `other-host`.
    #[arg(long, value_name = "CPU", requires = "peer")]
    pub peer_pin: Option<usize>,

    /// Measure under a load on the CPUs the two sides do not use: `cpu:N` (N
    /// spinning threads) or `memory:N` (N threads copying 64 MiB buffers). Needs
    /// pinned sides; recorded in every result.
    #[arg(long, value_parser = crate::background::parse, value_name = "cpu:N|memory:N")]
    pub background: Option<crate::background::Background>,

    /// `all`: the same as `--pin all`.
    #[arg(long, value_parser = ["all"], value_name = "all")]
    pub placements: Option<String>,

    /// Many pairs at once: N independent pairs (a list 1,2,4,8 or a power-of-two
    /// range 1..8), started together; the total, each pair's own rate (the
    /// slowest and fastest: fairness) and CPU time per message. Pairs get CPUs of
    /// their own while they last; `--pin CLASS` gives every pair that relation,
    /// `--pin none` leaves them unpinned.
    #[arg(long, value_parser = parse_pairs, value_name = "N[,N...]")]
    pub pairs: Option<PairsList>,

    /// Send the buffer as it is, without writing or reading every byte.
    #[arg(long, conflicts_with = "verify")]
    pub no_touch: bool,

    /// Fill every block with a position-dependent pattern and check every byte that
    /// arrives (round trips: the sender checks every byte of each answer).
    #[arg(long)]
    pub verify: bool,
}

/// Each planned case once per count of a fan-in or fan-out flag (`set` puts the
/// count in the case), or the cases as planned without it. A mechanism named on
/// the command line that has no such form is bad input (`refuse` says why); with
/// none named, those are left out.
pub fn fan_cases(
    specs: Vec<ipcperf_core::plan::CaseSpec>,
    list: Option<&PairsList>,
    named: bool,
    (flag, refuse): (&str, fn(MechanismKind) -> Option<String>),
    set: fn(&mut ipcperf_core::plan::CaseSpec, u32),
) -> Result<Vec<ipcperf_core::plan::CaseSpec>, Fail> {
    let Some(list) = list else {
        return Ok(specs);
    };
    let mut out = Vec::new();
    for s in specs {
        if let Some(why) = refuse(s.mechanism) {
            if named {
                return Err(Fail::usage(format!("{flag}: {why}")));
            }
            continue;
        }
        for &n in &list.0 {
            let mut c = s.clone();
            set(&mut c, n as u32);
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err(Fail::usage(format!(
            "{flag}: no mechanism of this run has that form"
        )));
    }
    Ok(out)
}

impl CaseArgs {
    /// Each planned case once per `--pairs` count, its pairs placed: spread over
    /// CPUs of their own (no `--pin`), of the class each case's pin named, or
    /// unpinned. Without `--pairs`, the cases as planned.
    pub fn with_pairs(
        &self,
        specs: Vec<ipcperf_core::plan::CaseSpec>,
        topo: &ipcperf_core::topology::Topology,
    ) -> Result<Vec<ipcperf_core::plan::CaseSpec>, Fail> {
        use ipcperf_core::mode::{Mode, Placement};
        use ipcperf_core::topology::PlacementClass;
        let Some(list) = &self.pairs else {
            return Ok(specs);
        };
        let pins = self.pins();
        if pins.contains(&PinArg::All) {
            return Err(Fail::usage(
                "--placements all with --pairs: every pair takes one placement; give a class \
                 (--pin smt-sibling, other-l3, ...), CPU pairs (--pin W,R once per pair) or \
                 --pin none",
            ));
        }
        // Explicit CPUs: `--pin W,R` once per pair (pair i on the i-th), or once
        // for every pair.
        let cpus: Vec<(usize, usize)> = pins
            .iter()
            .filter_map(|p| match p {
                PinArg::Cpus(w, r) => Some((*w, *r)),
                _ => None,
            })
            .collect();
        let most = list.0.iter().copied().max().unwrap_or(1);
        if !cpus.is_empty() {
            if cpus.len() != pins.len() {
                return Err(Fail::usage(
                    "--pin with --pairs: CPU pairs (W,R) or a class, not both",
                ));
            }
            if cpus.len() != 1 && cpus.len() < most {
                return Err(Fail::usage(format!(
                    "--pairs {most} with {} CPU pairs: give --pin W,R once per pair, or once \
                     for all of them",
                    cpus.len()
                )));
            }
        }
        if self.background.is_some() {
            return Err(Fail::usage(
                "--background with --pairs: the pairs take the CPUs a load would run on",
            ));
        }
        let spread = self.measure.pin.is_empty();
        let mut out: Vec<ipcperf_core::plan::CaseSpec> = Vec::new();
        for spec in specs {
            for &n in list.0.iter() {
                let pairs = if !cpus.is_empty() {
                    (0..n)
                        .map(|i| {
                            let (w, r) = cpus[if cpus.len() == 1 { 0 } else { i }];
                            Placement::pinned(w, r).with_class(topo.classify(w, r))
                        })
                        .collect()
                } else if !spread && spec.placement.writer_cpu.is_none() {
                    vec![Placement::UNPINNED; n]
                } else {
                    // One thread a pair (single mode, solo mechanisms): a CPU each.
                    let class = if spec.mode == Mode::Single {
                        Some(PlacementClass::SameCpu)
                    } else if spread {
                        None
                    } else {
                        spec.placement.class
                    };
                    let cpus = topo.spread(n, class).ok_or_else(|| {
                        Fail::usage(match class {
                            Some(c) => topo.absent_reason(c),
                            None => "no CPU this process may use".into(),
                        })
                    })?;
                    cpus.into_iter()
                        .map(|(w, r)| Placement::pinned(w, r).with_class(topo.classify(w, r)))
                        .collect()
                };
                let s = ipcperf_core::plan::CaseSpec {
                    placement: Placement::UNPINNED,
                    pairs,
                    ..spec.clone()
                };
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        Ok(out)
    }

    /// The placements asked for, `--placements all` included.
    pub fn pins(&self) -> Vec<PinArg> {
        let mut v = self.measure.pin.clone();
        if self.placements.is_some() {
            v.push(PinArg::All);
        }
        v
    }

    /// The payload treatment asked for.
    pub fn payload(&self) -> ipcperf_core::payload::Payload {
        use ipcperf_core::payload::Payload;
        if self.verify {
            Payload::Verify
        } else if self.no_touch {
            Payload::NoTouch
        } else {
            Payload::Touch
        }
    }
}

/// `--peer-wait`: a duration, or 0 (do not wait).
fn parse_wait(s: &str) -> Result<std::time::Duration, String> {
    if s.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    units::parse_duration(s)
}
