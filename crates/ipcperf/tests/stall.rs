//! A peer process that stops (SIGSTOP) instead of dying must not hang the run:
//! the watchdog kills it when the series overruns its allowance, and the case
//! fails saying so. In its own test binary, so the only child is that peer.

use std::time::{Duration, Instant};

use ipcperf_core::mechanism::{MechOptions, MechanismKind};
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::observer::Quiet;
use ipcperf_core::payload::Payload;
use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
use ipcperf_core::record::CaseStatus;
use ipcperf_core::runner::run_case;

/// Children of this process, whichever of its threads started them.
fn children() -> Vec<u32> {
    let mut v = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap() {
        let p = t.unwrap().path().join("children");
        v.extend(
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|s| s.parse::<u32>().ok()),
        );
    }
    v
}

#[test]
fn stopped_peer_is_killed_and_reported() {
    let mut env = RunEnv::new(PeerCommand {
        program: env!("CARGO_BIN_EXE_ipcperf").into(),
        args: vec!["__peer".into()],
    });
    env.stall_ns = 1_000_000_000;
    let spec = CaseSpec {
        mechanism: MechanismKind::Pipe,
        mode: Mode::Processes,
        block_size: 65536,
        placement: Placement::UNPINNED,
        payload: Payload::NoTouch,
        // 3 s: even if a busy machine makes the warm-up overestimate the time per block
        // twofold, the kept series is still running when the peer is stopped.
        length: Length::Duration { ns: 3_000_000_000 },
        repeat: 1,
        include_setup: false,
        pairs: Vec::new(),
        clients: 0,
        subscribers: 0,
        opts: MechOptions::default(),
    };
    let stopper = std::thread::spawn(|| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(pid) = children().first() {
                // Past the warm-up (at most 250 ms) and into the long series.
                std::thread::sleep(Duration::from_millis(1000));
                let _ = std::process::Command::new("kill")
                    .args(["-STOP", &pid.to_string()])
                    .status();
                return Instant::now();
            }
            assert!(Instant::now() < deadline, "no peer appeared");
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let rec = run_case(&spec, &env, &mut Quiet);
    let stopped_at = stopper.join().unwrap();
    assert_eq!(rec.status, CaseStatus::Failed, "{:?}", rec.message);
    let msg = rec.message.unwrap();
    assert!(msg.contains("did not finish the series"), "{msg}");
    // 1 s allowance + 3 x the 3 s expected series bound it; it must not hang past that.
    assert!(stopped_at.elapsed() < Duration::from_secs(15));
    assert!(children().is_empty(), "the stuck peer was reaped");
}
