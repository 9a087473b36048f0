//! Helpers the test binaries share: the binary on a given history, or a run's
//! JSON. Each binary uses some of them.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// `ipcperf <subcommand> --db <db> <args...>`, with the user's history settings unset.
pub fn cmd(db: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ipcperf"));
    c.env_remove("IPCPERF_DB")
        .env_remove("IPCPERF_NO_SAVE")
        .arg(args[0])
        .arg("--db")
        .arg(db)
        .args(&args[1..]);
    c
}

/// Its standard output; the command must succeed.
pub fn stdout(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// C source `src` compiled with cc into `dir/name`; the build must succeed.
pub fn compile_c(dir: &Path, name: &str, src: &str) -> std::path::PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    let out = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&c)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// `ipcperf <args...> --format json`, kept out of the history; it must succeed.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(args)
        .args(["--format", "json"])
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Chromium's command (`chromium` or `chromium-browser`), or None with the reason
/// printed for a test that skips.
pub fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        eprintln!(
            "skipped: chromium is not installed (Debian: apt-get install chromium; .ci/run does)"
        );
    }
    found
}

/// `html` opened in headless Chromium (a profile of its own under `dir`), its first
/// `window` (width, height) captured as a PNG; bounded at 120 s. Panics if Chromium
/// fails or logs a console message. Returns the screenshot's path.
pub fn screenshot(
    chromium: &str,
    dir: &Path,
    html: &Path,
    window: (u32, u32),
) -> std::path::PathBuf {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let shot = dir.join("shot.png");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={},{}", window.0, window.1))
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    // Chromium logs every console message as `...:INFO:CONSOLE:<line>] "text", source: ...`.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    // Keep it for a person to look at when asked.
    if let Ok(keep) = std::env::var("IPCPERF_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
    shot
}

/// Saturated pixels: chart lines and coloured cells, not the black and grey of
/// text and tables.
pub fn colored_pixels(img: &image::RgbImage) -> usize {
    img.pixels()
        .filter(|p| {
            let (mx, mn) = (p.0.iter().max().unwrap(), p.0.iter().min().unwrap());
            mx - mn > 80
        })
        .count()
}

/// A page that can make no request: no scripts, links, imports or URLs but the
/// SVG namespace.
pub fn assert_self_contained(text: &str) {
    for outside in [
        "<script", "<link", "<img", "<iframe", "@import", "url(", "https://",
    ] {
        assert!(!text.contains(outside), "the page holds {outside}");
    }
    assert_eq!(
        text.matches("http://").count(),
        text.matches("http://www.w3.org/").count()
    );
}

/// Whether `tool` is on the PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `ipcperf ARGS` (kept out of the history) is bad input: exit 2, nothing on
/// stdout, an error line first, and `needle` said.
pub fn bad_input(args: &[&str], needle: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(args)
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2");
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.contains("error") && err.contains(needle),
        "{args:?}: stderr was {err:?}, expected it to mention {needle:?}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
}

pub mod server;

/// A path under a directory that is not there (a temporary directory, made and
/// removed at once): unlike a fixed `/nonexistent/...`, no machine can have it.
pub fn missing(name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join(name);
    drop(dir);
    path.display().to_string()
}

/// The Markdown links of a text outside code blocks, as (text, target).
pub fn md_links(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside {
            continue;
        }
        let mut at = 0;
        while let Some(i) = line[at..].find("](").map(|i| at + i) {
            let Some(j) = line[i + 2..].find(')').map(|j| i + 2 + j) else {
                break;
            };
            let label = line[..i].rfind('[').map_or("", |o| &line[o + 1..i]);
            out.push((label.to_string(), line[i + 2..j].to_string()));
            at = j;
        }
    }
    out
}

/// Why the kernel's tracing cannot be used here, if it cannot: not root, or a
/// kernel whose tracing does not answer (a task died holding its lock: every
/// tracer would wait for it for good). Tests that trace skip with this reason.
pub fn cannot_trace() -> Option<String> {
    let out = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&out.stdout).trim() != "0" {
        return Some("tracing the scheduler needs root".into());
    }
    let tfs = ipcperf_sys::trace::Tracefs::find().ok()?;
    tfs.answers().err()
}

/// Whether this test can trace; where it cannot, the reason is printed as the
/// test's skip line.
pub fn can_trace() -> bool {
    match cannot_trace() {
        Some(why) => {
            eprintln!("skipped: {why}");
            false
        }
        None => true,
    }
}

/// `ipcperf ARGS` (a shell line) on an 80-column pseudo-terminal made by
/// `script`; None (said) where `script` is not installed.
pub fn on_80_columns(args: &str) -> Option<std::process::Output> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: `script` (util-linux) is not installed: no pseudo-terminal to test in");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_ipcperf");
    let out = Command::new("script")
        .args(["-q", "-e", "-c"])
        .arg(format!("stty rows 40 cols 80; {bin} {args}"))
        .arg("/dev/null")
        .output()
        .unwrap();
    Some(out)
}

/// What a terminal shows of `out` (colour and cursor codes take no room; the
/// progress bar, which redraws itself, left out), each line asserted to fit 80
/// columns.
pub fn fits_80_columns(out: &std::process::Output) -> String {
    let mut text = String::new();
    let mut codes = false;
    for ch in String::from_utf8_lossy(&out.stdout).chars() {
        match (codes, ch) {
            (false, '\x1b') => codes = true,
            (true, c) if c.is_ascii_alphabetic() => codes = false,
            (true, _) | (false, '\r') => {}
            (false, c) => text.push(c),
        }
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.contains(['░', '█'])).collect();
    for l in &lines {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}\n{text}",
            l.chars().count()
        );
    }
    lines.join("\n")
}
