//! Placement by topology through the binary: `ipcperf topology` on recorded sysfs
//! trees and on this machine, `--pin CLASS` and `--placements all`, the
//! core-to-core `matrix` (it runs here, on every CPU pair this machine has), and
//! `--background` load.

use std::path::{Path, PathBuf};
use std::process::Command;

fn ipcperf() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ipcperf"));
    c.env("IPCPERF_NO_SAVE", "1");
    c
}

/// A recorded tree (`ipcperf-core/tests/fixtures/topology/NAME.sysfs`) laid out
/// under a fresh directory.
fn fixture(name: &str, dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ipcperf-core/tests/fixtures/topology")
        .join(format!("{name}.sysfs"));
    let root = dir.join(name);
    for line in std::fs::read_to_string(src).unwrap().lines() {
        let (p, content) = line.split_once(':').unwrap();
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{}\n", content.trim())).unwrap();
    }
    root
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = ipcperf().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn classes(v: &serde_json::Value) -> Vec<(String, u64, u64)> {
    v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["class"].as_str().unwrap().to_string(),
                c["cpus"][0].as_u64().unwrap(),
                c["cpus"][1].as_u64().unwrap(),
            )
        })
        .collect()
}

/// On every recorded machine, exactly the classes it has, each with its pair; the
/// rest listed as absent.
#[test]
fn topology_finds_the_classes_of_each_recorded_machine() {
    let dir = tempfile::tempdir().unwrap();
    type Pairs = &'static [(&'static str, u64, u64)];
    let want: &[(&str, Pairs)] = &[
        ("vm-2cpu", &[("same-cpu", 0, 0), ("shared-l3", 0, 1)]),
        (
            "intel-2s-smt",
            &[
                ("same-cpu", 0, 0),
                ("smt-sibling", 0, 8),
                ("shared-l3", 0, 1),
                ("other-socket", 0, 4),
            ],
        ),
        (
            "epyc-ccx",
            &[
                ("same-cpu", 0, 0),
                ("smt-sibling", 0, 8),
                ("shared-l3", 0, 1),
                ("other-l3", 0, 2),
                ("other-numa", 0, 4),
            ],
        ),
        (
            "offline-cpuset",
            &[
                ("same-cpu", 0, 0),
                ("smt-sibling", 0, 4),
                ("shared-l3", 0, 1),
            ],
        ),
        // Recorded in a QEMU guest with two nodes per socket (sub-NUMA clusters).
        (
            "qemu-numa16",
            &[
                ("same-cpu", 0, 0),
                ("smt-sibling", 0, 1),
                ("shared-l3", 0, 2),
                ("other-numa", 0, 4),
                ("other-socket", 0, 8),
            ],
        ),
    ];
    for (name, classes_want) in want {
        let root = fixture(name, dir.path());
        let v = json(&[
            "topology",
            "--sysfs",
            root.to_str().unwrap(),
            "--format",
            "json",
        ]);
        let got = classes(&v);
        let want: Vec<(String, u64, u64)> = classes_want
            .iter()
            .map(|(c, a, b)| (c.to_string(), *a, *b))
            .collect();
        assert_eq!(got, want, "{name}");
        let absent = v["absent"].as_array().unwrap().len();
        assert_eq!(
            absent + got.len(),
            7,
            "{name}: every class present or absent"
        );
    }
    // The restricted one names what it leaves out.
    let root = fixture("offline-cpuset", dir.path());
    let out = ipcperf()
        .args(["topology", "--sysfs", root.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("4 usable CPUs (0-1,4-5)"), "{text}");
    assert!(text.contains("offline: 3;"), "{text}");
    assert!(text.contains("(cpuset): 2,6-7"), "{text}");
    // A directory that is no sysfs tree is bad input.
    let out = ipcperf()
        .args(["topology", "--sysfs", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `--pin CLASS` runs the class's pair and records both CPUs and the class; a
/// class this machine lacks is one line and exit 2; `--placements all` runs one
/// pair of every class this machine has.
#[test]
fn pin_by_class_and_all_placements() {
    let here = json(&["topology", "--format", "json"]);
    let present = classes(&here);
    let (class, w, r) = present.last().unwrap().clone();
    let v = json(&[
        "latency", "pipe", "--mode", "threads", "--count", "200", "--repeat", "1", "--pin", &class,
        "--format", "json",
    ]);
    let p = &v["cases"][0]["placement"];
    assert_eq!(p["label"], class.as_str());
    assert_eq!(
        (p["writer_cpu"].as_u64(), p["reader_cpu"].as_u64()),
        (Some(w), Some(r))
    );
    // The run keeps the machine's topology.
    assert!(!v["machine"]["topology"]["cpus"]
        .as_array()
        .unwrap()
        .is_empty());

    let absent = here["absent"].as_array().unwrap()[0]
        .as_str()
        .unwrap()
        .to_string();
    let out = ipcperf()
        .args(["latency", "pipe", "--count", "10", "--pin", &absent])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("no {absent} pair")), "{err}");
    assert!(out.stdout.is_empty());
    // A pair of three CPUs, a class with a CPU: said as the pair it is not.
    for (pin, says) in [
        ("0,0,0", "'0,0,0': a pair is two CPUs, A,B"),
        (
            "same-cpu,x",
            "'same-cpu,x': 'same-cpu' is not a CPU number (A,B: two",
        ),
    ] {
        let out = ipcperf()
            .args(["latency", "pipe", "--count", "10", "--pin", pin])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{pin}: {err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{pin}: {err}"
        );
    }

    let v = json(&[
        "latency",
        "pipe",
        "--mode",
        "threads",
        "--count",
        "200",
        "--repeat",
        "1",
        "--placements",
        "all",
        "--format",
        "json",
    ]);
    let labels: Vec<&str> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["placement"]["label"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = present.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(labels, want);

    // The table shows the class with both CPUs.
    let out = ipcperf()
        .args([
            "latency", "pipe", "--mode", "threads", "--count", "200", "--repeat", "1", "--pin",
            "0,0",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("same-cpu 0→0"));
}

/// The matrix runs here on every ordered pair of distinct CPUs, says its estimate
/// first, prints the table, draws the heatmap, and is saved like a run.
#[test]
fn matrix_of_every_cpu_pair() {
    let here = json(&["topology", "--format", "json"]);
    let n = here["topology"]["cpus"].as_array().unwrap().len();
    if n < 2 {
        eprintln!("skipped: this machine lets the test use one CPU; a matrix needs two");
        return;
    }
    let cpus = if n > 4 {
        "0-3".to_string()
    } else {
        format!("0-{}", n - 1)
    };
    let k = cpus.split('-').nth(1).unwrap().parse::<usize>().unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("m.png");
    let db = dir.path().join("h.db");
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .env_remove("IPCPERF_NO_SAVE")
        .args([
            "matrix",
            "pipe",
            "--mode",
            "threads",
            "--duration",
            "20ms",
            "--cpus",
            &cpus,
            "--heatmap",
        ])
        .arg(&png)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("matrix of {} pairs, about", k * (k - 1))),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("writer CPU down, reader CPU across"),
        "{text}"
    );
    assert!(text.contains("median p50"), "{text}");
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
    // Saved: plot draws its heatmap again.
    let again = dir.path().join("again.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(["plot", "last", "-o"])
        .arg(&again)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::read_to_string(&again)
        .unwrap()
        .contains("p50 round trip, pipe threads 64 B"));
    // One mechanism that carries round trips, two CPUs at least.
    for bad in [
        vec!["matrix", "file"],
        vec!["matrix", "pipe", "--cpus", "0"],
        vec!["matrix", "pipe", "--cpus", "0,4096"],
    ] {
        let out = ipcperf().args(&bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
    }
}

/// A background load runs on CPUs the sides leave free, is named in every result,
/// and is refused when no CPU is free or the sides are not pinned.
#[test]
fn background_load_on_free_cpus() {
    let here = json(&["topology", "--format", "json"]);
    let n = here["topology"]["cpus"].as_array().unwrap().len();
    let out = ipcperf()
        .args(["latency", "pipe", "--count", "10", "--background", "cpu:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "unpinned: {out:?}");
    if n < 2 {
        eprintln!("skipped: one CPU here, none left for a hog");
        return;
    }
    let v = json(&[
        "latency",
        "pipe",
        "--mode",
        "threads",
        "--count",
        "500",
        "--repeat",
        "1",
        "--pin",
        "0,0",
        "--background",
        "cpu:1",
        "--format",
        "json",
    ]);
    let bg = v["cases"][0]["options"]["background"].as_str().unwrap();
    assert!(bg.starts_with("cpu:1 on ") && !bg.ends_with(" 0"), "{bg}");
    let v = json(&[
        "run",
        "pipe",
        "--mode",
        "threads",
        "--count",
        "50",
        "--repeat",
        "1",
        "--pin",
        "0,0",
        "--background",
        "memory:1",
        "--format",
        "json",
    ]);
    assert!(v["cases"][0]["options"]["background"]
        .as_str()
        .unwrap()
        .starts_with("memory:1 on "));
    // More hogs than free CPUs: refused, naming how many there are.
    let too_many = format!("cpu:{n}");
    let out = ipcperf()
        .args([
            "latency",
            "pipe",
            "--count",
            "10",
            "--pin",
            "0,0",
            "--background",
            &too_many,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ask for at most that many"));
    // Every CPU taken by the sides: nothing left for a hog.
    let all = format!("0-{}", n - 1);
    let mut pins = Vec::new();
    for c in 0..n {
        pins.push("--pin".to_string());
        pins.push(format!("{c},{c}"));
    }
    let out = ipcperf()
        .args(["latency", "pipe", "--count", "10", "--background", "cpu:1"])
        .args(&pins)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{all}: {out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no CPU is left for a hog"));
    for bad in ["cpu", "gpu:1", "cpu:0", "memory:x"] {
        let out = ipcperf()
            .args(["latency", "pipe", "--pin", "0,0", "--background", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}

/// `topology` and `list` fit a 50-column terminal: lines wrapped at words under
/// a hanging indent (the idle line was 134 columns on any terminal, the limits'
/// values ran past the edge), the same words as into a pipe, where a line stays
/// whole for grep. (This machine's idle line moves while other tests hold a
/// latency request: the words are compared on a recorded tree.)
#[test]
fn topology_and_list_fit_a_narrow_terminal() {
    let bin = env!("CARGO_BIN_EXE_ipcperf");
    let dir = tempfile::tempdir().unwrap();
    let tree = fixture("offline-cpuset", dir.path());
    let recorded = format!("topology --sysfs {}", tree.display());
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    for cmd in ["topology", recorded.as_str(), "list"] {
        let Ok(out) = Command::new("script")
            .args(["-q", "-e", "-c"])
            .arg(format!("stty rows 60 cols 50; {bin} {cmd}"))
            .arg("/dev/null")
            .env("IPCPERF_NO_SAVE", "1")
            .output()
        else {
            eprintln!("skipped: `script` (util-linux) is not installed: no pseudo-terminal");
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
        assert!(out.status.success(), "{cmd}: {text}");
        let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 50).collect();
        assert!(long.is_empty(), "{cmd}: {long:?}");
        let piped = ipcperf().args(cmd.split(' ')).output().unwrap();
        let piped = String::from_utf8_lossy(&piped.stdout).into_owned();
        if cmd == recorded {
            assert_eq!(words(&text), words(&piped));
            assert!(piped.lines().any(|l| l.chars().count() > 50), "{piped}");
        } else if cmd == "list" {
            // The mechanisms' table is laid out for the width; the limits alike.
            let limits = |t: &str| words(t.split_once("Limits on").unwrap().1);
            assert_eq!(limits(&text), limits(&piped));
        }
    }
}

/// `topology --format markdown` is Markdown: the details a list, the CPUs and
/// the placement classes tables (it was the terminal's lines, which Markdown
/// runs together into one paragraph).
#[test]
fn topology_in_markdown_is_lists_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    let tree = fixture("offline-cpuset", dir.path());
    let out = ipcperf()
        .args(["topology", "--cpus", "--format", "markdown", "--sysfs"])
        .arg(&tree)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.lines().any(|l| l.starts_with("- offline: ")), "{md}");
    assert!(
        md.contains("| CPU | package | die | core | node | SMT | L2 | L3 |\n|---|"),
        "{md}"
    );
    assert!(
        md.contains("| class | CPUs | means |\n|---|---|---|\n| same-cpu | "),
        "{md}"
    );
    // A row a CPU and a row a class, each table under its header.
    let table_rows = md.lines().filter(|l| l.starts_with('|')).count();
    let cpus = json(&[
        "topology",
        "--sysfs",
        tree.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let n = cpus["topology"]["cpus"].as_array().unwrap().len();
    let classes = classes(&cpus).len();
    assert_eq!(table_rows, 2 + n + 2 + classes, "{md}");
}

/// A wake-up mechanism's matrix runs at the size it carries, as its latency
/// does (signal: 4 bytes; it tried 64 on every pair, each refused, exit 2), and
/// a size it cannot carry is one line before any pair runs.
#[test]
fn a_signal_matrix_runs_at_its_own_size() {
    let here = json(&["topology", "--format", "json"]);
    if here["topology"]["cpus"].as_array().unwrap().len() < 2 {
        eprintln!("skipped: this machine lets the test use one CPU; a matrix needs two");
        return;
    }
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .args([
                "matrix",
                "signal",
                "--cpus",
                "0,1",
                "-d",
                "10ms",
                "--no-save",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("signal processes 4 B"), "{text}");
    let out = run(&["--sizes", "64"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("signal processes 64 B cannot run") && out.stdout.is_empty(),
        "{err}"
    );
}

/// On a terminal, matrix's "heatmap drawn" line starts a line of its own: it
/// ran on after the progress bar's last frame ("… 2/2 cases … ipcperf: heatmap
/// drawn in …").
#[test]
fn the_heatmap_note_is_not_written_onto_the_progress_bar() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: `script` (util-linux) is not installed: no pseudo-terminal to test in");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("m.png");
    let out = Command::new("script")
        .args(["-q", "-e", "-c"])
        .arg(format!(
            "stty rows 40 cols 80; IPCPERF_NO_SAVE=1 {} matrix pipe --duration 20ms -o {}",
            env!("CARGO_BIN_EXE_ipcperf"),
            png.display()
        ))
        .arg("/dev/null")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let at = text.find("ipcperf: heatmap drawn in ").expect("the note");
    // What precedes it on its line: nothing, or the bar's erase-line.
    let line = &text[text[..at].rfind(['\r', '\n']).map_or(0, |i| i + 1)..at];
    assert!(line.is_empty() || line == "\x1b[2K", "{line:?}");
    assert!(png.exists());
}
