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
