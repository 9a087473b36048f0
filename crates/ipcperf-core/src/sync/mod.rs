//! Synchronization primitives, timed as Duncan timed OS/2's semaphores (1989,
//! Table 2): request/release cycles (one thread, uncontended) and set/clear cycles
//! (a token handed to another thread or process and back), each with the tare — the
//! same loop around dummy calls that return success — measured and subtracted.
//!
//! `--robustness` kills a holder (SIGKILL) and times whether, and when, a waiter
//! gets the primitive, with a bounded wait.

pub mod ends;
mod explain;
pub mod loops;
pub mod peer;
mod setclear;

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::kind::Workload;
use crate::kind::{Mode, Placement};
use crate::mechanism::{MechOptions, MechanismKind, PeerAddr, PeerHandoff};
use crate::mode::process::PeerCommand;
use crate::mode::protocol::{PeerHandle, PeerRole, PeerSetup};
use crate::mode::start::start;
use crate::payload::Payload;
use crate::record::{
    CaseRecord, CaseStatus, PlacementRecord, RobustnessRecord, SyncRecord, SyncSeries,
};
use crate::stats::median;
use ends::{AnyLock, Lock, NopLock, Objects};
use ipcperf_sys::clock::now_ns;

pub use crate::kind::Primitive;
use setclear::exchange;
pub use setclear::{latency_summary, measure_set_clear};

/// What a user can know about a primitive before running it.
#[derive(Debug, Clone, Copy)]
pub struct PrimitiveInfo {
    pub primitive: Primitive,
    pub name: &'static str,
    pub summary: &'static str,
    /// Why set/clear does not apply (None: it does).
    pub no_set_clear: Option<&'static str>,
    /// Why request/release does not apply.
    pub no_request_release: Option<&'static str>,
}

const OWNER_ONLY: &str = "only the owner may release it, so it cannot hand a token to another side (Duncan: \"not applicable\" for the fast-safe semaphore)";

pub const PRIMITIVES: &[PrimitiveInfo] = &[
    PrimitiveInfo {
        primitive: Primitive::SysvSem,
        name: "sysv-sem",
        summary: "SysV semaphore set (semop; the lock with SEM_UNDO): Duncan's system semaphore",
        no_set_clear: None,
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::SysvSemOneCall,
        name: "sysv-sem-onecall",
        summary: "SysV set/clear in lmbench's lat_sem form: one semop a side that takes its \
                  own semaphore and gives the other's together",
        no_set_clear: None,
        no_request_release: Some("the lock is sysv-sem's: measured there"),
    },
    PrimitiveInfo {
        primitive: Primitive::PosixSemNamed,
        name: "posix-sem-named",
        summary: "POSIX named semaphore (sem_open)",
        no_set_clear: None,
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::PosixSem,
        name: "posix-sem",
        summary: "POSIX unnamed semaphore in shared memory (sem_init pshared): the RAM semaphore",
        no_set_clear: None,
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::Mutex,
        name: "mutex",
        summary: "pthread mutex, process-shared and robust, in shared memory: the fast-safe one",
        no_set_clear: Some(OWNER_ONLY),
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::Futex,
        name: "futex",
        summary:
            "raw FUTEX_WAIT/FUTEX_WAKE on a shared word (a 3-state lock; a flag word per direction)",
        no_set_clear: None,
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::Eventfd,
        name: "eventfd",
        summary: "eventfd in EFD_SEMAPHORE mode (set/clear waits with poll, then reads)",
        no_set_clear: None,
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::Flock,
        name: "flock",
        summary: "flock(2) on a lock file",
        no_set_clear: Some(OWNER_ONLY),
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::Fcntl,
        name: "fcntl",
        summary: "fcntl(2) record lock (F_SETLKW) on a lock file",
        no_set_clear: Some(OWNER_ONLY),
        no_request_release: None,
    },
    PrimitiveInfo {
        primitive: Primitive::Pipe,
        name: "pipe",
        summary: "reference: a one-byte token over two pipes (a wake-up each way)",
        no_set_clear: None,
        no_request_release: Some("a pipe is not a lock"),
    },
];

impl Primitive {
    pub fn info(self) -> &'static PrimitiveInfo {
        PRIMITIVES
            .iter()
            .find(|p| p.primitive == self)
            .expect("every primitive is listed")
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn from_name(s: &str) -> Option<Primitive> {
        PRIMITIVES.iter().find(|p| p.name == s).map(|p| p.primitive)
    }
}

/// One sync case as asked.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncSpec {
    pub primitive: Primitive,
    /// Where the other side of set/clear runs: `Threads` or `Processes`.
    pub mode: Mode,
    /// CPUs: `writer_cpu` for this side (request/release and side A of set/clear),
    /// `reader_cpu` for the set/clear partner.
    pub placement: Placement,
    /// Length of each timed series.
    pub series_ns: u64,
    /// Series kept per measurement.
    pub repeat: u32,
    /// Cycles timed one by one for the set/clear percentiles (at most).
    pub latency_samples: usize,
    /// Where lock files go.
    pub base_dir: PathBuf,
    /// Set/clear waits untimed, as a program's (`--untimed`): no timeout is armed,
    /// and a watcher wakes a waiter whose other side died.
    pub untimed: bool,
    /// How to start a peer process.
    pub peer: PeerCommand,
    /// `--explain`: one traced set/clear series after the timed ones.
    pub explain: bool,
    /// `--idle`: the latency request held while the case runs.
    pub idle: crate::idle::Idle,
}

/// The record a case starts from (its spec, no figures yet).
pub fn empty_record(spec: &SyncSpec) -> CaseRecord {
    CaseRecord {
        workload: Workload::Sync,
        mechanism: spec.primitive.name().to_string(),
        mode: spec.mode,
        block_size: 0,
        placement: PlacementRecord {
            label: spec.placement.label().to_string(),
            writer_cpu: spec.placement.writer_cpu,
            reader_cpu: spec.placement.reader_cpu,
            seen_writer_cpu: None,
            seen_reader_cpu: None,
            measured_one_way_ns: None,
        },
        payload: Payload::NoTouch,
        wait: "block".into(),
        include_setup: false,
        options: crate::idle::options(spec.idle),
        status: CaseStatus::Ok,
        message: None,
        latency: None,
        datagrams: None,
        pairs: None,
        peer_machine: None,
        explain: None,
        replay: None,
        idle_probe: None,
        series: Vec::new(),
        median_bytes_per_sec: None,
        min_bytes_per_sec: None,
        max_bytes_per_sec: None,
        median_blocks_per_sec: None,
        median_cpu_load: None,
        sync: Some(SyncRecord::new(
            spec.primitive.name().to_string(),
            spec.mode,
        )),
    }
}

/// The tare is subtracted only where it is at most this share of the gross time.
/// An empty loop around dummy calls is the right tare for microsecond cycles
/// (Duncan's method), but around a nanosecond fast path the CPU overlaps the
/// loop with the atomics it wraps, and a tare near the cycle's own time would
/// manufacture a figure below the hardware: there the gross time stands, with
/// the empty loop shown beside it.
pub const TARE_SHARE: f64 = 0.10;

/// A sync loop's figures: gross and net ns per cycle, the tare, cycles/s (of the
/// net figure), and whether the tare was subtracted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub gross_ns: f64,
    pub tare_ns: f64,
    pub net_ns: f64,
    pub per_sec: f64,
    pub subtracted: bool,
}

/// Medians over the series (so one series disturbed by another process does not
/// decide the figure): the gross time per cycle, the tare per cycle, and the net
/// figure, the tare taken off only where it is at most [`TARE_SHARE`] of the gross.
fn summarize(series: &[SyncSeries]) -> Option<Summary> {
    let per = |f: fn(&SyncSeries) -> u64| -> Vec<f64> {
        series
            .iter()
            .map(|s| f(s) as f64 / s.cycles.max(1) as f64)
            .collect()
    };
    let gross = median(&per(|s| s.elapsed_ns))?;
    let tare = median(&per(|s| s.tare_ns)).unwrap_or(0.0);
    if gross <= 0.0 {
        return None;
    }
    let subtracted = tare <= TARE_SHARE * gross;
    let net = if subtracted { gross - tare } else { gross };
    Some(Summary {
        gross_ns: gross,
        tare_ns: tare,
        net_ns: net,
        per_sec: 1e9 / net,
        subtracted,
    })
}

/// One atomic read-modify-write's cost from the reference loop (two a cycle).
fn atomic_rmw(series: &[SyncSeries]) -> Option<f64> {
    let v: Vec<f64> = series
        .iter()
        .filter_map(|s| s.atomic_ns.map(|a| a as f64 / s.cycles.max(1) as f64 / 2.0))
        .collect();
    median(&v)
}

/// A side's figures (net, gross, tare, cycles/s) and its note, from its series.
fn figures(series: &[SyncSeries]) -> ([Option<f64>; 4], Option<String>) {
    let sum = summarize(series);
    let note = match sum {
        None => Some("no time measured (a clock that did not move?)".into()),
        Some(s) => tare_note(&s),
    };
    let f = |g: fn(&Summary) -> f64| sum.as_ref().map(g);
    (
        [
            f(|s| s.net_ns),
            f(|s| s.gross_ns),
            f(|s| s.tare_ns),
            f(|s| s.per_sec),
        ],
        note,
    )
}

/// Request/release's figures, the atomic floor and the note, from its series.
fn figure_request_release(sync: &mut SyncRecord) {
    let ([net, gross, tare, per_sec], note) = figures(&sync.request_release_series);
    (sync.request_release_ns, sync.request_release_gross_ns) = (net, gross);
    (sync.request_release_tare_ns, sync.request_release_per_sec) = (tare, per_sec);
    sync.atomic_rmw_ns = atomic_rmw(&sync.request_release_series);
    sync.request_release_note = note;
}

/// Set/clear's figures and note, from its series.
fn figure_set_clear(sync: &mut SyncRecord) {
    let ([net, gross, tare, per_sec], note) = figures(&sync.set_clear_series);
    (sync.set_clear_ns, sync.set_clear_gross_ns) = (net, gross);
    (sync.set_clear_tare_ns, sync.set_clear_per_sec) = (tare, per_sec);
    sync.set_clear_note = note;
}

/// A kept record's figures taken again from its series (an imported run), as
/// the run took them: a figure edited alone shows what its series give. A
/// side with no series is left as it is (its note says why it has none).
pub fn refigure(sync: &mut SyncRecord) {
    if !sync.request_release_series.is_empty() {
        figure_request_release(sync);
    }
    if !sync.set_clear_series.is_empty() {
        figure_set_clear(sync);
    }
}

/// The note for a figure whose tare was left standing.
fn tare_note(s: &Summary) -> Option<String> {
    (!s.subtracted).then(|| {
        format!(
            "gross: the empty loop ({:.1} ns) is over {:.0}% of the cycle ({:.1} ns) and would \
             overlap away the work it wraps, so it is shown beside, not subtracted",
            s.tare_ns,
            TARE_SHARE * 100.0,
            s.gross_ns
        )
    })
}

/// Calibrate a sync loop: grow `n` until one run of `f(n)` lasts a quarter of the
/// series (the warm-up), then return the count that fills a series.
fn calibrate(series_ns: u64, f: impl FnMut(u64) -> Result<u64>) -> Result<u64> {
    let t = crate::calibrate::Target {
        warmup_ns: (series_ns / 4).clamp(5_000_000, 250_000_000),
        first: 64,
        cap: 1 << 36,
        count: None,
        series_ns,
    };
    Ok(crate::calibrate::calibrate(t, f)?.units)
}

/// Request/release on one lock: calibrated series, each followed by its tare.
pub fn measure_request_release<L: Lock>(l: &mut L, spec: &SyncSpec) -> Result<Vec<SyncSeries>> {
    let n = calibrate(spec.series_ns, |n| loops::request_release(l, n))?;
    let mut nop = NopLock;
    let mut atomic = ends::AtomicPair::default();
    let meter = crate::counts::Meter::open();
    let mut v = Vec::new();
    for _ in 0..spec.repeat {
        let mark = meter.mark();
        let elapsed_ns = loops::request_release(l, n)?;
        let cost = Some(meter.since(&mark).into());
        let tare_ns = loops::request_release(&mut nop, n)?;
        let atomic_ns = loops::request_release(&mut atomic, n)?;
        v.push(SyncSeries {
            cycles: n,
            elapsed_ns,
            tare_ns,
            atomic_ns: Some(atomic_ns),
            cost,
            partner_cost: None,
        });
    }
    if !l.is_free()? {
        return Err(Error::Invalid(format!(
            "{} is not free after {} request/release cycles",
            spec.primitive.name(),
            n
        )));
    }
    Ok(v)
}

fn partner_setup(objs: &mut Objects, role: PeerRole, cpu: Option<usize>) -> Result<PeerSetup> {
    let fds = objs.peer_fds()?;
    Ok(PeerSetup {
        script: None,
        more: Vec::new(),
        one_way: false,
        role,
        handoff: PeerHandoff {
            // The sync setup below says what the descriptors are; these fields are unused.
            kind: MechanismKind::Pipe,
            addr: PeerAddr::Fd,
            opts: MechOptions::default(),
            fds,
        },
        block_size: 0,
        payload: Payload::NoTouch,
        cpu,
        sync: Some(Box::new(objs.setup.clone())),
        back: None,
        handoff_fds: None,
    })
}

/// Start the other side of set/clear (a thread or a process) and wait until it is
/// ready; returns it and, for a process, its pid.
pub fn start_partner(
    spec: &SyncSpec,
    objs: &mut Objects,
    role: PeerRole,
) -> Result<(Box<dyn PeerHandle>, Option<i32>)> {
    let setup = partner_setup(objs, role, spec.placement.reader_cpu)?;
    let mut started = start(spec.mode, &spec.peer, setup, peer::serve, Vec::new())?;
    started.ready(Ok(()))?;
    Ok((started.handle, started.pid.map(|p| p as i32)))
}

fn run_inner(spec: &SyncSpec, rec: &mut CaseRecord) -> Result<()> {
    let sync = rec.sync.as_mut().expect("sync record");
    let info = spec.primitive.info();
    let _pin = ipcperf_sys::cpu::PinGuard::pin(spec.placement.writer_cpu)?;
    let mut objs = Objects::create(spec.primitive, &spec.base_dir)?;
    objs.setup.untimed = spec.untimed;
    if spec.primitive == Primitive::SysvSem {
        rec.options.insert("lock_sem_undo".into(), "true".into());
    }
    if spec.primitive == Primitive::SysvSemOneCall {
        rec.options.insert(
            "set_clear_form".into(),
            "one semop a side: take mine and give theirs (lmbench lat_sem)".into(),
        );
    }
    if info.no_set_clear.is_none() {
        rec.options.insert(
            "waits".into(),
            if spec.untimed { "untimed" } else { "timed" }.into(),
        );
    }
    if spec.primitive == Primitive::Eventfd {
        rec.options
            .insert("set_clear_wait".into(), "poll+read".into());
    }
    // Request/release.
    if let Some(why) = info.no_request_release {
        sync.request_release_note = Some(format!("not applicable: {why}"));
    } else {
        let mut lock = objs.lock()?;
        // A stop (Ctrl-Z) in any series: the whole measurement again.
        let series = crate::stop::unstopped(&mut rec.options, || {
            crate::with_lock!(&mut lock, |l| measure_request_release(l, spec))
                .ok_or_else(|| Error::Invalid(format!("{} is not a lock", spec.primitive.name())))?
        })?;
        sync.request_release_series = series;
        figure_request_release(sync);
    }
    // Set/clear.
    if let Some(why) = info.no_set_clear {
        sync.set_clear_note = Some(format!("not applicable: {why}"));
    } else {
        let mut chan = objs.channel()?;
        let (mut peer, pid) = start_partner(spec, &mut objs, PeerRole::SyncPartner)?;
        // Timed waits look at the other process every tick; untimed ones sleep
        // until a watcher, woken by the other process's end, wakes them.
        let _watch = match pid {
            Some(pid) if spec.untimed => Some(ipcperf_sys::signal::ProcessWatch::start(
                pid,
                &chan.poison_fds(),
                chan.poisoner(),
            )?),
            Some(pid) => {
                chan.set_other_process(pid);
                None
            }
            None => None,
        };
        let (series, lat, x) = crate::with_channel!(&mut chan, |c| {
            let (series, lat) = crate::stop::unstopped(&mut rec.options, || {
                measure_set_clear(c, peer.as_mut(), spec)
            })?;
            let x = match spec.explain {
                true => Some(explain::set_clear(c, peer.as_mut(), spec, pid)?),
                false => None,
            };
            Ok::<_, Error>((series, lat, x))
        })
        .expect("a channel")?;
        let p50 = lat.as_ref().map(|l| (l.p50_ns, l.p90_ns));
        peer.finish()?;
        sync.set_clear_series = series;
        figure_set_clear(sync);
        sync.set_clear_latency = lat;
        explain::record(rec, x, p50);
    }
    Ok(())
}

/// Run one sync case. Never fails: a failure is recorded with its reason.
pub fn run_case(spec: &SyncSpec) -> CaseRecord {
    let mut rec = empty_record(spec);
    if let Err(e) = spec.idle.hold().and_then(|_held| run_inner(spec, &mut rec)) {
        rec.fail(e);
    }
    rec
}

/// How long a waiter waits for a dead holder's primitive before calling it lost.
pub const ROBUST_BOUND: Duration = Duration::from_secs(1);

/// The holder variants `--robustness` tries for a primitive.
pub fn robustness_variants(p: Primitive) -> Vec<(PeerRole, &'static str)> {
    match p {
        Primitive::SysvSem | Primitive::SysvSemOneCall => vec![
            (PeerRole::SyncHolder, "SEM_UNDO"),
            (PeerRole::SyncHolderNoUndo, "no SEM_UNDO"),
        ],
        Primitive::Mutex => vec![(PeerRole::SyncHolder, "robust")],
        Primitive::Pipe => vec![],
        _ => vec![(PeerRole::SyncHolder, "plain")],
    }
}

fn robust_inner(spec: &SyncSpec, role: PeerRole, variant: &str) -> Result<RobustnessRecord> {
    let mut objs = Objects::create(spec.primitive, &spec.base_dir)?;
    let setup = partner_setup(&mut objs, role, None)?;
    let mut started = start(Mode::Processes, &spec.peer, setup, peer::serve, Vec::new())?;
    started.ready(Ok(()))?;
    let pid = started
        .pid
        .ok_or_else(|| Error::Peer("the holder is not a process".into()))?;
    let peer = started.handle;
    let mut lock: AnyLock = objs.lock()?;
    if role == PeerRole::SyncHolderNoUndo {
        lock = lock.without_undo();
    }
    // The holder has it now: a waiter must not get it while the holder lives.
    let early = crate::with_lock!(&mut lock, |l| l.acquire_within(Duration::from_millis(20)))
        .ok_or_else(|| Error::Invalid("not a lock".into()))??;
    if early.is_some() {
        return Err(Error::Invalid(format!(
            "{} was taken while its holder was alive",
            spec.primitive.name()
        )));
    }
    let t0 = now_ns();
    ipcperf_sys::signal::kill(pid as i32);
    let got = crate::with_lock!(&mut lock, |l| l.acquire_within(ROBUST_BOUND))
        .ok_or_else(|| Error::Invalid("not a lock".into()))??;
    let t1 = now_ns();
    drop(peer);
    let bound_ns = ROBUST_BOUND.as_nanos() as u64;
    Ok(match got {
        Some(note) => {
            crate::with_lock!(&mut lock, |l| l.release())
                .ok_or_else(|| Error::Invalid("not a lock".into()))??;
            RobustnessRecord {
                variant: variant.into(),
                freed: true,
                freed_after_ns: Some(t1 - t0),
                bound_ns,
                note: note.unwrap_or_else(|| match spec.primitive {
                    Primitive::SysvSem | Primitive::SysvSemOneCall => {
                        "the kernel undid the holder's semop (SEM_UNDO)".into()
                    }
                    Primitive::Flock => "the holder's descriptors closed at exit".into(),
                    Primitive::Fcntl => "the holder's record locks went with its process".into(),
                    _ => "freed".into(),
                }),
            }
        }
        None => RobustnessRecord {
            variant: variant.into(),
            freed: false,
            freed_after_ns: None,
            bound_ns,
            note: "not given back: nothing undoes a dead holder's take, so a waiter would wait forever"
                .into(),
        },
    })
}

/// How many cases [`run_robustness`] gives for `p`: one per holder variant, or
/// the one refusal of a primitive that is not a lock (a progress bar's count).
pub fn robustness_case_count(p: Primitive) -> usize {
    robustness_variants(p).len().max(1)
}

/// Robustness of one primitive: one case per holder variant.
pub fn run_robustness(spec: &SyncSpec) -> Vec<CaseRecord> {
    let mut out = Vec::new();
    let variants = robustness_variants(spec.primitive);
    if variants.is_empty() {
        let mut rec = empty_record(spec);
        rec.options.insert("holder".into(), "-".into());
        rec.status = CaseStatus::Refused;
        rec.message = Some(format!(
            "{}: not a lock, nothing to hold",
            spec.primitive.name()
        ));
        out.push(rec);
        return out;
    }
    for (role, variant) in variants {
        let mut rec = empty_record(spec);
        rec.mode = Mode::Processes;
        rec.options.insert("holder".into(), variant.into());
        match robust_inner(spec, role, variant) {
            Ok(r) => {
                let s = rec.sync.as_mut().expect("sync");
                s.mode = Mode::Processes;
                s.robustness = Some(r);
            }
            Err(e) => {
                rec.status = CaseStatus::Failed;
                rec.message = Some(e.to_string());
            }
        }
        out.push(rec);
    }
    out
}

#[cfg(test)]
mod tests;
