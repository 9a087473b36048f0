//! Every command the README and the book show runs as written: each shell line of
//! their ```sh blocks goes through bash, in a fresh directory with a history and
//! a home of its own and TMPDIR a folder under /tmp (as batch systems give each
//! job), and must exit 0 without a panic.
//!
//! What the test changes, and only that: a measuring command's series are made
//! short (`-n 5 -r 1`, `sync`/`matrix` `-d 10ms`, `advise -d 5ms`, a replayed
//! pattern's `advise --quick`), byte counts
//! of 512M become 8M, and the other machine of `--peer B` is a local `serve`
//! started in the background on a free port. Lines that build or test the
//! project (`cargo`), run the benches, or need a scheduler are not run, and a
//! line that needs root, or a library mechanism this build lacks, is skipped
//! with the reason printed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::md_links;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shell lines of a Markdown file's ```sh blocks: each line a command, its
/// comment lines (a `#` first) left out.
pub fn sh_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            inside = !inside && t.trim_end() == "```sh";
            continue;
        }
        if inside && !t.is_empty() && !t.starts_with('#') {
            out.push(line.trim().to_string());
        }
    }
    out
}

/// Why a line is not run here, if it is not.
fn not_here(line: &str) -> Option<String> {
    for prefix in [
        "cargo ",
        "bench/",
        "packaging/",
        "sbatch ",
        "kubectl ",
        "sudo ",
        "strace ",
    ] {
        if line.starts_with(prefix) {
            return Some(format!(
                "`{}` builds, benches or needs a cluster",
                prefix.trim()
            ));
        }
    }
    if line.contains("--across") && !is_root() {
        return Some("--across needs root".into());
    }
    static BUILT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let built = BUILT.get_or_init(|| {
        Command::new(BIN)
            .args(["list", "--format", "json"])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    });
    for lib in ["iceoryx2", "zmq-ipc", "zmq-tcp", "grpc-uds"] {
        if line.split_whitespace().any(|w| w == lib) && !built.contains(&format!("\"{lib}\"")) {
            return Some(format!("{lib} is not in this build (cargo's --features)"));
        }
    }
    None
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// The flags (with a value) that set a series' length.
const LENGTH_FLAGS: &[&str] = &["-d", "--duration", "-n", "--count", "-r", "--repeat"];

/// One `ipcperf …` segment of a line, its series made short.
fn quick(segment: &str, port: u16) -> String {
    let words: Vec<&str> = segment.split_whitespace().collect();
    let Some(sub) = words.get(1).copied() else {
        return segment.to_string();
    };
    let mut kept: Vec<String> = Vec::new();
    let mut skip = false;
    for w in &words {
        if skip {
            skip = false;
            continue;
        }
        let measuring = matches!(sub, "run" | "latency" | "sync" | "matrix" | "advise");
        if measuring && LENGTH_FLAGS.contains(w) {
            skip = true;
            continue;
        }
        let w = match *w {
            "512M" => "8M".to_string(),
            "B" if kept.last().is_some_and(|k| k == "--peer") => format!("127.0.0.1:{port}"),
            "B:7787" => format!("127.0.0.1:{port}"),
            w => w.to_string(),
        };
        kept.push(w);
    }
    match sub {
        "run" | "latency" => kept.extend(["-n", "5", "-r", "1"].map(String::from)),
        "sync" if !kept.iter().any(|w| w == "--robustness") => {
            kept.extend(["-d", "10ms", "-r", "1"].map(String::from))
        }
        "matrix" => kept.extend(["-d", "10ms"].map(String::from)),
        "replay" if !kept.iter().any(|w| w == "-r") => kept.extend(["-r", "1"].map(String::from)),
        "advise" => {
            let has = |f: &[&str]| kept.iter().any(|w| f.contains(&w.as_str()));
            if has(&["--pattern-file", "--size-dist"]) {
                // A replayed pattern's length is its own (--for): it runs quick.
                if !has(&["--quick"]) {
                    kept.push("--quick".into())
                }
            } else if !has(&["--from-history"]) {
                kept.extend(["-d", "5ms"].map(String::from))
            }
        }
        "pipeline" => {
            if let Some(i) = kept.iter().position(|w| w == "--repeat") {
                kept[i + 1] = "1".into();
            }
        }
        _ => {}
    }
    kept.join(" ")
}

/// The line as the test runs it: each `ipcperf` segment (of a pipeline, before
/// any comment) made quick.
fn rewrite(line: &str, port: u16) -> String {
    let code = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    };
    code.split(" | ")
        .map(|seg| {
            let (body, redirect) = match seg.find(" > ") {
                Some(i) => (&seg[..i], &seg[i..]),
                None => (seg, ""),
            };
            let body = body.trim();
            // Leading `NAME=value` words set the environment of the command after them.
            let mut env = String::new();
            let mut rest = body;
            while let Some((word, tail)) = rest.split_once(' ') {
                let Some((name, _)) = word.split_once('=') else {
                    break;
                };
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
                    break;
                }
                env.push_str(word);
                env.push(' ');
                rest = tail.trim_start();
            }
            let body = if rest.starts_with("ipcperf ") {
                format!("{env}{}", quick(rest, port))
            } else {
                body.to_string()
            };
            format!("{body}{redirect}")
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// A directory under /tmp, removed when dropped.
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("ipcperf-docs-{tag}-"))
        .tempdir_in("/tmp")
        .unwrap()
}

/// Run every shell line of one Markdown file; the failures, each with its output.
fn run_file(rel: &str) {
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    let lines = sh_lines(&text);

    let dir = scratch(&rel.replace('/', "-"));
    let home = dir.path().join("home");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let bindir = Path::new(BIN).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bindir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let port = free_port();
    let mut servers: Vec<Child> = Vec::new();
    let mut failures = Vec::new();
    for line in &lines {
        if let Some(why) = not_here(line) {
            eprintln!("{rel}: skipped `{line}`: {why}");
            continue;
        }
        let cmd = rewrite(line, port);
        let mut c = Command::new("bash");
        c.arg("-c")
            .arg(&cmd)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("HOME", &home)
            .env("TMPDIR", &tmp)
            .env("IPCPERF_DB", dir.path().join("history.db"))
            .env_remove("IPCPERF_NO_SAVE")
            .env("NO_COLOR", "1");
        if cmd.starts_with("ipcperf serve") {
            // The other machine: here, in the background, until the file is done.
            let cmd = format!("{cmd} --listen 127.0.0.1:{port}");
            let mut c2 = Command::new("bash");
            c2.args(["-c", &format!("exec {cmd}")])
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("HOME", &home)
                .env("TMPDIR", &tmp)
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            servers.push(c2.spawn().unwrap());
            std::thread::sleep(Duration::from_millis(300));
            continue;
        }
        let t0 = Instant::now();
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Its output read as it comes: a command that writes more than a pipe
        // holds (64 KiB) would block on it, and read only at its end, never end.
        let drain = |mut from: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = from.read_to_end(&mut buf);
                buf
            })
        };
        let stdout = drain(Box::new(child.stdout.take().unwrap()));
        let stderr = drain(Box::new(child.stderr.take().unwrap()));
        // Bounded: a command that hangs is a failure, not a stuck test.
        let limit = Duration::from_secs(180);
        loop {
            if child.try_wait().unwrap().is_some() || t0.elapsed() > limit {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
        }
        let status = child.wait().unwrap();
        let _ = stdout.join();
        let err = stderr.join().unwrap_or_default();
        let err = String::from_utf8_lossy(&err);
        eprintln!(
            "{rel}: `{cmd}`: {:?} in {:.1} s",
            status.code(),
            t0.elapsed().as_secs_f64()
        );
        if !status.success() || err.contains("panicked") {
            failures.push(format!(
                "`{line}`\n  ran as `{cmd}`: {:?}\n  stderr: {}",
                status.code(),
                err.trim()
            ));
        }
    }
    for mut s in servers {
        let _ = s.kill();
        let _ = s.wait();
    }
    assert!(failures.is_empty(), "{rel}:\n{}", failures.join("\n"));
}

/// A heading's anchor as mdBook and GitHub make it: lower case, spaces to
/// hyphens, only letters, digits, `-` and `_` kept.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The Markdown links `[text](target)` of a text, outside code blocks: their targets.
fn links(text: &str) -> Vec<String> {
    md_links(text).into_iter().map(|(_, t)| t).collect()
}

/// Every link between the README and the book's pages leads to a file that
/// exists and, with `#anchor`, to a heading it has (what mdBook would leave broken).
#[test]
fn internal_links_lead_somewhere() {
    let mut files = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs/src")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let mut broken = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for l in links(&text) {
            if l.contains("://") || l.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match l.split_once('#') {
                Some((a, b)) => (a, Some(b)),
                None => (l.as_str(), None),
            };
            let target = if file.is_empty() {
                f.clone()
            } else {
                f.parent().unwrap().join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {l}: no such file", f.display()));
                continue;
            }
            if let Some(a) = anchor {
                let t = std::fs::read_to_string(&target).unwrap_or_default();
                let found = t
                    .lines()
                    .filter(|h| h.starts_with('#'))
                    .any(|h| slug(h.trim_start_matches('#')) == a);
                if !found {
                    broken.push(format!("{}: {l}: no heading #{a}", f.display()));
                }
            }
        }
    }
    // And the book's table of contents names every page.
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    for f in &files[1..] {
        let name = f.file_name().unwrap().to_string_lossy();
        if name != "SUMMARY.md" && !summary.contains(&format!("({name})")) {
            broken.push(format!("SUMMARY.md does not list {name}"));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert_eq!(
        slug("Two machines (`ipcperf serve`, `--peer`)"),
        "two-machines-ipcperf-serve---peer"
    );
}

/// The noise rule the book states is the code's: wherever a paragraph calls a
/// case noisy past a share ("over 8%", "> 8%", "more than 8%"), that share is
/// `stats::NOISY_SD` (the book said 8% in three places and 20% in one).
#[test]
fn the_book_states_the_noise_rule_the_code_applies() {
    let want = format!("{}%", (ipcperf_core::stats::NOISY_SD * 100.0).round());
    let mut bad = Vec::new();
    for e in std::fs::read_dir(root().join("docs/src")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for para in text.split("\n\n").chain(text.split("\n* ")) {
            let flat = para.split_whitespace().collect::<Vec<_>>().join(" ");
            if !flat.contains("noisy") {
                continue;
            }
            for key in ["over ", "> ", "more than "] {
                for (i, _) in flat.match_indices(key) {
                    let rest = &flat[i + key.len()..];
                    let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                    if !n.is_empty() && rest[n.len()..].starts_with('%') {
                        let got = format!("{n}%");
                        if got != want {
                            bad.push(format!("{}: {got} in \"{flat}\"", p.display()));
                        }
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "noisy is over {want}:\n{}", bad.join("\n"));
}

/// Every Markdown file of the book has a test below (a new chapter must add one).
#[test]
fn every_book_chapter_is_tested() {
    let listed = include_str!("docs.rs");
    for e in std::fs::read_dir(root().join("docs/src")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            assert!(
                listed.contains(&format!("\"docs/src/{name}\"")),
                "docs/src/{name} has no test in tests/docs.rs"
            );
        }
    }
}

#[test]
fn rewrites_keep_the_command_and_shorten_its_series() {
    assert_eq!(
        rewrite("ipcperf run pipe --duration 1s --repeat 3   # a comment", 9),
        "ipcperf run pipe -n 5 -r 1"
    );
    assert_eq!(
        rewrite(
            "ipcperf gen --bytes 512M --seed 7 | ipcperf sink --verify-seed 7 --bytes 512M",
            9
        ),
        "ipcperf gen --bytes 8M --seed 7 | ipcperf sink --verify-seed 7 --bytes 8M"
    );
    assert_eq!(
        rewrite("ipcperf latency tcp --peer B --token-file t", 9),
        "ipcperf latency tcp --peer 127.0.0.1:9 --token-file t -n 5 -r 1"
    );
    assert_eq!(
        rewrite("ipcperf advise --traffic stream --quick -d 1s", 9),
        "ipcperf advise --traffic stream --quick -d 5ms"
    );
    assert_eq!(
        rewrite("IPCPERF_NO_SAVE= IPCPERF_DB=t.db ipcperf latency pipe", 9),
        "IPCPERF_NO_SAVE= IPCPERF_DB=t.db ipcperf latency pipe -n 5 -r 1"
    );
    assert_eq!(
        rewrite("ipcperf advise --from-history --latency p50", 9),
        "ipcperf advise --from-history --latency p50"
    );
    assert_eq!(
        sh_lines("x\n```sh\nipcperf list   # all\n  # more\n```\n```\nnot this\n```\n"),
        vec!["ipcperf list   # all"]
    );
}

macro_rules! doc_tests {
    ($($name:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $name() {
                run_file($file);
            }
        )*
    };
}

doc_tests! {
    readme => "README.md",
    book_introduction => "docs/src/introduction.md",
    book_install => "docs/src/install.md",
    book_examples => "docs/src/examples.md",
    book_reading => "docs/src/reading.md",
    book_methodology => "docs/src/methodology.md",
    book_mechanisms => "docs/src/mechanisms.md",
    book_placement => "docs/src/placement.md",
    book_workloads => "docs/src/workloads.md",
    book_explain => "docs/src/explain.md",
    book_sync => "docs/src/sync.md",
    book_namespaces => "docs/src/namespaces.md",
    book_advise => "docs/src/advise.md",
    book_history => "docs/src/history.md",
    book_fleets => "docs/src/fleets.md",
    book_traffic => "docs/src/traffic.md",
    book_json => "docs/src/json.md",
    book_benchmarks => "docs/src/benchmarks.md",
    book_troubleshooting => "docs/src/troubleshooting.md",
    book_environment => "docs/src/environment.md",
    book_contributing => "docs/src/contributing.md",
    book_summary => "docs/src/SUMMARY.md",
}
