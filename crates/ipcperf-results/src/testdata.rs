//! Hand-built records for tests: fixed figures, so exporters, the store, plots,
//! reports and comparisons can be checked exactly.

use std::collections::BTreeMap;

use ipcperf_core::machine::Machine;
use ipcperf_core::mode::Mode;
use ipcperf_core::payload::Payload;
use ipcperf_core::record::{
    CaseRecord, CaseStatus, CycleLatency, PlacementRecord, RunRecord, SeriesRecord, SyncRecord,
};
use ipcperf_core::workload::Workload;

/// A case whose series move `mb_per_s` MB/s each (one figure per series).
pub fn case(mech: &str, mode: Mode, size: u64, place: &str, mb_per_s: &[f64]) -> CaseRecord {
    let (w, r) = if place == "same-cpu" { (0, 0) } else { (0, 1) };
    let series = mb_per_s
        .iter()
        .map(|&m| {
            // 1 s per series; bytes chosen to give the rate exactly.
            let bytes = (m * 1e6) as u64;
            SeriesRecord {
                blocks: bytes / size,
                bytes,
                elapsed_ns: 1_000_000_000,
                writer_cpu_ns: 900_000_000,
                reader_cpu_ns: Some(800_000_000),
                writer_counts: None,
                reader_counts: None,
            }
        })
        .collect();
    let mut c = CaseRecord {
        workload: Workload::Stream,
        mechanism: mech.to_string(),
        mode,
        block_size: size,
        placement: PlacementRecord {
            label: place.to_string(),
            writer_cpu: Some(w),
            reader_cpu: Some(r),
            seen_writer_cpu: Some(w),
            seen_reader_cpu: Some(r),
            measured_one_way_ns: None,
        },
        payload: Payload::Touch,
        wait: "block".into(),
        include_setup: false,
        options: BTreeMap::new(),
        status: CaseStatus::Ok,
        message: None,
        series,
        median_bytes_per_sec: None,
        min_bytes_per_sec: None,
        max_bytes_per_sec: None,
        median_blocks_per_sec: None,
        median_cpu_load: None,
        sync: None,
        datagrams: None,
        pairs: None,
        peer_machine: None,
        explain: None,
        replay: None,
        idle_probe: None,
        latency: None,
    };
    c.summarize();
    c
}

/// The machine every test run claims.
pub fn machine() -> Machine {
    Machine {
        hostname: "testhost".into(),
        kernel: "6.1.0-test".into(),
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        arch: "x86_64".into(),
        cpu_model: "Test CPU @ 2.0GHz".into(),
        cpus: 2,
        memory_bytes: 4 << 30,
        virtualization: Some("KVM".into()),
        limits: [("fs.pipe-max-size".to_string(), "1048576".to_string())]
            .into_iter()
            .collect(),
        ..Machine::default()
    }
}

/// A small run: pipe, unix and tcp between processes at 64 B, 4 KiB and 64 KiB on
/// two placements, one refused case, one failed case.
pub fn run() -> RunRecord {
    let mut cases = Vec::new();
    for (mech, base) in [("pipe", 1000.0), ("unix", 800.0), ("tcp", 500.0)] {
        for (size, scale) in [(64u64, 0.05), (4096, 0.6), (65536, 1.0)] {
            for (place, p) in [("same-cpu", 1.0), ("cross-cpu", 0.5)] {
                let m = base * scale * p;
                cases.push(case(
                    mech,
                    Mode::Processes,
                    size,
                    place,
                    &[m * 0.98, m * 0.99, m, m * 1.01, m * 1.02],
                ));
            }
        }
    }
    let mut refused = case("fifo", Mode::Processes, 65536, "same-cpu", &[]);
    refused.status = CaseStatus::Refused;
    refused.message = Some("pipe size 16 MiB is above fs.pipe-max-size (1 MiB)".into());
    cases.push(refused);
    let mut failed = case("file", Mode::Processes, 65536, "same-cpu", &[]);
    failed.status = CaseStatus::Failed;
    failed.message = Some("write /tmp/x: No space left on device (ENOSPC)".into());
    cases.push(failed);
    RunRecord {
        ipcperf_version: "0.1.0".into(),
        label: None,
        command_line: vec!["ipcperf".into(), "run".into(), "pipe,unix,tcp".into()],
        kind: "run".into(),
        started_ms: 1_763_700_000_000,
        finished_ms: Some(1_763_700_060_000),
        complete: true,
        machine: machine(),
        cases,
    }
}

/// A sync case (threads, cross-cpu) with set/clear latency percentiles in ns.
pub fn sync_case(primitive: &str, p50: u64, p90: u64, p99: u64, p999: u64) -> CaseRecord {
    let mut c = case(primitive, Mode::Threads, 0, "cross-cpu", &[]);
    c.workload = Workload::Sync;
    c.sync = Some(SyncRecord {
        set_clear_latency: Some(CycleLatency {
            samples: 10_000,
            clock_cost_ns: 20,
            p50_ns: p50,
            p90_ns: p90,
            p99_ns: p99,
            p999_ns: p999,
            max_ns: p999 * 3,
            beyond: None,
        }),
        ..SyncRecord::new(primitive.into(), Mode::Threads)
    });
    c
}

/// The EPYC-like 16-CPU topology of the core's fixtures (1 socket, 2 CCDs of 2
/// CCX of 2 cores of 2 threads; siblings c and c+8; a node per CCD).
pub fn epyc_topology() -> ipcperf_core::topology::Topology {
    use ipcperf_core::topology::{CpuPlace, Topology};
    let cpus = (0..16)
        .map(|c| {
            let core = c % 8;
            let ccx = core / 2;
            CpuPlace {
                cpu: c,
                package: 0,
                die: (core / 4) as i64,
                core: core as i64,
                node: Some(core / 4),
                smt_siblings: vec![core, core + 8],
                l2: Some(vec![core, core + 8]),
                l3: Some((0..16).filter(|x| (x % 8) / 2 == ccx).collect()),
            }
        })
        .collect();
    Topology {
        cpus,
        offline: Vec::new(),
        not_allowed: Vec::new(),
        isolated: Vec::new(),
    }
}

/// A recorded sysfs tree of the core's fixtures, read as a process limited to
/// its `ipcperf-allowed` CPUs would read it.
pub fn fixture_topology(name: &str) -> ipcperf_core::topology::Topology {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ipcperf-core/tests/fixtures/topology")
        .join(format!("{name}.sysfs"));
    let root = std::env::temp_dir().join(format!(
        "ipcperf-bin-topology-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    for line in std::fs::read_to_string(src).unwrap().lines() {
        let (p, content) = line.split_once(':').unwrap();
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{}\n", content.trim())).unwrap();
    }
    let allowed = std::fs::read_to_string(root.join("ipcperf-allowed"))
        .ok()
        .and_then(|s| ipcperf_core::topology::parse_cpu_list(&s));
    let t = ipcperf_core::topology::Topology::read(&root, allowed.as_deref());
    std::fs::remove_dir_all(&root).unwrap();
    t
}

/// A many-pair stream case: `n` pairs moving `mb_per_s` in all, shared evenly.
pub fn pairs_case(mech: &str, n: u32, mb_per_s: f64) -> CaseRecord {
    use ipcperf_core::record::{PairRecord, PairsRecord};
    let mut c = case(mech, Mode::Processes, 4096, "shared-l3", &[mb_per_s]);
    c.placement.label = format!("{n} pairs shared-l3");
    c.placement.writer_cpu = None;
    c.placement.reader_cpu = None;
    let bytes = (mb_per_s * 1e6) as u64 / n as u64;
    c.pairs = Some(PairsRecord {
        count: n,
        fan_in: false,
        fan_out: false,
        per_pair: (0..n)
            .map(|_| PairRecord {
                writer_cpu: Some(0),
                reader_cpu: Some(1),
                seen_writer_cpu: Some(0),
                seen_reader_cpu: Some(1),
                blocks: bytes / 4096,
                bytes,
                elapsed_ns: 1_000_000_000,
                writer_cpu_ns: 900_000_000 / n as u64,
                reader_cpu_ns: Some(800_000_000 / n as u64),
            })
            .collect(),
    });
    c
}

/// A paced round-trip case at `rate` offered round trips/s that achieved
/// `achieved` per second, with these percentiles (ns).
pub fn paced_case(
    mech: &str,
    rate: u64,
    achieved: f64,
    p50: u64,
    p99: u64,
    p999: u64,
) -> CaseRecord {
    let mut h = ipcperf_core::latency::new_histogram();
    for v in [p50, p99, p999] {
        h.record(v).unwrap();
    }
    let mut c = case(mech, Mode::Processes, 64, "shared-l3", &[1.0]);
    c.workload = Workload::RoundTrip;
    c.options.insert("rate_per_sec".into(), rate.to_string());
    let mut l = ipcperf_core::latency::summarize(&h, 1_000_000_000, 0, 20, vec![p50], 0);
    l.p50_ns = p50;
    l.p99_ns = p99;
    l.p999_ns = p999;
    l.round_trips_per_sec = achieved;
    c.latency = Some(l);
    c
}
