use super::*;
use std::path::PathBuf;

fn write(dir: &Path, name: &str, v: &serde_json::Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}

fn sample() -> serde_json::Value {
    serde_json::to_value(crate::testdata::run()).unwrap()
}

/// A byte-order mark before the JSON is skipped; one anywhere else is not JSON.
#[test]
fn a_byte_order_mark_before_the_run_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let body = serde_json::to_vec(&sample()).unwrap();
    let p = dir.path().join("bom.json");
    std::fs::write(&p, [&b"\xEF\xBB\xBF"[..], &body].concat()).unwrap();
    let mut n = 0;
    read_run(&p, |_| {
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, sample()["cases"].as_array().unwrap().len());
    std::fs::write(&p, [&b" \xEF\xBB\xBF"[..], &body].concat()).unwrap();
    let e = read_run(&p, |_| Ok(())).unwrap_err();
    assert!(e.contains("not an ipcperf run record"), "{e}");
}

#[test]
fn a_run_streams_case_by_case_and_keeps_its_fields() {
    let dir = tempfile::tempdir().unwrap();
    let v = sample();
    let want = v["cases"].as_array().unwrap().len();
    let p = write(dir.path(), "r.json", &v);
    let mut got = 0;
    let head = read_run(&p, |_| {
        got += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(got, want);
    assert!(head.cases.is_empty());
    assert_eq!(head.started_ms, v["started_ms"].as_u64().unwrap());
}

/// A run's kind comes with it; one exported before kinds were recorded has
/// its command line's; a kind that is no command's name is refused.
#[test]
fn a_run_keeps_its_kind_and_an_older_one_gets_its_command_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = sample();
    v["kind"] = "pipeline".into();
    let p = write(dir.path(), "k.json", &v);
    assert_eq!(read_run(&p, |_| Ok(())).unwrap().kind, "pipeline");
    v.as_object_mut().unwrap().remove("kind");
    v["command_line"] = serde_json::json!(["ipcperf", "-q", "matrix", "shm"]);
    let p = write(dir.path(), "old.json", &v);
    assert_eq!(read_run(&p, |_| Ok(())).unwrap().kind, "matrix");
    v["kind"] = "../../etc".into();
    let p = write(dir.path(), "bad.json", &v);
    let e = read_run(&p, |_| Ok(())).unwrap_err();
    assert!(e.contains("kind"), "{e}");
}

/// An input shown by another name (a spool of standard input) is named so
/// in every error, never by the file that stands in for it.
#[test]
fn errors_name_the_input_shown_not_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = sample();
    v["kind"] = "../../etc".into();
    let bad = write(dir.path(), "spool-123.json", &v);
    let garbage = dir.path().join("spool-456.json");
    std::fs::write(&garbage, b"{\"cases\": [1").unwrap();
    for p in [&bad, &garbage] {
        let e = read_run_as(p, "standard input", |_| Ok(())).unwrap_err();
        assert!(e.starts_with("standard input: "), "{e}");
        assert!(!e.contains("spool-"), "{e}");
    }
    let e = read_run(&bad, |_| Ok(())).unwrap_err();
    assert!(e.contains("spool-123.json"), "{e}");
}

#[test]
fn a_schema_1_run_with_block_size_unsuffixed_still_imports() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = sample();
    v["schema_version"] = 1.into();
    let mut want = Vec::new();
    for c in v["cases"].as_array_mut().unwrap() {
        let o = c.as_object_mut().unwrap();
        let b = o.remove("block_size_bytes").unwrap();
        want.push(b.as_u64().unwrap());
        o.insert("block_size".into(), b);
    }
    let p = write(dir.path(), "old.json", &v);
    let mut got = Vec::new();
    read_run(&p, |c| {
        got.push(c.block_size);
        Ok(())
    })
    .unwrap();
    assert_eq!(got, want);
}

#[test]
fn absurd_values_are_refused_with_the_field_named() {
    let dir = tempfile::tempdir().unwrap();
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit); 8] = [
        ("cases[0].block_size_bytes", |v| {
            v["cases"][0]["block_size_bytes"] = 0.into()
        }),
        ("cases[1].block_size_bytes", |v| {
            v["cases"][1]["block_size_bytes"] = u64::MAX.into()
        }),
        ("started_ms", |v| {
            v["started_ms"] = 4_102_444_800_000u64.into()
        }),
        ("finished_ms", |v| v["finished_ms"] = 1u64.into()),
        ("cases[0].median_bytes_per_sec", |v| {
            v["cases"][0]["median_bytes_per_sec"] = (-1.0).into()
        }),
        (
            "machine.hostname: holds a control character (U+000A)",
            |v| v["machine"]["hostname"] = "a\n| b |".into(),
        ),
        (
            "machine.cpu_model: holds a control character (U+001B)",
            |v| v["machine"]["cpu_model"] = "\u{1b}]0;title\u{7}".into(),
        ),
        (
            "cases[0].mechanism: holds a control character (U+0009)",
            |v| v["cases"][0]["mechanism"] = "pipe\t".into(),
        ),
    ];
    for (field, edit) in cases {
        let mut v = sample();
        edit(&mut v);
        let p = write(dir.path(), "bad.json", &v);
        let e = read_run(&p, |_| Ok(())).unwrap_err();
        assert!(e.contains(field), "{field}: {e}");
    }
}

/// A case's figures are its series' own: a median edited alone is taken
/// again from the series (a table showed 5,000 MB/s that no series gave),
/// and a figure with no series at all is refused.
#[test]
fn figures_are_the_series_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = sample();
    let kept = v["cases"][0]["median_bytes_per_sec"].as_f64().unwrap();
    v["cases"][0]["median_bytes_per_sec"] = 5e9.into();
    v["cases"][0]["max_bytes_per_sec"] = 6e9.into();
    let p = write(dir.path(), "edited.json", &v);
    let mut got = Vec::new();
    read_run(&p, |c| {
        got.push((c.median_bytes_per_sec, c.max_bytes_per_sec));
        Ok(())
    })
    .unwrap();
    assert_eq!(got[0].0, Some(kept));
    assert!(got[0].1.unwrap() < 6e9, "{got:?}");
    v["cases"][0]["series"] = serde_json::json!([]);
    let p = write(dir.path(), "no-series.json", &v);
    let e = read_run(&p, |_| Ok(())).unwrap_err();
    assert!(
        e.contains("cases[0].median_bytes_per_sec: 5000000000, with no series"),
        "{e}"
    );
}

/// A round trip's percentiles are its histogram's: a p99 edited alone is
/// taken again from the histogram, and a histogram ipcperf could not have
/// written (other bounds, fewer round trips than said) is refused.
#[test]
fn percentiles_are_the_histogram_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = ipcperf_core::latency::new_histogram();
    for ns in 1_000..3_000u64 {
        h.record(ns).unwrap();
    }
    let mut r = crate::testdata::run();
    r.cases[0].latency = Some(ipcperf_core::latency::summarize(
        &h,
        1_000_000_000,
        0,
        20,
        vec![2_000],
        0,
    ));
    let kept = r.cases[0].latency.clone().unwrap();
    let mut v = serde_json::to_value(&r).unwrap();
    v["cases"][0]["p99_ns"] = 50.into();
    v["cases"][0]["max_ns"] = 9_000_000.into();
    let p = write(dir.path(), "edited.json", &v);
    let mut got = Vec::new();
    read_run(&p, |c| {
        got.push(c.latency);
        Ok(())
    })
    .unwrap();
    assert_eq!(got[0].as_ref(), Some(&kept));
    type Edit = fn(&mut serde_json::Value);
    let refused: [(&str, Edit); 4] = [
        (
            "cases[0].round_trips: 2001, where its histogram holds 2000",
            |v| v["cases"][0]["round_trips"] = 2001.into(),
        ),
        ("cases[0].latency_histogram: bounds 1–", |v| {
            v["cases"][0]["latency_histogram"]["highest_ns"] = u64::MAX.into()
        }),
        ("cases[0].latency_histogram: its counts add up past", |v| {
            v["cases"][0]["latency_histogram"]["counts"] =
                serde_json::json!([[1000, u64::MAX], [2000, u64::MAX]])
        }),
        ("cases[0].latency_histogram: a count is past", |v| {
            v["cases"][0]["latency_histogram"]["counts"][0][0] = 20_000_000_000u64.into()
        }),
    ];
    for (said, edit) in refused {
        let mut v = v.clone();
        edit(&mut v);
        let p = write(dir.path(), "bad.json", &v);
        let e = read_run(&p, |_| Ok(())).unwrap_err();
        assert!(e.contains(said), "{said}: {e}");
    }
}

/// A sync case's figures are its series': a cycles/s edited alone is taken
/// again from the series, and a figure of a side with no series is refused.
#[test]
fn sync_figures_are_the_series_own() {
    use ipcperf_core::record::SyncSeries;
    let dir = tempfile::tempdir().unwrap();
    let mut r = crate::testdata::run();
    let mut c = crate::testdata::sync_case("futex", 1000, 1200, 2000, 5000);
    let series = |ns: u64| SyncSeries {
        cycles: 1_000_000,
        elapsed_ns: ns,
        tare_ns: 1_000_000,
        atomic_ns: Some(10_000_000),
        cost: None,
        partner_cost: None,
    };
    let s = c.sync.as_mut().unwrap();
    s.request_release_series = vec![series(40_000_000), series(41_000_000), series(39_000_000)];
    ipcperf_core::sync::refigure(s);
    let kept = s.clone();
    // 40 ns gross, 1 ns of tare off: 39 ns a cycle.
    assert_eq!(kept.request_release_ns, Some(39.0));
    r.cases = vec![c];
    let mut v = serde_json::to_value(&r).unwrap();
    v["cases"][0]["sync"]["request_release_per_sec"] = 9e12.into();
    v["cases"][0]["sync"]["request_release_ns"] = 0.0001.into();
    let p = write(dir.path(), "edited.json", &v);
    let mut got = Vec::new();
    read_run(&p, |c| {
        got.push(c.sync);
        Ok(())
    })
    .unwrap();
    assert_eq!(got[0].as_ref(), Some(&kept));
    v["cases"][0]["sync"]["set_clear_per_sec"] = 5e6.into();
    let p = write(dir.path(), "no-series.json", &v);
    let e = read_run(&p, |_| Ok(())).unwrap_err();
    assert!(
        e.contains("cases[0].sync.set_clear: 5000000, with no series"),
        "{e}"
    );
}
