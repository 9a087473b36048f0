//! The console while a run goes on and when it ends: export files written as
//! cases finish, tables that fit an 80-column terminal, and each table printed as
//! soon as its cases are done.

use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;
use assert_cmd::prelude::*;

mod common;
use common::{bad_input, fits_80_columns, on_80_columns};

fn ipcperf() -> assert_cmd::Command {
    let mut c = cargo_bin_cmd!("ipcperf");
    c.env("IPCPERF_NO_SAVE", "1");
    c
}

/// --export-json/csv/markdown write the run's files (rewritten as each case ends);
/// a file in a directory that does not exist is refused before anything runs.
#[test]
fn export_files_during_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (j, c, m) = (
        dir.path().join("r.json"),
        dir.path().join("r.csv"),
        dir.path().join("r.md"),
    );
    ipcperf()
        .args([
            "run", "pipe", "unix", "--sizes", "4k", "--count", "50", "--repeat", "1",
        ])
        .arg("--export-json")
        .arg(&j)
        .arg("--export-csv")
        .arg(&c)
        .arg("--export-markdown")
        .arg(&m)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    assert_eq!(v["cases"].as_array().unwrap().len(), 2);
    assert_eq!(v["complete"], true);
    assert_eq!(std::fs::read_to_string(&c).unwrap().lines().count(), 3);
    assert!(std::fs::read_to_string(&m).unwrap().contains("| block |"));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 3, "no temporary file left: {left:?}");
    let json = common::missing("r.json");
    bad_input(
        &["run", "pipe", "--count", "5", "--export-json", &json],
        &format!("cannot write {json}"),
    );
    // export and completions: a file that cannot be written is bad input too
    // (it was a failure, 1, for export), said before the history is read.
    let csv = common::missing("r.csv");
    let db = common::missing("h.db");
    bad_input(
        &["export", "--db", &db, "--format", "csv", "-o", &csv],
        &format!("cannot write {csv}"),
    );
    let bash = common::missing("ipcperf.bash");
    bad_input(
        &["completions", "bash", "-o", &bash],
        &format!("cannot write {bash}"),
    );
    // A heatmap that cannot be written is said before a pair is measured.
    let t0 = std::time::Instant::now();
    let png = common::missing("m.png");
    bad_input(
        &["matrix", "pipe", "--heatmap", &png],
        &format!("cannot write {png}"),
    );
    assert!(t0.elapsed() < Duration::from_secs(2), "it measured first");
}

/// On an 80-column terminal (a pseudo-terminal made by `script`), the tables fit:
/// spare columns go first (named in a note), then cells wrap. Through a pipe,
/// every column stays.
#[test]
fn tables_fit_an_80_column_terminal() {
    for cmd in [
        "list",
        "latency pipe --mode threads --count 300 --repeat 1 --one-way --half-rtt --no-save -q",
        "run pipe --mode threads --sizes 64,4k --count 50 --repeat 1 --pin 0,0 --pin same --no-save -q",
    ] {
        let Some(out) = on_80_columns(cmd) else {
            return;
        };
        assert!(out.status.success(), "{cmd}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        // `list` is plain lines; the others' tables have borders.
        let plain = cmd == "list";
        let widest = text
            .lines()
            .filter(|l| plain || l.contains('│') || l.contains('┌'))
            .map(|l| l.trim_end_matches('\r').chars().count())
            .max()
            .unwrap_or(0);
        assert!(widest > 20 && widest <= 80, "{cmd}: {widest} columns:\n{text}");
    }
    // A pipe gets every column.
    let out = ipcperf()
        .args([
            "latency", "pipe", "--mode", "threads", "--count", "300", "--repeat", "1", "-q",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("p99.99"));
    // And ASCII lines, not Unicode boxes (a terminal's, above): a file or a pipe
    // keeps them whatever reads it.
    assert!(text.lines().any(|l| l.starts_with("+---")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("| pipe")), "{text}");
    assert!(!text.contains(['│', '┆', '┌', '└', '╞', '═']), "{text}");
}

/// On an 80-column terminal every line fits, standard error's warnings too
/// (wrapped at words under a hanging indent), and the latency table keeps its
/// counters by putting the widest columns' words on lines of their own: no word
/// is split ("processe" "s" used to be), no figure.
#[test]
fn every_line_fits_an_80_column_terminal_and_no_word_is_split() {
    let Some(out) = on_80_columns("latency pipe unix --count 300 --repeat 1 --no-save 2>&1") else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    let text = fits_80_columns(&out);
    // The mode both rows share is said once, whole, in the title (a column
    // where rows differ); never "processe" over "s".
    assert!(
        text.contains(" · processes · ") || text.contains("┆ processes ┆"),
        "{text}"
    );
    assert!(text.contains("switches/"), "{text}");
}

/// Two short runs (`run ARGS -d 20ms -q`) kept in `db`.
fn two_runs(db: &std::path::Path, args: &[&str]) {
    runs(db, args, 2)
}

/// `n` short runs (`run ARGS -d 20ms -q`) kept in `db`.
fn runs(db: &std::path::Path, args: &[&str], n: usize) {
    for _ in 0..n {
        let ok = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .arg("run")
            .args(args)
            .args(["-d", "20ms", "-q", "--db"])
            .arg(db)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    }
}

/// `compare`'s heading and title (a sentence each, past 80 columns) wrap at
/// words on a terminal like its notes.
#[test]
fn a_comparison_s_heading_fits_an_80_column_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    two_runs(&db, &["pipe", "--sizes", "4k"]);
    let Some(out) = on_80_columns(&format!("compare 1 2 --db {} 2>&1", db.display())) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    let text = fits_80_columns(&out);
    assert!(text.starts_with("Comparing run 1 with run 2: "), "{text}");
    assert!(text.contains("\n  "), "{text}");
}

/// `trend` on a terminal: its heading counts runs (two runs of two cases, not
/// "4 runs"); the table keeps a date and a figure whole (it split "2026-11-2" from
/// its "9") and says one host once; of several cases, a table for each under its
/// name, a run a line; as markdown, every row is one line (a cell wrapped over
/// lines broke the markdown table).
#[test]
fn a_trend_on_a_terminal_counts_runs_and_keeps_its_markdown_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // Three: the newest run judged, its verdict said.
    runs(
        &db,
        &["pipe", "--sizes", "64,64k", "-r", "2", "--pin", "0,0"],
        3,
    );
    let Some(out) = on_80_columns(&format!("trend pipe --db {}", db.display())) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    let text = fits_80_columns(&out);
    assert!(text.starts_with("3 runs of 2 cases on "), "{text}");
    let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    assert!(text.contains(&today), "{today}:\n{text}");
    assert!(!text.contains("host"), "{text}");
    // A table for each case under its name, a run a line (the name on every
    // row made each row six lines tall at 80 columns).
    let names = text
        .lines()
        .filter(|l| l.starts_with("stream pipe"))
        .count();
    assert_eq!(names, 2, "{text}");
    let dated: Vec<&str> = text.lines().filter(|l| l.contains(&today)).collect();
    assert_eq!(dated.len(), 6, "{text}");
    // The date, its time and the figures on one line (the newest run's verdict
    // in a column wrapped every row's time under its date).
    let timed = |l: &&&str| {
        let at = l.find(&today).unwrap() + today.len();
        let t = &l.as_bytes()[at..];
        t.len() > 6 && t[0] == b' ' && t[3] == b':' && t[1..3].iter().all(u8::is_ascii_digit)
    };
    assert!(
        dated.iter().all(|l| timed(&l) && l.contains(" MB/s")),
        "{text}"
    );
    // Each case's newest run judged, on a line of its own above its table.
    let newest = text
        .lines()
        .filter(|l| l.starts_with("newest, run 3: "))
        .count();
    assert_eq!(newest, 2, "{text}");
    let out = on_80_columns(&format!(
        "trend pipe --format markdown --db {}",
        db.display()
    ))
    .unwrap();
    let md = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    // A header, its rule, and a row for each case in each run.
    assert_eq!(rows.len(), 2 + 6, "{md}");
    assert!(rows.iter().skip(2).all(|r| r.contains(&today)), "{md}");
}

/// `run` prints each mechanism's table as soon as its last case has finished: the
/// first table is on standard output while the second mechanism is still running,
/// and no table is printed twice.
#[test]
fn tables_are_printed_as_their_cases_finish() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args([
            "run",
            "pipe",
            "tcp",
            "--mode",
            "threads",
            "--sizes",
            "4k",
            "-d",
            "1500ms",
            "-r",
            "2",
            "--no-save",
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let mut running_when_pipe_table_ended = None;
    for l in lines.by_ref() {
        let l = l.unwrap();
        // The pipe table ends with its bottom border (into a pipe, ASCII: the
        // "+-" line after a row).
        let end = bottom(&l, &seen) && seen.iter().any(|s: &String| s.starts_with("pipe · "));
        seen.push(l);
        if end {
            running_when_pipe_table_ended = Some(child.try_wait().unwrap().is_none());
            break;
        }
    }
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        running_when_pipe_table_ended,
        Some(true),
        "the pipe table came only at the end: {seen:?}"
    );
    let all: Vec<&String> = seen.iter().chain(rest.iter()).collect();
    for title in [
        "pipe · threads · touch",
        "tcp · threads · touch",
        "Ranking at 4 KiB",
    ] {
        let n = all.iter().filter(|l| l.starts_with(title)).count();
        assert_eq!(n, 1, "{title} printed {n} times: {all:?}");
    }
    assert_eq!(
        all.iter().filter(|l| l.starts_with("ipcperf ")).count(),
        1,
        "one heading"
    );
}

/// A table's bottom border as ASCII draws it into a pipe: a "+-" line right
/// after a row (the top border follows the title, the header's rule is "+=").
fn bottom(line: &str, seen: &[String]) -> bool {
    line.starts_with("+-") && seen.last().is_some_and(|p| p.starts_with('|'))
}

/// Run ipcperf with `args`; read its standard output until the first table
/// that `is_first` recognizes (by one of its lines) has ended. Returns whether
/// ipcperf was still running then, and every line it printed.
fn first_table_while_running(args: &[&str], is_first: fn(&str) -> bool) -> (bool, Vec<String>) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(args)
        .args(["--no-save", "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen: Vec<String> = Vec::new();
    let mut running = false;
    for l in lines.by_ref() {
        let l = l.unwrap();
        let end = bottom(&l, &seen) && seen.iter().any(|s| is_first(s));
        seen.push(l);
        if end {
            running = child.try_wait().unwrap().is_none();
            break;
        }
    }
    seen.extend(lines.map(|l| l.unwrap()));
    assert!(child.wait().unwrap().success(), "{seen:?}");
    (running, seen)
}

/// `latency` with several cases per mechanism prints each mechanism's table as
/// its last case ends; `sync` each mode's. One heading each, no table twice.
#[test]
fn latency_and_sync_tables_are_printed_as_their_cases_finish() {
    let (running, all) = first_table_while_running(
        &[
            "latency", "pipe", "tcp", "--sizes", "64,512", "-d", "250ms", "-r", "2",
        ],
        |l| l.starts_with("| pipe"),
    );
    assert!(running, "the pipe table came only at the end: {all:?}");
    let titles = all
        .iter()
        .filter(|l| l.starts_with("Round-trip latency"))
        .count();
    assert_eq!(titles, 2, "{all:?}");
    assert_eq!(all.iter().filter(|l| l.starts_with("| pipe")).count(), 2);
    assert_eq!(all.iter().filter(|l| l.starts_with("| tcp")).count(), 2);
    // -q: the tables alone, no banner naming the machine.
    assert_eq!(all.iter().filter(|l| l.starts_with("ipcperf ")).count(), 0);

    let (running, all) = first_table_while_running(
        &[
            "sync",
            "futex",
            "--mode",
            "threads,processes",
            "-d",
            "250ms",
            "-r",
            "2",
        ],
        |l| l.contains("partner: threads"),
    );
    assert!(running, "the threads table came only at the end: {all:?}");
    for mode in ["threads", "processes"] {
        let n = all
            .iter()
            .filter(|l| l.contains(&format!("partner: {mode}")))
            .count();
        assert_eq!(n, 1, "{mode}: {all:?}");
    }
    assert_eq!(all.iter().filter(|l| l.starts_with("ipcperf ")).count(), 0);
}

/// What is not a run goes out one way: `list`'s CSV is CSV (a summary with a
/// comma or a quote stays one field), its markdown is a markdown table, and the
/// metrics formats are refused in one wording by every such command.
#[test]
fn lists_and_tables_that_are_not_runs_come_out_alike() {
    let csv = ipcperf()
        .args(["list", "--format", "csv"])
        .output()
        .unwrap();
    assert!(csv.status.success());
    let mut r = csv::Reader::from_reader(&csv.stdout[..]);
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        ["name", "modes", "named_objects", "built_on", "summary"]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert!(rows.len() > 10);
    assert!(
        rows.iter().any(|x| &x[0] == "tcp" && x[4].contains(", ")),
        "{rows:?}"
    );
    let md = ipcperf()
        .args(["list", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    let mut lines = md.lines();
    assert!(
        lines.next().unwrap().starts_with("| mechanism | modes |"),
        "{md}"
    );
    assert_eq!(lines.next().unwrap(), "|---|---|---|---|---|");
    assert!(
        lines.all(|l| l.starts_with("| ") && l.ends_with(" |")),
        "{md}"
    );
    let db = common::missing("h.db");
    for args in [
        &["list", "--format", "openmetrics"][..],
        &["list", "shm", "--format", "prometheus"],
        &["topology", "--format", "prometheus"],
        &["history", "--format", "openmetrics", "--db", &db],
        &[
            "pattern",
            "--size-dist",
            "fixed:1",
            "--gaps",
            "fixed:1k",
            "--format",
            "prometheus",
        ],
    ] {
        let out = ipcperf().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is for a run's figures"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// `fleet` on a terminal: of several cases, a table for each under its name
/// (the name on every row left the verdict a word a line at 80 columns).
#[test]
fn a_fleet_on_a_terminal_names_each_case_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.db");
    two_runs(
        &db,
        &["pipe", "--sizes", "64,64k", "-r", "2", "--pin", "0,0"],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(["export", "last", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Three more hosts of the same CPU model and kernel: the first's peers.
    for host in ["node-a.example", "node-b.example", "node-c.example"] {
        let mut r = run.clone();
        r["machine"]["hostname"] = host.into();
        let path = dir.path().join(format!("{host}.json"));
        std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
        let ok = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .args(["import", "-q", "--db"])
            .arg(&db)
            .arg(&path)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    }
    let Some(out) = on_80_columns(&format!("fleet --all-cases --db {}", db.display())) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    let text = fits_80_columns(&out);
    let names = text
        .lines()
        .filter(|l| l.starts_with("stream pipe"))
        .count();
    assert_eq!(names, 2, "{text}");
    // No case column: each table's header starts with the host's.
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('│') && l.contains("figure"))
        .collect();
    assert_eq!(heads.len(), 2, "{text}");
    assert!(heads.iter().all(|l| l.starts_with("│ host ")), "{text}");
    // Each host's row starts with its name whole.
    for host in ["node-a.example", "node-b.example", "node-c.example"] {
        assert_eq!(text.matches(host).count(), 2, "{host}:\n{text}");
    }
}

/// The bar says what it counts: series where they are taken in rounds (it said
/// "240/240 cases" of the default suite's 48 cases), cases where each case
/// runs whole.
#[test]
fn the_progress_bar_names_what_it_counts() {
    for (cmd, what) in [
        (
            "run pipe --sizes 64,4k -d 100ms --no-save -q",
            "/10 series, ETA",
        ),
        (
            "run pipe --sizes 64 --pin 0,0 -d 100ms --no-save -q",
            "/1 cases, ETA",
        ),
    ] {
        let Some(out) = on_80_columns(&cmd.replace(" -q", "")) else {
            return;
        };
        assert!(out.status.success(), "{cmd}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let bars: Vec<&str> = text
            .split(['\r', '\n'])
            .filter(|l| l.contains("ETA"))
            .collect();
        assert!(!bars.is_empty(), "{cmd}: no bar drawn:\n{text}");
        assert!(bars.iter().all(|l| l.contains(what)), "{cmd}: {bars:?}");
    }
}

/// `history` on a 60-column terminal: every word whole (the empty label
/// column and the zone in every row took the room: "measu/red", "com/ple/te,");
/// a label column comes back once a run has a label, every row still three lines
/// (was four: "comp"/"lete"/","/"0 s"). At 80 columns a run of six mechanisms is
/// one line (its seconds and a fourth name broke every row in two).
#[test]
fn the_history_fits_60_columns_with_its_words_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let run = |label: Option<&str>| {
        let mut c = ipcperf();
        c.env_remove("IPCPERF_NO_SAVE");
        let six = "run pipe fifo unix tcp udp sysv-msg --sizes 64 -d 10ms -r 1 -q";
        c.args(six.split(' ')).arg("--db").arg(&db);
        c.args(label.map(|l| ["--label", l]).iter().flatten());
        c.assert().success();
    };
    run(None);
    run(None);
    let on = |cols: u16| {
        let bin = env!("CARGO_BIN_EXE_ipcperf");
        let line = format!(
            "stty rows 40 cols {cols}; {bin} history --db {}",
            db.display()
        );
        let out = Command::new("script")
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).replace('\r', ""))
    };
    let Ok(text) = on(60) else {
        eprintln!("skipped: `script` (util-linux) is not installed: no pseudo-terminal to test in");
        return;
    };
    let table: Vec<&str> = text.lines().filter(|l| l.contains('┆')).collect();
    assert!(table.iter().all(|l| l.chars().count() <= 60), "{text}");
    for word in ["measured", "complete,", "(UTC)"] {
        assert!(text.contains(word), "{word} split or missing:\n{text}");
    }
    assert!(!text.contains("label"), "{text}");
    let wide = on(80).unwrap();
    let table: Vec<&str> = wide.lines().filter(|l| l.contains('┆')).collect();
    assert!(table.iter().all(|l| l.chars().count() <= 80), "{wide}");
    assert_eq!(table.len(), 1 + 2, "a header and a line a run:\n{wide}");
    run(Some("nightly"));
    let text = on(60).unwrap();
    // Its header is two lines tall already ("started" over "(UTC)"): the
    // label and its name may break there rather than cost every row a line.
    assert!(text.contains("labe") && text.contains("nigh"), "{text}");
    let table: Vec<&str> = text.lines().filter(|l| l.contains('┆')).collect();
    assert!(table.iter().all(|l| l.chars().count() <= 60), "{text}");
    assert!(table.len() <= 2 + 3 * 3, "{text}");
}

/// `-q` on a terminal: the results alone, no progress (pipeline drew its
/// rounds there: "pipeline: round 1/1: gen | sink").
#[test]
fn quiet_on_a_terminal_draws_no_progress() {
    for (cmd, result) in [
        ("pipeline -q -b 4M -r 1 --no-save", "gen | sink"),
        ("run pipe --sizes 64,4k -d 100ms --no-save -q", "pipe"),
    ] {
        let Some(out) = on_80_columns(cmd) else {
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{cmd}: {text}");
        assert!(text.contains(result), "{cmd}: no results:\n{text}");
        assert!(
            !text.contains("round 1/") && !text.contains("ETA"),
            "{cmd}: progress under -q:\n{text}"
        );
    }
}

/// A host name with a control character in a history row (written by another
/// writer of a shared history, or a hand-edited file: import refuses such names,
/// a row in the database was never checked) is shown escaped on stdout, in the
/// table and in CSV: the terminal does not obey it.
#[test]
fn a_control_character_in_a_history_row_is_written_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    common::cmd(
        &db,
        &[
            "run", "pipe", "--mode", "threads", "--sizes", "64", "--count", "50", "--repeat", "1",
        ],
    )
    .assert()
    .success();
    let sql = rusqlite::Connection::open(&db).unwrap();
    let changed = sql
        .execute(
            "UPDATE runs SET hostname = 'ev' || char(27) || '[2Jil' || char(13) || 'x'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(sql);
    for format in ["table", "csv"] {
        let text = common::stdout(&mut common::cmd(&db, &["history", "--format", format]));
        assert!(!text.contains(['\u{1b}', '\r']), "{format}: {text:?}");
        assert!(text.contains(r"ev\u{1b}[2Jil\rx"), "{format}: {text:?}");
    }
}
