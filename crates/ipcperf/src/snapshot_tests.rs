//! Snapshot tests: every exporter on one hand-built run, compared byte for byte
//! with the files in tests/snapshots/. After an intended change, regenerate them
//! with `UPDATE_SNAPSHOTS=1 cargo test -p ipcperf snapshot` and review the diff.

use std::path::PathBuf;

use crate::export::render;
use crate::export::Format;
use crate::testdata;

fn check(name: &str, got: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SNAPSHOTS=1 writes it)", path.display()));
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "{name} differs from its snapshot at line {}:\n  got:  {:?}\n  want: {:?}",
            line + 1,
            got.lines().nth(line),
            want.lines().nth(line)
        );
    }
}

#[test]
fn snapshot_csv() {
    check("run.csv", &render(&testdata::run(), Format::Csv, None));
}

#[test]
fn snapshot_markdown() {
    check("run.md", &render(&testdata::run(), Format::Markdown, None));
}

#[test]
fn snapshot_table() {
    check("run.txt", &render(&testdata::run(), Format::Table, None));
}

#[test]
fn snapshot_json_and_it_reads_back() {
    let run = testdata::run();
    let json = render(&run, Format::Json, None);
    check("run.json", &json);
    let back: ipcperf_core::record::RunRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, run);
}

#[test]
fn snapshot_compare() {
    let a = testdata::run();
    let mut b = testdata::run();
    for c in b.cases.iter_mut().filter(|c| c.mechanism == "unix") {
        for s in &mut c.series {
            s.bytes *= 2;
        }
        c.summarize();
    }
    let v = crate::compare::view("1", &a, "2", &b, crate::compare::DEFAULT_MIN_CHANGE);
    check(
        "compare.md",
        &crate::export::render_view(&v, Format::Markdown),
    );
}

/// A latency run: two round-trip cases with known samples.
fn latency_run() -> ipcperf_core::record::RunRecord {
    let mut run = testdata::run();
    run.kind = "latency".into();
    let template = run.cases[0].clone();
    run.cases.clear();
    for (mech, w, r, base) in [("pipe", 0, 0, 12_000u64), ("shm", 0, 1, 300)] {
        let mut c = template.clone();
        c.workload = ipcperf_core::kind::Workload::RoundTrip;
        c.mechanism = mech.into();
        c.block_size = 512;
        c.placement.label = if w == r { "same-cpu" } else { "shared-l3" }.into();
        c.placement.writer_cpu = Some(w);
        c.placement.reader_cpu = Some(r);
        let samples: Vec<u64> = (0..1000).map(|i| base + i * base / 1000).collect();
        let mut h = ipcperf_core::latency::new_histogram();
        ipcperf_core::latency::record_samples(&mut h, &samples, 20);
        c.latency = Some(ipcperf_core::latency::summarize(
            &h,
            1_000_000_000,
            0,
            20,
            vec![base + base / 2],
            0,
        ));
        run.cases.push(c);
    }
    run
}

#[test]
fn snapshot_latency_table_and_json() {
    let run = latency_run();
    check(
        "latency.txt",
        &crate::export::render_latency(&run, Format::Table, true),
    );
    let json = crate::export::render_latency(&run, Format::Json, false);
    check("latency.json", &json);
    let back: ipcperf_core::record::RunRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, run);
}

#[test]
fn snapshot_sync_table() {
    let mut run = testdata::run();
    run.cases = vec![
        testdata::sync_case("futex", 900, 1_500, 6_000, 40_000),
        testdata::sync_case("sysv-sem", 2_000, 3_000, 9_000, 70_000),
    ];
    check(
        "sync.txt",
        &crate::export::sync::render(&run, Format::Table),
    );
}
