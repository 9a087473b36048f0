//! `compare --baseline-runs K`: B judged against the mean of K runs of A with the
//! run-to-run spread moderated over the cases; each row's limit beside its
//! figure. Runs are one real run and copies of it with known medians (imported),
//! so the verdicts are exact.

use assert_cmd::prelude::*;

mod common;
use common::{cmd, stdout};

/// The run-to-run pattern: five z-scores of sample sd 1.
const Z: [f64; 5] = [-1.2649, -0.6325, 0.0, 0.6325, 1.2649];

/// Imports into `db` a copy of run `r1` as run `run` (`copy{run}`), each case's
/// every series' bytes scaled by `factor(index, case)`.
fn import_copy(
    dir: &std::path::Path,
    db: &std::path::Path,
    r1: &serde_json::Value,
    run: usize,
    factor: impl Fn(usize, &serde_json::Value) -> f64,
) {
    let mut v = r1.clone();
    v["started_ms"] = (v["started_ms"].as_u64().unwrap() + run as u64).into();
    v["label"] = serde_json::Value::from(format!("copy{run}"));
    for (i, c) in v["cases"].as_array_mut().unwrap().iter_mut().enumerate() {
        let f = factor(i, c);
        for s in c["series"].as_array_mut().unwrap() {
            s["bytes"] = ((s["bytes"].as_u64().unwrap() as f64 * f) as u64).into();
        }
    }
    let path = dir.join(format!("r{run}.json"));
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    cmd(db, &["import", "-q"]).arg(&path).assert().success();
}

/// `compare 6 7 --baseline-runs 5 --format json` on `db`, parsed.
fn run_7_against_five(db: &std::path::Path) -> serde_json::Value {
    let out = stdout(&mut cmd(
        db,
        &[
            "compare",
            "6",
            "7",
            "--baseline-runs",
            "5",
            "--format",
            "json",
        ],
    ));
    serde_json::from_str(&out).unwrap()
}

/// Run 1 of `db` (`ipcperf run` with `args`, quiet), exported and read back.
fn first_run(dir: &std::path::Path, db: &std::path::Path, args: &[&str]) -> serde_json::Value {
    cmd(db, &[&["run"], args, &["-q"]].concat())
        .assert()
        .success();
    let json = dir.join("r1.json");
    cmd(db, &["export", "1", "-o"])
        .arg(&json)
        .assert()
        .success();
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

#[test]
fn a_baseline_of_runs_calls_one_slowed_case_and_names_each_row_s_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let r1 = first_run(
        dir.path(),
        &db,
        &["pipe", "unix", "--sizes", "4k,64k", "-d", "20ms"],
    );
    let cases = r1["cases"].as_array().unwrap().len();
    assert!(cases >= 4, "{cases} cases");
    // Runs 2..6: run 1 with each case's every series scaled by e^(2%·z), the
    // z of each case in another order; run 7: run 6 with case 0 at 0.7×.
    let scaled = |run: usize, slow0: f64| {
        import_copy(dir.path(), &db, &r1, run, |i, _| {
            (0.02 * Z[(run.min(6) + i) % 5]).exp() * if i == 0 { slow0 } else { 1.0 }
        })
    };
    for run in 2..=6 {
        scaled(run, 1.0);
    }
    scaled(7, 0.7);
    let j = run_7_against_five(&db);
    assert_eq!(j["baseline"], serde_json::json!([6, 5, 4, 3, 2]), "{j}");
    assert!(j["run_to_run_prior"]["cases"].as_u64().unwrap() >= 4, "{j}");
    let main: Vec<&serde_json::Value> = j["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["unit"] == "MB/s")
        .collect();
    assert_eq!(main.len(), cases);
    assert_eq!(main[0]["change"], "slower", "{}", main[0]);
    for c in &main[1..] {
        assert!(c["change"] != "slower" && c["change"] != "faster", "{c}");
    }
    for c in &main {
        assert_eq!(c["baseline_runs"], 5, "{c}");
        let limit = c["limit"].as_f64().unwrap();
        let could = c["smallest_callable_change"].as_f64().unwrap();
        assert!(limit >= 0.05 && could >= limit * 0.999, "{c}");
    }
    assert_eq!(j["rows_with_limit"], cases, "{j}");
    // The table: the limit column, the summary's count of rows near their limit.
    let table = stdout(&mut cmd(
        &db,
        &["compare", "6", "7", "--baseline-runs", "5"],
    ));
    assert!(
        table.contains("limit") && table.contains("within 1.5× of their limit"),
        "{table}"
    );
    assert!(
        table.contains("Comparing runs 6, 5, 4, 3, 2 (copy6) with run 7"),
        "{table}"
    );
    // One run as A: A against B alone, on the history of the others.
    let one = stdout(&mut cmd(&db, &["compare", "6", "7", "--format", "json"]));
    let one: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(one["baseline"], serde_json::json!([6]));
    // More runs asked than kept: said on stderr, the ones there used.
    let out = cmd(&db, &["compare", "6", "7", "--baseline-runs", "50"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only 6 complete runs"), "{err}");
    // Bad input: one line, exit 2.
    common::bad_input(
        &["compare", "1", "2", "--baseline-runs", "0"],
        "--baseline-runs",
    );
}

/// Under the table and in JSON: how far B's cases moved as a whole, per
/// placement, against how far the history's runs do. Runs 2..6 are a real run
/// with every case moved by its run's 2% (sd) and its own 0.5%; run 7 has every
/// case on one CPU 20% down in MB/s.
#[test]
fn a_run_that_moved_as_a_whole_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let r1 = first_run(
        dir.path(),
        &db,
        &[
            "pipe",
            "unix",
            "--sizes",
            "64,1k,4k,64k",
            "--pin",
            "0,0",
            "--pin",
            "0,1",
            "-d",
            "10ms",
        ],
    );
    let same = |c: &serde_json::Value| c["placement"]["writer_cpu"] == c["placement"]["reader_cpu"];
    let ok = |c: &&serde_json::Value| c["status"] == "ok";
    let cases = r1["cases"].as_array().unwrap();
    if cases.iter().filter(ok).filter(|c| same(c)).count() < 8
        || cases.iter().filter(ok).filter(|c| !same(c)).count() < 8
    {
        eprintln!("skipped: fewer than 8 cases ran on one CPU or across two (one CPU here?)");
        return;
    }
    let copy = |run: usize, level: f64, one_cpu: f64| {
        import_copy(dir.path(), &db, &r1, run, |i, c| {
            (0.02 * level + 0.005 * Z[(run + i) % 5]).exp() * if same(c) { one_cpu } else { 1.0 }
        })
    };
    for run in 2..=6 {
        copy(run, Z[run - 2], 1.0);
    }
    copy(7, 0.0, 0.8);
    let j = run_7_against_five(&db);
    let whole = j["whole_run"].as_array().unwrap();
    let one = whole.iter().find(|w| w["placement"] == "one-cpu").unwrap();
    let two = whole
        .iter()
        .find(|w| w["placement"] == "across-cpus")
        .unwrap();
    let slower = one["slower"].as_f64().unwrap();
    assert!(slower > 0.2 && slower < 0.3, "{one}");
    assert_eq!(one["beyond_history"], true, "{one}");
    assert!(one["history_runs"].as_u64().unwrap() >= 5, "{one}");
    assert!(two["slower"].as_f64().unwrap().abs() < 0.05, "{two}");
    assert_eq!(two["beyond_history"], false, "{two}");
    let table = stdout(&mut cmd(
        &db,
        &["compare", "6", "7", "--baseline-runs", "5"],
    ));
    assert!(
        table.contains("cases on one CPU ran") && table.contains("the machine, or everything"),
        "{table}"
    );
    // The gate's line on standard error says it too.
    let out = cmd(
        &db,
        &[
            "compare",
            "6",
            "7",
            "--baseline-runs",
            "5",
            "--fail-on-regression",
        ],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("B's machine moved: its cases on one CPU ran")
            && !err.contains("across two CPUs ran"),
        "{err}"
    );
}

/// `--confirm C`: a call in B stands only where C repeats it. Runs 2..6 as
/// above; B (7) has cases 0 and 1 at 0.7×; C (8) has case 0 at 0.7× again and
/// case 1 back: case 0 held, case 1 undone and said so, the gate still fails on
/// case 0; a C with both back passes the gate. C must be a third run of B's
/// machine, measured after B.
#[test]
fn a_call_is_held_to_a_later_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let r1 = first_run(
        dir.path(),
        &db,
        &["pipe", "unix", "--sizes", "4k,64k", "-d", "20ms"],
    );
    let copy = |run: usize, slow: [f64; 2]| {
        import_copy(dir.path(), &db, &r1, run, |i, _| {
            (0.02 * Z[(run.min(6) + i) % 5]).exp() * slow.get(i).copied().unwrap_or(1.0)
        })
    };
    for run in 2..=6 {
        copy(run, [1.0, 1.0]);
    }
    copy(7, [0.7, 0.7]);
    let judged = |c: &str| {
        let args = [
            "compare",
            "6",
            "7",
            "--baseline-runs",
            "5",
            "--confirm",
            c,
            "--fail-on-regression",
            "--format",
            "json",
        ];
        let out = cmd(&db, &args).output().unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), j)
    };
    // Without C both are called.
    let plain = run_7_against_five(&db);
    let main = |j: &serde_json::Value| -> Vec<serde_json::Value> {
        j["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["unit"] == "MB/s")
            .cloned()
            .collect()
    };
    assert_eq!(main(&plain)[0]["change"], "slower", "{plain}");
    assert_eq!(main(&plain)[1]["change"], "slower", "{plain}");
    // The gate's line says how to hold its calls to a later run, until they are.
    let gate = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            "6",
            "7",
            "--baseline-runs",
            "5",
            "--fail-on-regression",
        ];
        args.extend_from_slice(extra);
        let out = cmd(&db, &args).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let said = gate(&[]);
    assert!(said.contains("judge again with `--confirm C`"), "{said}");
    assert!(said.contains("add `--remeasure`"), "{said}");
    copy(8, [0.7, 1.0]);
    assert!(!gate(&["--confirm", "8"]).contains("--confirm C"));
    let (code, j) = judged("8");
    assert_eq!(code, Some(3), "{j}");
    assert_eq!(
        j["confirm"],
        serde_json::json!({"run": 8, "measured_now": false, "held": 1, "not_repeated": 1, "unmeasured": 0})
    );
    let rows = main(&j);
    assert_eq!(rows[0]["change"], "slower", "{}", rows[0]);
    assert!(rows[0]["why"].as_str().unwrap().contains("again in run 8"));
    assert_eq!(rows[1]["change"], "unchanged", "{}", rows[1]);
    assert!(
        rows[1]["why"]
            .as_str()
            .unwrap()
            .contains("not again in run 8"),
        "{}",
        rows[1]
    );
    // The history leaves C out as it does B: the same spreads with C or without.
    for (a, b) in main(&plain).iter().zip(&rows) {
        assert_eq!(a["run_to_run_sd"], b["run_to_run_sd"], "{a} {b}");
    }
    // Both back in C: nothing stands, the gate passes (run 8 is history now).
    copy(9, [1.0, 1.0]);
    let (code, j) = judged("9");
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(j["confirm"]["held"], 0, "{j}");
    assert!(main(&j).iter().all(|c| c["change"] != "slower"), "{j}");
    // The table says it in its heading and under the table.
    let table = stdout(&mut cmd(
        &db,
        &[
            "compare",
            "6",
            "7",
            "--baseline-runs",
            "5",
            "--confirm",
            "9",
        ],
    ));
    assert!(
        table.contains("calls held to run 9") && table.contains("0 held, "),
        "{table}"
    );
    // C must be a third run, of B's machine.
    let bad = |c: &str, needle: &str| {
        let out = cmd(&db, &["compare", "6", "7", "--confirm", c])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--confirm") && err.contains(needle), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty(), "{out:?}");
    };
    bad("7", "it is B");
    bad("6", "it is A");
    bad("5", "measured before B (run 7)");
    let mut other = r1.clone();
    other["machine"]["hostname"] = "elsewhere".into();
    other["label"] = "elsewhere".into();
    let path = dir.path().join("elsewhere.json");
    std::fs::write(&path, serde_json::to_vec(&other).unwrap()).unwrap();
    cmd(&db, &["import", "-q"]).arg(&path).assert().success();
    bad("elsewhere", "elsewhere");
}

/// A case A measured that B did not (B stopped before it, or it was skipped
/// or failed there) is not passed by the gate as if nothing happened: the
/// gate's line counts it and says B is incomplete, and with --strict it fails
/// the gate. A case only B has is not counted.
#[test]
fn a_case_missing_from_b_is_named_by_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let r1 = first_run(
        dir.path(),
        &db,
        &["pipe", "--sizes", "4k,64k", "-d", "20ms"],
    );
    assert!(r1["cases"].as_array().unwrap().len() >= 2);
    let mut v = r1.clone();
    v["started_ms"] = (v["started_ms"].as_u64().unwrap() + 2).into();
    v["complete"] = false.into();
    v["cases"].as_array_mut().unwrap().remove(0);
    let path = dir.path().join("r2.json");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    cmd(&db, &["import", "-q"]).arg(&path).assert().success();

    let gate = |args: &[&str]| {
        let out = cmd(
            &db,
            &[&["compare"], args, &["--fail-on-regression"]].concat(),
        )
        .output()
        .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = gate(&["1", "2", "--threshold", "90%"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("1 measured in A was not measured in B")
            && err.contains("only with --strict")
            && err.contains("B (run 2) is incomplete"),
        "{err}"
    );
    let (code, err) = gate(&["1", "2", "--threshold", "90%", "--strict"]);
    assert_eq!(code, Some(3), "{err}");
    // The other way about, A lacks the case: nothing was lost.
    let (_, err) = gate(&["2", "1", "--threshold", "90%"]);
    assert!(!err.contains("measured in A"), "{err}");
    // A case in one run only is one line under the table, with its count.
    let out = cmd(&db, &["compare", "1", "2", "--threshold", "90%"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 case only in A"), "{text}");

    // Runs that measured something, but nothing in common (a latency run
    // against a throughput run): bad input, not a table of dashes that passes
    // the gate; nor is a run that measured nothing a baseline.
    cmd(&db, &["latency", "unix", "-n", "50", "-q"])
        .assert()
        .success();
    let (code, err) = gate(&["1", "3"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no case in common"), "{err}");
    let mut empty = v.clone();
    empty["started_ms"] = (v["started_ms"].as_u64().unwrap() + 5).into();
    empty["cases"] = serde_json::json!([]);
    std::fs::write(&path, serde_json::to_vec(&empty).unwrap()).unwrap();
    cmd(&db, &["import", "-q"]).arg(&path).assert().success();
    // Either way round: a B of nothing measured passed the gate.
    for (a_, b_, side) in [("4", "1", "as A"), ("1", "4", "as B")] {
        let (code, err) = gate(&[a_, b_]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("run 4 (run) has no figure to compare with") && err.contains(side),
            "{err}"
        );
    }
}

/// `--remeasure`: where a row is called, its case is measured again, for
/// real, as B's own command measured it; the run is kept and each call held
/// to it. A case made 20× slower in a copy of B is not slower when measured
/// again (the call is undone, the gate passes); a history made 10× faster
/// than this machine is, B at this machine's level, is slower again (held,
/// the gate fails). The spreads are wide (sd 50%) so that a real figure
/// under load stays where the test needs it.
#[test]
fn remeasure_measures_the_called_cases_again_and_holds_each_call_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let gate = |db: &std::path::Path| {
        let args = [
            "compare",
            "6",
            "7",
            "--baseline-runs",
            "5",
            "--fail-on-regression",
            "--remeasure",
            "--format",
            "json",
        ];
        let out = cmd(db, &args).output().unwrap();
        let j: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
        (
            out.status.code(),
            j,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let cases_of = |db: &std::path::Path, run: &str| -> Vec<String> {
        let out = stdout(&mut cmd(db, &["export", run, "--format", "json"]));
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        j["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{} {}", c["mechanism"], c["block_size_bytes"]))
            .collect()
    };
    let history = |name: &str, level: f64, b: [f64; 2]| {
        let db = dir.path().join(name);
        let sub = dir.path().join(format!("{name}.d"));
        std::fs::create_dir(&sub).unwrap();
        // A real run, kept elsewhere: the history is its copies alone.
        let r1 = first_run(
            &sub,
            &sub.join("real.db"),
            &["pipe", "--sizes", "4k,64k", "-d", "20ms"],
        );
        for run in 1..=6 {
            import_copy(&sub, &db, &r1, run, |i, _| {
                level * (0.5 * Z[(run + i) % 5]).exp()
            });
        }
        import_copy(&sub, &db, &r1, 7, |i, _| b[i]);
        (db, r1)
    };

    // Case 0 of B 20x slower than the history: called; measured again it is
    // not: the call is undone and the gate passes; the run measured again
    // (8) is kept, and holds that case alone.
    let (db, r1) = history("undone.db", 1.0, [0.05, 1.0]);
    let (code, j, err) = gate(&db);
    assert_eq!(code, Some(0), "{j} {err}");
    assert_eq!(
        j["confirm"],
        serde_json::json!({"run": 8, "measured_now": true, "held": 0, "not_repeated": 1, "unmeasured": 0}),
        "{err}"
    );
    assert!(err.contains("measuring the 1 case called again"), "{err}");
    assert_eq!(cases_of(&db, "8"), [r#""pipe" 4096"#]);
    // Nothing called, nothing measured: no run 9.
    let out = cmd(&db, &["compare", "5", "6", "--remeasure"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = cmd(&db, &["show", "9"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // A history 10x faster than this machine, B at its level: both cases
    // called, both slower again when measured again: held, the gate fails.
    let (db2, _) = history("held.db", 10.0, [1.0, 1.0]);
    let (code, j, err) = gate(&db2);
    assert_eq!(code, Some(3), "{j} {err}");
    assert_eq!(
        j["confirm"],
        serde_json::json!({"run": 8, "measured_now": true, "held": 2, "not_repeated": 0, "unmeasured": 0}),
        "{err}"
    );
    assert_eq!(cases_of(&db2, "8").len(), 2);
    // The table says how C came to be (a history of its own: run 8 of the
    // last, at this machine's level, would now widen every spread).
    let (db3, _) = history("table.db", 10.0, [1.0, 1.0]);
    let table = stdout(&mut cmd(
        &db3,
        &["compare", "6", "7", "--baseline-runs", "5", "--remeasure"],
    ));
    assert!(
        table.contains("held to run 8, its cases measured again at once (--remeasure)"),
        "{table}"
    );

    // What cannot be measured again here is bad input, one line, and
    // nothing is measured: B of another machine, B not a `run`.
    let later = std::cell::Cell::new(100u64);
    let bad = |db: &std::path::Path, edit: &dyn Fn(&mut serde_json::Value), needle: &str| {
        let mut v = r1.clone();
        edit(&mut v);
        v["label"] = "odd".into();
        // Incomplete: no later comparison takes it into the history.
        v["complete"] = false.into();
        later.set(later.get() + 1);
        v["started_ms"] = (v["started_ms"].as_u64().unwrap() + later.get()).into();
        for c in v["cases"].as_array_mut().unwrap() {
            for s in c["series"].as_array_mut().unwrap() {
                s["bytes"] = (s["bytes"].as_u64().unwrap() / 20).into();
            }
        }
        let path = dir.path().join("odd.json");
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
        cmd(db, &["import", "-q"]).arg(&path).assert().success();
        let out = cmd(db, &["compare", "6", "odd", "--remeasure"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--remeasure: ") && err.contains(needle),
            "{err}"
        );
        assert!(err.contains("--confirm C"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    };
    bad(
        &db,
        &|v| v["command_line"] = serde_json::json!(["ipcperf", "sync"]),
        "is not a `run` or `latency` command",
    );
    bad(
        &db,
        &|v| v["machine"]["hostname"] = "elsewhere".into(),
        "measured on elsewhere",
    );
    // Refused before anything reaches for the peer (a closed loopback port).
    bad(
        &db,
        &|v| {
            v["command_line"] =
                serde_json::json!(["ipcperf", "run", "tcp", "--peer", "127.0.0.1:1"])
        },
        "peer ran on another machine",
    );
    let out = stdout(&mut cmd(&db, &["history", "--format", "json"]));
    let runs: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(11), "{runs}");
}

/// A baseline is of runs that measured A's cases: a latency run between them
/// was counted as one of A's runs (named in the heading, taking a place of the
/// K asked) though it held none of the cases judged.
#[test]
fn a_run_of_other_cases_is_no_part_of_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let r1 = first_run(dir.path(), &db, &["pipe", "--sizes", "4k", "-d", "20ms"]);
    cmd(&db, &["latency", "pipe", "-d", "20ms", "-r", "1", "-q"])
        .assert()
        .success();
    import_copy(dir.path(), &db, &r1, 3, |_, _| 1.0);
    import_copy(dir.path(), &db, &r1, 4, |_, _| 1.0);
    let out = cmd(
        &db,
        &["compare", "3", "4", "--baseline-runs", "5", "-f", "json"],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["baseline"], serde_json::json!([3, 1]), "{j}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("that measured a case of A (runs 3, 1)"),
        "{err}"
    );
}
