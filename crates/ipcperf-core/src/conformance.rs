//! The conformance suite, generated from the registry: every registered mechanism,
//! in every mode it declares, for every workload it can run (a stream unless it
//! refuses every payload, round trips when it has a shape for them). Each case
//! runs with `--verify` and must deliver every byte, end its peer cleanly, and
//! leave nothing in the directory it was given. The core's unit tests run the
//! single and two-thread cases; the binary's tests run the two-process ones (they
//! need the `ipcperf __peer` executable).

use std::path::Path;

use crate::kind::{Mode, Placement, Workload};
use crate::mechanism::{MechOptions, MechanismKind};
use crate::observer::Quiet;
use crate::payload::Payload;
use crate::plan::{CaseSpec, Length, RunEnv};
use crate::record::CaseStatus;
use crate::runner::{run_case, run_latency_case};

/// One generated case: a mechanism, a mode, a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub kind: MechanismKind,
    pub mode: Mode,
    pub workload: Workload,
}

/// Every case the registry declares in `mode`.
pub fn cases(mode: Mode) -> Vec<Case> {
    let mut v = Vec::new();
    for &kind in MechanismKind::ALL {
        if !kind.info().modes.contains(&mode) {
            continue;
        }
        if stream_payload(kind).is_some() {
            v.push(Case {
                kind,
                mode,
                workload: Workload::Stream,
            });
        }
        if kind.round_trip().is_some() && mode != Mode::Single {
            v.push(Case {
                kind,
                mode,
                workload: Workload::RoundTrip,
            });
        }
    }
    v
}

/// The cases a test process can run in itself: all but signal's. A real-time
/// signal goes to the process, and a test harness's threads do not block it (it
/// would end the process): signal's cases run through the `ipcperf` binary, which
/// blocks its signals before any thread starts (tests/wakeups_cli.rs). Says so.
pub fn in_process(mode: Mode) -> Vec<Case> {
    let (keep, skip): (Vec<Case>, Vec<Case>) = cases(mode)
        .into_iter()
        .partition(|c| c.kind != MechanismKind::Signal);
    for c in skip {
        eprintln!(
            "skipped in-process: {} {} {:?} (a test harness cannot block real-time signals \
             in its every thread; the binary's tests run it)",
            c.kind.name(),
            c.mode.name(),
            c.workload
        );
    }
    keep
}

/// The payload a stream case checks with: verify, or the one it accepts.
fn stream_payload(kind: MechanismKind) -> Option<Payload> {
    [Payload::Verify, Payload::NoTouch]
        .into_iter()
        .find(|&p| kind.refuse_payload(p).is_none())
}

/// Run one case in `dir`; Err says what went wrong.
pub fn check(case: Case, env: &RunEnv, dir: &Path) -> Result<(), String> {
    let name = format!(
        "{} {} {:?}",
        case.kind.name(),
        case.mode.name(),
        case.workload
    );
    let sizes: Vec<usize> = match case.workload {
        Workload::RoundTrip => case
            .kind
            .default_round_trip_sizes()
            .map(<[usize]>::to_vec)
            .unwrap_or_else(|| vec![1, 4093]),
        _ => vec![1, 4093, 8192],
    };
    for size in sizes {
        let count = 37u64;
        let spec = CaseSpec {
            payload: match case.workload {
                Workload::RoundTrip => Payload::Verify,
                _ => stream_payload(case.kind).unwrap_or(Payload::NoTouch),
            },
            length: Length::Count { blocks: count },
            repeat: 2,
            opts: MechOptions {
                dir: Some(dir.to_path_buf()),
                ..MechOptions::default()
            },
            ..CaseSpec::new(case.kind, case.mode, size, Placement::UNPINNED)
        };
        let rec = match case.workload {
            Workload::RoundTrip => run_latency_case(&spec, env, &mut Quiet),
            _ => run_case(&spec, env, &mut Quiet),
        };
        if rec.status != CaseStatus::Ok {
            return Err(format!(
                "{name} {size} B: {:?} {:?}",
                rec.status, rec.message
            ));
        }
        if rec.series.len() != 2 {
            return Err(format!("{name} {size} B: {} series", rec.series.len()));
        }
        let each_way = match case.workload {
            Workload::RoundTrip => 2,
            _ => 1,
        };
        // A lossy mechanism (udp) may lose datagrams, if it counts them: every
        // block sent either arrived once or is counted lost.
        if let (Workload::Stream, Some(d)) = (case.workload, rec.datagrams.as_ref()) {
            let arrived: u64 = rec.series.iter().map(|s| s.blocks).sum();
            if d.sent != 2 * count || arrived + d.lost != d.sent {
                return Err(format!(
                    "{name} {size} B: {} sent, {arrived} arrived, {} counted lost",
                    d.sent, d.lost
                ));
            }
            for s in &rec.series {
                if s.bytes != s.blocks * size as u64 {
                    return Err(format!(
                        "{name} {size} B: {} bytes in {} blocks",
                        s.bytes, s.blocks
                    ));
                }
            }
        } else {
            for s in &rec.series {
                if s.blocks != count || s.bytes != count * size as u64 * each_way {
                    return Err(format!(
                        "{name} {size} B: {} blocks, {} bytes, not every byte accounted for",
                        s.blocks, s.bytes
                    ));
                }
            }
        }
        if case.workload == Workload::RoundTrip
            && rec.latency.as_ref().map(|l| l.round_trips_lost) != Some(0)
        {
            return Err(format!(
                "{name} {size} B: round trips lost: {:?}",
                rec.latency
            ));
        }
        let left: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| e.to_string())?
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        if !left.is_empty() {
            return Err(format!("{name} {size} B: left {left:?} behind"));
        }
    }
    Ok(())
}

/// Run `cases`, several at once; the failures, one line each.
pub fn check_all(cases: &[Case], env: &RunEnv, base: &Path) -> Vec<String> {
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&case) = cases.get(i) else { break };
                let dir = base.join(format!("case-{i}"));
                let r = std::fs::create_dir_all(&dir)
                    .map_err(|e| e.to_string())
                    .and_then(|()| check(case, env, &dir));
                let _ = std::fs::remove_dir(&dir);
                if let Err(e) = r {
                    failures.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::PeerCommand;

    fn env() -> RunEnv {
        // Single and two-thread cases start no process.
        RunEnv::new(PeerCommand {
            program: "/nonexistent/ipcperf".into(),
            args: Vec::new(),
        })
    }

    fn base(tag: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("ipcperf-conformance-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_registry_generates_every_case() {
        let threads = cases(Mode::Threads);
        // The demonstration mechanism (test-only) is in, with no list kept by hand.
        for w in [Workload::Stream, Workload::RoundTrip] {
            assert!(threads
                .iter()
                .any(|c| c.kind == MechanismKind::DemoPair && c.workload == w));
        }
        // Solo mechanisms have no two-thread case; wake-ups no stream.
        assert!(!threads.iter().any(|c| c.kind == MechanismKind::Null));
        assert!(!threads
            .iter()
            .any(|c| c.kind == MechanismKind::Eventfd && c.workload == Workload::Stream));
        let single = cases(Mode::Single);
        assert!(single.iter().any(|c| c.kind == MechanismKind::Memcpy));
        assert!(!single.iter().any(|c| c.workload == Workload::RoundTrip));
    }

    #[test]
    fn every_mechanism_conforms_in_one_thread() {
        let b = base("single");
        let f = check_all(&in_process(Mode::Single), &env(), &b);
        let _ = std::fs::remove_dir(&b);
        assert!(f.is_empty(), "{f:#?}");
    }

    #[test]
    fn every_mechanism_conforms_in_two_threads() {
        let b = base("threads");
        let f = check_all(&in_process(Mode::Threads), &env(), &b);
        let _ = std::fs::remove_dir(&b);
        assert!(f.is_empty(), "{f:#?}");
    }
}
