//! The JSON a run is written as, against the schema the book documents (docs/src/json.md) ("The
//! JSON"): every field of every kind of run is named there, and every number
//! either names its unit or is one of the counts, identifiers and ratios listed.

mod common;
use common::run_json;
use std::collections::BTreeMap;

/// The suffixes that name a unit.
const UNITS: &[&str] = &["_ns", "_us", "_ms", "_bytes", "_per_sec"];

/// Numbers without a unit, as the book lists them (docs/src/json.md).
const UNITLESS: &[&str] = &[
    "events",
    "lost_events",
    "share",
    "woken_share",
    "ipi_share",
    "early_wake_share",
    "wakings_per_round_trip",
    "wakeups_unseen",
    "switch_ins_unseen",
    "server_wakeup_seen_share",
    "overhead_ratio",
    "p50_samples",
    "p90_samples",
    "p99_samples",
    "p999_samples",
    "p9999_samples",
    "blocks",
    "bytes",
    "round_trips",
    "round_trips_lost",
    "samples",
    "cycles",
    "count",
    "counts",
    "cpus",
    "cpu",
    "core",
    "die",
    "package",
    "node",
    "l2",
    "l3",
    "smt_siblings",
    "seen_writer_cpu",
    "seen_reader_cpu",
    "writer_cpu",
    "reader_cpu",
    "sent",
    "received",
    "lost",
    "duplicated",
    "reordered",
    "voluntary_switches",
    "involuntary_switches",
    "minor_faults",
    "major_faults",
    "migrations",
    "perf_switches",
    "perf_migrations",
    "perf_faults",
    "cycles",
    "instructions",
    "llc_references",
    "llc_misses",
    "significant_digits",
    "over_range",
    "others_busy_cpus",
    "throttled_periods",
    "schema_version",
    "median_cpu_load",
    "load_1m",
];

/// Maps whose keys are data (sysctl names, option names), not fields.
const MAPS: &[&str] = &["options", "limits", "mitigations", "haltpoll", "differing"];

/// Every field name, with the first path it was seen at and whether it held a
/// number there.
fn walk(v: &serde_json::Value, path: &str, into: &mut BTreeMap<String, (String, bool)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                // A number, or an array of numbers or of number arrays (CPU lists,
                // histogram pairs).
                let num = x.is_number()
                    || x.as_array().is_some_and(|a| {
                        a.iter().any(|y| {
                            y.is_number()
                                || y.as_array()
                                    .is_some_and(|z| z.iter().any(|w| w.is_number()))
                        })
                    });
                let e = into.entry(k.clone()).or_insert((p.clone(), false));
                e.1 |= num;
                if !MAPS.contains(&k.as_str()) {
                    walk(x, &p, into);
                }
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                walk(x, &format!("{path}[]"), into);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_of_every_kind_of_run_is_documented_and_names_its_unit() {
    let runs = [
        &[
            "run", "pipe", "udp", "-n", "200", "--sizes", "4k", "-r", "1", "--verify",
        ][..],
        &[
            "run", "pipe", "--pairs", "2", "-n", "200", "--sizes", "4k", "-r", "1",
        ],
        &[
            "run",
            "pipe",
            "--subscribers",
            "2",
            "-n",
            "200",
            "--sizes",
            "4k",
            "-r",
            "1",
        ],
        &[
            "latency",
            "udp",
            "--one-way",
            "-n",
            "200",
            "--sizes",
            "64",
            "-r",
            "1",
        ],
        &[
            "latency",
            "pipe",
            "--clients",
            "2",
            "--one-way",
            "-n",
            "200",
            "--sizes",
            "64",
        ],
        &[
            "latency", "unix", "--rate", "2000", "-n", "200", "--sizes", "64", "-r", "1",
        ],
        &[
            "sync", "futex", "-d", "100ms", "-r", "1", "--label", "schema",
        ],
        &["pipeline", "-b", "64k", "-c", "4k", "-r", "1"],
        // As root, the explained parts (without the rights, the reason).
        &[
            "latency",
            "pipe",
            "--pin",
            "0,1",
            "--explain",
            "-n",
            "300",
            "-r",
            "1",
        ],
    ];
    let mut fields = BTreeMap::new();
    for args in runs {
        let v = run_json(args);
        assert_eq!(v["schema_version"], 2, "{args:?}");
        walk(&v, "", &mut fields);
    }
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/json.md"
    ))
    .unwrap();
    let mut undocumented = Vec::new();
    let mut no_unit = Vec::new();
    for (k, (path, num)) in &fields {
        if !doc.contains(&format!("`{k}`")) {
            undocumented.push(path.clone());
        }
        if *num && !UNITS.iter().any(|u| k.ends_with(u)) && !UNITLESS.contains(&k.as_str()) {
            no_unit.push(path.clone());
        }
    }
    assert!(
        undocumented.is_empty(),
        "fields the book (docs/src/json.md) does not name: {undocumented:?}"
    );
    assert!(
        no_unit.is_empty(),
        "numbers without a unit suffix: {no_unit:?}"
    );
    // The unitless list is the book's.
    for k in UNITLESS {
        assert!(doc.contains(&format!("`{k}`")), "{k}");
    }
    // Enough was seen for this to mean something.
    assert!(fields.len() > 100, "{}", fields.len());
}
