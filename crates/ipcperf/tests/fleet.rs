//! `ipcperf fleet` on a synthetic fleet made from one real run: the run exported,
//! copied to N hosts (each its own hostname, time and series: the real median
//! with a seeded ±2% jitter), imported into one history. A host whose figures were halved is named
//! first and alone; an A/A fleet (every host the same run) names no outlier.

use std::path::Path;
use std::process::Command;

mod common;

/// One real run of pipe and unix at 64 KiB, five series each, as JSON.
fn real_run(dir: &Path) -> serde_json::Value {
    let out = dir.join("real.json");
    let st = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args([
            "run",
            "pipe",
            "unix",
            "-s",
            "64k",
            "-d",
            "20ms",
            "-r",
            "5",
            "--no-save",
        ])
        .arg("--export-json")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap()
}

/// Import `n` copies of `run` as hosts node00.., host `slow` (if any) at half speed.
fn make_fleet(dir: &Path, db: &Path, run: &serde_json::Value, n: usize, slow: Option<usize>) {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut jitter = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        0.98 + 0.04 * ((seed % 10_000) as f64 / 10_000.0)
    };
    for i in 0..n {
        let mut r = run.clone();
        r["machine"]["hostname"] = format!("node{i:02}").into();
        // Each host's run a second apart, all in the past.
        let back = 1000 * (n - i) as u64;
        for t in ["started_ms", "finished_ms"] {
            r[t] = (r[t].as_u64().unwrap() - back).into();
        }
        let slowdown = if Some(i) == slow { 2.0 } else { 1.0 };
        // Every series at the real case's median rate, times the host's own
        // jitter (the real series' own spread on this shared VM is left out: the
        // fleet's noise is the one made here).
        for c in r["cases"].as_array_mut().unwrap() {
            let median = c["median_bytes_per_sec"].as_f64().unwrap();
            for s in c["series"].as_array_mut().unwrap() {
                let bytes = s["bytes"].as_f64().unwrap();
                let e = bytes / median * 1e9 * slowdown * jitter();
                s["elapsed_ns"] = (e as u64).into();
            }
        }
        let f = dir.join(format!("node{i:02}.json"));
        std::fs::write(&f, serde_json::to_vec(&r).unwrap()).unwrap();
        let out = common::cmd(db, &["import"]).arg(&f).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn fleet_json(db: &Path) -> Vec<serde_json::Value> {
    let text = common::stdout(&mut common::cmd(db, &["fleet", "--format", "json"]));
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_halved_host_is_named_first_and_an_a_a_fleet_names_none() {
    let dir = tempfile::tempdir().unwrap();
    let run = real_run(dir.path());
    // Thirteen hosts, node07 at half speed.
    let db = dir.path().join("fleet.db");
    make_fleet(dir.path(), &db, &run, 13, Some(7));
    let rows = fleet_json(&db);
    assert_eq!(rows.len(), 13 * 2, "13 hosts × 2 cases");
    let outliers: Vec<&serde_json::Value> = rows.iter().filter(|r| r["outlier"] == true).collect();
    let node07: Vec<&serde_json::Value> = rows.iter().filter(|r| r["host"] == "node07").collect();
    assert_eq!(outliers.len(), 2, "node07, in both cases: {node07:#?}");
    for o in &outliers {
        assert_eq!(o["host"], "node07");
        let ratio = o["ratio"].as_f64().unwrap();
        assert!((ratio - 0.5).abs() < 0.05, "{ratio}");
        assert_eq!(o["peers"], 12);
    }
    assert_eq!(rows[0]["host"], "node07", "outliers first");
    let table = common::stdout(&mut common::cmd(&db, &["fleet"]));
    assert!(table.contains("13 hosts"), "{table}");
    assert!(table.contains("node07: stream pipe"), "{table}");
    assert!(table.contains("its 12 peers"), "{table}");
    // A/A: twenty copies of one run, each its own jitter: no outlier.
    let db = dir.path().join("aa.db");
    make_fleet(dir.path(), &db, &run, 20, None);
    let rows = fleet_json(&db);
    assert_eq!(rows.len(), 40);
    assert!(rows.iter().all(|r| r["outlier"] == false), "{rows:#?}");
    // --mechanisms narrows; an empty history is a failure said in one line.
    let text = common::stdout(&mut common::cmd(
        &db,
        &["fleet", "--mechanisms", "unix", "--format", "csv"],
    ));
    assert_eq!(text.lines().count(), 1 + 20, "{text}");
    let out = common::cmd(&dir.path().join("none.db"), &["fleet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}
