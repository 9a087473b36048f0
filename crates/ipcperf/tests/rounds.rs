//! Series taken in rounds (the default): every case gets all its series, each on
//! a set-up of its own, reported done in the plan's order; a case that is refused
//! in the first round does not hold up the others; progress reaches its total.

use ipcperf_core::mechanism::{MechOptions, MechanismKind};
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::observer::Observer;
use ipcperf_core::payload::Payload;
use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
use ipcperf_core::record::{CaseRecord, CaseStatus, SeriesRecord};
use ipcperf_core::runner;

#[derive(Default)]
struct Events {
    /// (mechanism, block) of each series as it ends, in time order.
    series: Vec<(MechanismKind, usize)>,
    done: Vec<(String, u64)>,
    progress: Vec<(usize, usize)>,
}

impl Observer for Events {
    fn series_done(&mut self, spec: &CaseSpec, _: &SeriesRecord) {
        self.series.push((spec.mechanism, spec.block_size));
    }
    fn case_done(&mut self, r: &CaseRecord) {
        self.done.push((r.mechanism.clone(), r.block_size));
    }
    fn progress(&mut self, done: usize, total: usize) {
        self.progress.push((done, total));
    }
}

fn spec(m: MechanismKind, block: usize, dir: &std::path::Path) -> CaseSpec {
    CaseSpec {
        payload: Payload::Verify,
        length: Length::Duration { ns: 20_000_000 },
        repeat: 4,
        opts: MechOptions {
            dir: Some(dir.to_path_buf()),
            ..MechOptions::default()
        },
        ..CaseSpec::new(m, Mode::Processes, block, Placement::UNPINNED)
    }
}

#[test]
fn series_in_rounds_reach_every_case_in_plan_order() {
    let dir = tempfile::tempdir().unwrap();
    let env = RunEnv::new(PeerCommand {
        program: env!("CARGO_BIN_EXE_ipcperf").into(),
        args: vec!["__peer".into()],
    });
    let specs = vec![
        spec(MechanismKind::Pipe, 4096, dir.path()),
        // Refused in the first round: a block of 0 bytes.
        spec(MechanismKind::Unix, 0, dir.path()),
        spec(MechanismKind::Fifo, 4096, dir.path()),
    ];
    let mut ev = Events::default();
    let recs = runner::run_all(&specs, &env, &mut ev);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0].status, CaseStatus::Ok, "{:?}", recs[0].message);
    assert_eq!(recs[1].status, CaseStatus::Refused, "{:?}", recs[1]);
    assert_eq!(recs[2].status, CaseStatus::Ok, "{:?}", recs[2].message);
    for r in [&recs[0], &recs[2]] {
        assert_eq!(r.series.len(), 4);
        // The later rounds ran the first round's calibrated count.
        assert!(r.series.iter().all(|s| s.blocks == r.series[0].blocks));
        assert!(r.series.iter().all(|s| s.bytes == s.blocks * 4096));
    }
    // Interleaved: pipe, fifo, pipe, fifo, ... never four of one in a row.
    let order: Vec<MechanismKind> = ev.series.iter().map(|s| s.0).collect();
    assert_eq!(
        order,
        [MechanismKind::Pipe, MechanismKind::Fifo].repeat(4),
        "{order:?}"
    );
    // Reported in the plan's order, each once.
    let done: Vec<&str> = ev.done.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(done, ["pipe", "unix", "fifo"]);
    // 4 + 4 series, and 4 steps for the refused case: 12 in all, reached.
    assert_eq!(runner::steps(&specs, &env), 12);
    assert_eq!(ev.progress.last(), Some(&(12, 12)));
    // Said from the start, before the first series (the bar counts steps).
    assert_eq!(ev.progress.first(), Some(&(0, 12)));
    assert!(ev.progress.windows(2).all(|w| w[0].0 < w[1].0));
    // Asked for one after another, the same plan runs case by case.
    let mut env = env;
    env.interleave = false;
    let mut ev = Events::default();
    runner::run_all(&specs, &env, &mut ev);
    let order: Vec<MechanismKind> = ev.series.iter().map(|s| s.0).collect();
    assert_eq!(order[..4], [MechanismKind::Pipe; 4]);
    assert!(ev.progress.is_empty());
}
