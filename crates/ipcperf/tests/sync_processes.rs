//! Sync primitives between two processes (`ipcperf __peer`), dead-holder recovery,
//! and nothing left behind. One test function: the leftover checks look at every
//! object this process created, so nothing else may run beside them.

use std::path::PathBuf;

use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::Mode;
use ipcperf_core::record::CaseStatus;
use ipcperf_core::sync::{
    robustness_case_count, run_case, run_robustness, Primitive, SyncSpec, PRIMITIVES,
};

fn spec(p: Primitive, mode: Mode) -> SyncSpec {
    SyncSpec {
        idle: Default::default(),
        primitive: p,
        mode,
        placement: ipcperf_core::mode::Placement::UNPINNED,
        series_ns: 5_000_000,
        repeat: 1,
        latency_samples: 200,
        base_dir: std::env::temp_dir(),
        peer: PeerCommand {
            program: PathBuf::from(env!("CARGO_BIN_EXE_ipcperf")),
            args: vec!["__peer".into()],
        },
        untimed: false,
        explain: false,
    }
}

fn sysv_sem_ids() -> Vec<String> {
    let t = std::fs::read_to_string("/proc/sysvipc/sem").unwrap_or_default();
    t.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

/// Every ipcperf object created by this process that still exists: SysV sets that
/// were not there at the start (they are IPC_PRIVATE and /proc/sysvipc/sem does not
/// name their creator), and names with our pid in /dev/shm and /tmp.
fn leftovers(sysv_before: &[String]) -> Vec<String> {
    let me = std::process::id();
    let prefix = format!("ipcperf-{me}-");
    let mut v: Vec<String> = sysv_sem_ids()
        .into_iter()
        .filter(|id| !sysv_before.contains(id))
        .map(|id| format!("SysV semaphore set {id}"))
        .collect();
    for dir in ["/dev/shm", "/tmp"] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().to_string();
                if n.starts_with(&prefix) || n.starts_with(&format!("sem.{prefix}")) {
                    v.push(format!("{dir}/{n}"));
                }
            }
        }
    }
    v
}

#[test]
fn processes_cycles_robustness_and_nothing_left() {
    let before = sysv_sem_ids();
    // The check itself can see what it looks for.
    {
        let set = ipcperf_sys::sem::SysvSemSet::create(&[0]).unwrap();
        let named = ipcperf_sys::sem::NamedSem::create("t-left", 0).unwrap();
        let l = leftovers(&before);
        assert!(
            l.iter()
                .any(|x| x == &format!("SysV semaphore set {}", set.id())),
            "{l:?}"
        );
        assert!(
            l.iter()
                .any(|x| x.contains(named.name().trim_start_matches('/'))),
            "{l:?}"
        );
    }
    assert!(leftovers(&before).is_empty(), "{:?}", leftovers(&before));

    // Every primitive, partner in another process: figures for what applies,
    // "not applicable" for the rest, the tare measured.
    for info in PRIMITIVES {
        let r = run_case(&spec(info.primitive, Mode::Processes));
        assert!(r.is_ok(), "{}: {:?}", info.name, r.message);
        let s = r.sync.expect("a sync section");
        assert_eq!(s.primitive, info.name);
        assert_eq!(s.mode, Mode::Processes);
        // Series ran exactly where the measurement applies; otherwise a note says why.
        assert_eq!(
            s.set_clear_series.is_empty(),
            info.no_set_clear.is_some(),
            "{}",
            info.name
        );
        assert_eq!(
            s.request_release_series.is_empty(),
            info.no_request_release.is_some(),
            "{}",
            info.name
        );
        if info.no_set_clear.is_some() {
            assert!(s
                .set_clear_note
                .as_deref()
                .unwrap()
                .starts_with("not applicable"));
        } else {
            // A figure, or (on a machine noisy enough to push the tare above it) the reason.
            assert!(s.set_clear_per_sec.is_some() || s.set_clear_note.is_some());
        }
        if info.no_set_clear.is_none() {
            assert!(s.set_clear_tare_ns.is_some());
            let lat = s.set_clear_latency.expect("percentiles");
            assert_eq!(lat.samples, s.set_clear_series[0].cycles.min(200));
        }
        assert!(
            leftovers(&before).is_empty(),
            "{}: {:?}",
            info.name,
            leftovers(&before)
        );
    }

    // Dead holders: the robust mutex gives EOWNERDEAD and is recovered; SysV with
    // SEM_UNDO is given back, without it is not; a futex lock never is.
    let m = run_robustness(&spec(Primitive::Mutex, Mode::Processes));
    let r = m[0]
        .sync
        .as_ref()
        .unwrap()
        .robustness
        .as_ref()
        .expect("ran");
    assert!(r.freed, "{r:?}");
    assert!(r.note.contains("EOWNERDEAD"), "{r:?}");
    // The progress bar's count is the cases given (SysV: one per holder variant).
    assert_eq!(m.len(), robustness_case_count(Primitive::Mutex));

    let s = run_robustness(&spec(Primitive::SysvSem, Mode::Processes));
    assert_eq!(s.len(), robustness_case_count(Primitive::SysvSem));
    let undo = s[0]
        .sync
        .as_ref()
        .unwrap()
        .robustness
        .as_ref()
        .expect("ran");
    let no_undo = s[1]
        .sync
        .as_ref()
        .unwrap()
        .robustness
        .as_ref()
        .expect("ran");
    assert_eq!(undo.variant, "SEM_UNDO");
    assert!(undo.freed && undo.freed_after_ns.is_some(), "{undo:?}");
    assert!(
        !no_undo.freed && no_undo.freed_after_ns.is_none(),
        "{no_undo:?}"
    );

    let f = run_robustness(&spec(Primitive::Futex, Mode::Processes));
    let fr = f[0]
        .sync
        .as_ref()
        .unwrap()
        .robustness
        .as_ref()
        .expect("ran");
    assert!(!fr.freed);

    for p in [Primitive::Flock, Primitive::Fcntl, Primitive::Pipe] {
        let v = run_robustness(&spec(p, Mode::Processes));
        assert_eq!(v.len(), robustness_case_count(p), "{}", p.name());
        if p == Primitive::Pipe {
            // Not a lock: one refusal, nothing held.
            assert_eq!(v[0].status, CaseStatus::Refused);
            continue;
        }
        let r = v[0]
            .sync
            .as_ref()
            .unwrap()
            .robustness
            .as_ref()
            .expect("ran");
        assert!(r.freed, "{}: {r:?}", p.name());
    }

    assert!(leftovers(&before).is_empty(), "{:?}", leftovers(&before));
}
