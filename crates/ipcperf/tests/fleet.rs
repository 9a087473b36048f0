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

/// A seeded jitter of ±2%.
fn jitter_from(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        0.98 + 0.04 * ((seed % 10_000) as f64 / 10_000.0)
    }
}

/// `run` as host `host` on `kernel`, started `back_ms` before it was, every series
/// at the real case's median rate divided by `slowdown`, times the jitter (the
/// real series' own spread on this shared VM is left out: the fleet's noise is
/// the one made here).
fn host_run(
    run: &serde_json::Value,
    host: &str,
    kernel: Option<&str>,
    back_ms: u64,
    slowdown: f64,
    jitter: &mut dyn FnMut() -> f64,
) -> serde_json::Value {
    let mut r = run.clone();
    r["machine"]["hostname"] = host.into();
    if let Some(k) = kernel {
        r["machine"]["kernel"] = k.into();
    }
    for t in ["started_ms", "finished_ms"] {
        r[t] = (r[t].as_u64().unwrap() - back_ms).into();
    }
    for c in r["cases"].as_array_mut().unwrap() {
        let median = c["median_bytes_per_sec"].as_f64().unwrap();
        for s in c["series"].as_array_mut().unwrap() {
            let bytes = s["bytes"].as_f64().unwrap();
            let e = bytes / median * 1e9 * slowdown * jitter();
            s["elapsed_ns"] = (e as u64).into();
        }
    }
    r
}

/// Import `runs` into `db` in one command.
fn import(dir: &Path, db: &Path, runs: &[serde_json::Value]) {
    let mut c = common::cmd(db, &["import"]);
    for (i, r) in runs.iter().enumerate() {
        let f = dir.join(format!("import-{i:03}.json"));
        std::fs::write(&f, serde_json::to_vec(r).unwrap()).unwrap();
        c.arg(f);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Import `n` copies of `run` as hosts node00.., host `slow` (if any) at half speed,
/// each host's run a second apart, all in the past.
fn make_fleet(dir: &Path, db: &Path, run: &serde_json::Value, n: usize, slow: Option<usize>) {
    let mut jitter = jitter_from(0x9e37_79b9_7f4a_7c15);
    let runs: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let slowdown = if Some(i) == slow { 2.0 } else { 1.0 };
            let host = format!("node{i:02}");
            host_run(
                run,
                &host,
                None,
                1000 * (n - i) as u64,
                slowdown,
                &mut jitter,
            )
        })
        .collect();
    import(dir, db, &runs);
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
    let none = dir.path().join("none.db");
    let out = common::cmd(&none, &["fleet"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!none.exists(), "a read made a history");
}

/// Three kernels (8 hosts each; the second and third 20% slower) and one host
/// whose nightly runs halve: `--by kernel` names the step at the second kernel
/// alone, in version order (6.10 after 6.8); `trend` marks the night the host
/// halved; the fleet page holds the heat table, the outlier, the kernel step and
/// its trend, and Chromium shows it.
#[test]
fn kernels_trends_and_the_fleet_page() {
    let dir = tempfile::tempdir().unwrap();
    let run = real_run(dir.path());
    let db = dir.path().join("kernels.db");
    let mut jitter = jitter_from(0x2545_f491_4f6c_dd1d);
    let mut runs = Vec::new();
    let kernels = [
        ("6.1.0-28-amd64", 1.0),
        ("6.8.0-45-generic", 1.25),
        ("6.10.1", 1.25),
    ];
    for (k, (kernel, slowdown)) in kernels.iter().enumerate() {
        for i in 0..8 {
            let host = format!("node{:02}", k * 8 + i);
            // node03's last twelve nights: six at full speed, then six at half (a
            // change point needs three runs on each side, and enough runs in all
            // for its permutation test to reach p <= 0.01).
            let nights: &[(u64, f64)] = if host == "node03" {
                &[
                    (12, 1.0),
                    (11, 1.0),
                    (10, 1.0),
                    (9, 1.0),
                    (8, 1.0),
                    (7, 1.0),
                    (6, 2.0),
                    (5, 2.0),
                    (4, 2.0),
                    (3, 2.0),
                    (2, 2.0),
                    (1, 2.0),
                ]
            } else {
                &[(1, 1.0)]
            };
            for &(back, slower) in nights {
                runs.push(host_run(
                    &run,
                    &host,
                    Some(kernel),
                    back * 86_400_000 + 1000 * i as u64,
                    slowdown * slower,
                    &mut jitter,
                ));
            }
        }
    }
    import(dir.path(), &db, &runs);

    let text = common::stdout(&mut common::cmd(
        &db,
        &["fleet", "--by", "kernel", "--format", "json"],
    ));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(rows.len(), 2 * 3, "2 cases × 3 kernels: {rows:#?}");
    for case in rows.chunks(3) {
        let order: Vec<&str> = case.iter().map(|r| r["kernel"].as_str().unwrap()).collect();
        assert_eq!(order, ["6.1.0-28-amd64", "6.8.0-45-generic", "6.10.1"]);
        assert_eq!(case[0]["step"], false);
        assert_eq!(case[1]["step"], true, "{case:#?}");
        let ratio = case[1]["ratio"].as_f64().unwrap();
        assert!((ratio - 0.8).abs() < 0.03, "{ratio}");
        assert_eq!(case[2]["step"], false, "{case:#?}");
    }
    let table = common::stdout(&mut common::cmd(&db, &["fleet", "--by", "kernel"]));
    assert!(table.contains("2 steps between kernels"), "{table}");

    // node03's nights: the seventh is a step, the others are not.
    let text = common::stdout(&mut common::cmd(
        &db,
        &[
            "trend", "pipe", "--size", "64k", "--host", "node03", "--format", "json",
        ],
    ));
    let pts: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(pts.len(), 12, "{pts:#?}");
    let steps: Vec<usize> = pts
        .iter()
        .enumerate()
        .filter(|(_, p)| p["step"] == true)
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(steps, [7], "{pts:#?}");
    let png = dir.path().join("trend.png");
    common::cmd(
        &db,
        &["trend", "pipe", "--size", "64k", "--host", "node03", "-o"],
    )
    .arg(&png)
    .output()
    .unwrap();
    let img = image::open(&png).unwrap().to_rgb8();
    let red = img
        .pixels()
        .filter(|p| p.0[0] > 200 && p.0[1] < 60 && p.0[2] < 60)
        .count();
    assert!(red > 50, "the step is ringed in red ({red} red pixels)");
    // Bad input: one line, exit 2.
    for bad in [
        vec!["trend", "pipe", "-o", "x.txt"],
        vec!["fleet", "--by", "rack"],
        vec!["trend", "pipe", "--size", "huge"],
    ] {
        let out = common::cmd(&db, &bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    // A name no ipcperf measures is bad input (it was 1, "no complete run of
    // nosuch", as if the history lacked it); so is a mechanism, label or host
    // the history holds no run of, as `show` of a label that is not there is
    // (it was 1, the code of a case that failed while it ran: nothing ran).
    let out = common::cmd(&db, &["trend", "nosuch"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown mechanism 'nosuch'"));
    let out = common::cmd(&db, &["trend", "sysv-msg"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no complete run of sysv-msg"));
    let out = common::cmd(&db, &["fleet", "--label", "no-such-campaign"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("labelled no-such-campaign"));

    // The page.
    let html = dir.path().join("fleet.html");
    common::stdout(common::cmd(&db, &["fleet", "-o"]).arg(&html));
    let page = std::fs::read_to_string(&html).unwrap();
    // Kept for a person (and the book's screenshot) when asked.
    if let Ok(keep) = std::env::var("IPCPERF_KEEP_PAGE") {
        std::fs::copy(&html, keep).unwrap();
    }
    common::assert_self_contained(&page);
    assert_eq!(
        page.matches("<tr><td class=\"s\">node").count(),
        24,
        "one heat row per host"
    );
    assert!(page.contains("class=\"h\""), "an outlined outlier cell");
    // A wide table scrolls in its box, not the page.
    assert!(page.contains("<div style=\"overflow-x:auto\"><table class=\"heat\">"));
    assert!(page.contains("node03: stream pipe"), "the outlier line");
    assert!(page.contains("STEP: "), "the kernel step");
    assert!(page.contains("<h3>node03: stream"), "node03's trend chart");
    let Some(chromium) = common::chromium() else {
        return;
    };
    let shot = common::screenshot(chromium, dir.path(), &html, (1200, 2700));
    let img = image::open(&shot).unwrap().to_rgb8();
    let n = common::colored_pixels(&img);
    assert!(n > 2000, "the heat table is coloured ({n} coloured pixels)");
}

/// Kubernetes: each night's run comes from a new pod (a new host name) on the
/// same node; the history keeps it under the node, so `trend` follows the node
/// from night to night and the pod stays in the record.
#[test]
fn two_nights_of_pods_on_one_node_are_one_host_in_trend() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pods.db");
    let run = real_run(dir.path());
    let mut jitter = jitter_from(7);
    let runs: Vec<serde_json::Value> = [("suite-abc12", 86_400_000u64), ("suite-xyz34", 0)]
        .iter()
        .map(|(pod, back)| {
            let mut r = host_run(&run, pod, None, *back, 1.0, &mut jitter);
            r["machine"]["scheduler"] =
                serde_json::json!({"kind": "kubernetes", "node": "node-7", "pod": pod});
            r
        })
        .collect();
    import(dir.path(), &db, &runs);
    let text = common::stdout(&mut common::cmd(
        &db,
        &[
            "trend", "pipe", "--size", "64k", "--host", "node-7", "--format", "json",
        ],
    ));
    let points: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let pipe: Vec<&serde_json::Value> = points
        .iter()
        .filter(|p| p["case"].as_str().unwrap().starts_with("stream pipe"))
        .collect();
    assert_eq!(pipe.len(), 2, "{text}");
    assert!(pipe.iter().all(|p| p["host"] == "node-7"), "{text}");
    let shown = common::stdout(&mut common::cmd(&db, &["show", "last", "--format", "json"]));
    let last: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(last["machine"]["hostname"], "suite-xyz34");
}

/// A trend's newest night against the nights before it (as `compare` judges a
/// run against the mean of several): nine nights of ±2% jitter, the last at
/// the others' speed, 3% slower (under the 5% threshold) or 30% slower. Only the
/// 30% is called, the day it ran, where a step needs three nights after it; a
/// history of one night before it is not judged, and says why.
#[test]
fn the_newest_night_is_judged_against_the_nights_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = real_run(dir.path());
    for (last, called) in [(1.0, "unchanged"), (1.03, "unchanged"), (1.3, "slower")] {
        let db = dir.path().join(format!("nights-{last}.db"));
        let mut jitter = jitter_from(0x5851_f42d_4c95_7f2d);
        let runs: Vec<serde_json::Value> = (0..9u64)
            .map(|n| {
                let slowdown = if n == 8 { last } else { 1.0 };
                host_run(
                    &run,
                    "night",
                    None,
                    (9 - n) * 86_400_000,
                    slowdown,
                    &mut jitter,
                )
            })
            .collect();
        import(dir.path(), &db, &runs);
        let args = ["trend", "pipe", "--host", "night", "--format", "json"];
        let text = common::stdout(&mut common::cmd(&db, &args));
        let pts: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(pts.len(), 9, "{text}");
        let newest = &pts[8]["newest"];
        assert_eq!(newest["verdict"], called, "{last}: {newest:#}");
        assert_eq!(newest["earlier_runs"], 8, "{newest:#}");
        let could = newest["could_call"].as_f64().unwrap();
        assert!(
            could >= 0.05 && could >= newest["limit"].as_f64().unwrap(),
            "{newest:#}"
        );
        assert!(pts[..8].iter().all(|p| p.get("newest").is_none()), "{text}");
        let table = common::stdout(&mut common::cmd(&db, &["trend", "pipe", "--host", "night"]));
        assert!(table.contains(&format!("1 {called}")), "{table}");
        assert_eq!(
            table.contains("NEWEST SLOWER"),
            called == "slower",
            "{table}"
        );
        // Markdown keeps the reason in the newest row's verdict.
        let args = ["trend", "pipe", "--host", "night", "--format", "markdown"];
        let md = common::stdout(&mut common::cmd(&db, &args));
        assert_eq!(
            md.contains("| NEWEST SLOWER: 0.") && md.contains(" runs before, p "),
            called == "slower",
            "{md}"
        );
    }
    let db = dir.path().join("two.db");
    let mut jitter = jitter_from(3);
    let two: Vec<serde_json::Value> = (0..2u64)
        .map(|n| host_run(&run, "night", None, (2 - n) * 86_400_000, 1.0, &mut jitter))
        .collect();
    import(dir.path(), &db, &two);
    let args = ["trend", "pipe", "--host", "night", "--format", "csv"];
    let csv = common::stdout(&mut common::cmd(&db, &args));
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",could_call,limit,newest_why"),
        "{csv}"
    );
    assert!(
        csv.contains("not judged") && csv.contains("1 run before it"),
        "{csv}"
    );
}
