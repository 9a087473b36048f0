//! Markdown goes into issues and books that render HTML: a name an imported run
//! brought (its host, its CPU model) shows there as text, not as a tag, and a `|`
//! in it never splits a table's row. A name with a control character is refused
//! at the door (a line break split rows, an escape sequence reached the terminal).

mod common;

use common::{cmd, stdout};

const HOST: &str = "evil|host <script>alert(1)</script>";
const CPU: &str = "X | Y </td><img src=x onerror=alert(2)>";

/// The `|` that separate a row's cells (an escaped `\|` is text).
fn separators(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
        .count()
}

/// No tag of the hostile names survives, and every row of a table has as many
/// cells as its header.
fn assert_safe(what: &str, md: &str) {
    for tag in ["<script", "</script", "<img", "</td"] {
        assert!(!md.contains(tag), "{what}: {tag} in\n{md}");
    }
    let mut header: Option<usize> = None;
    for line in md.lines() {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let n = separators(line);
        match header {
            None => header = Some(n),
            Some(h) => assert_eq!(n, h, "{what}: a row split\n{line}\nin\n{md}"),
        }
    }
}

#[test]
fn names_an_import_brought_are_text_in_markdown_and_control_characters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().join("here.db");
    stdout(&mut cmd(
        &here,
        &[
            "run", "pipe", "--sizes", "64", "-r", "2", "-d", "20ms", "--pin", "0,0", "-q",
        ],
    ));
    let json = stdout(&mut cmd(&here, &["export", "last", "--format", "json"]));
    let run: serde_json::Value = serde_json::from_str(&json).unwrap();
    // The hostile host and three peers of its CPU model and kernel (fleet judges it).
    let db = dir.path().join("h.db");
    for (i, host) in [HOST, "peer-1", "peer-2", "peer-3"].into_iter().enumerate() {
        let mut r = run.clone();
        r["machine"]["hostname"] = host.into();
        r["machine"]["cpu_model"] = CPU.into();
        r["started_ms"] = (r["started_ms"].as_u64().unwrap() - 1000 * i as u64).into();
        let p = dir.path().join(format!("{i}.json"));
        std::fs::write(&p, serde_json::to_vec(&r).unwrap()).unwrap();
        stdout(&mut cmd(&db, &["import", "-q", p.to_str().unwrap()]));
    }
    for args in [
        &["history", "--format", "markdown"][..],
        &["export", "1", "--format", "markdown"],
        &["compare", "2", "1", "--format", "markdown"],
        &["fleet", "--all-cases", "--format", "markdown"],
        &["trend", "pipe", "--host", HOST, "--format", "markdown"],
    ] {
        let md = stdout(&mut cmd(&db, args));
        assert!(
            md.contains("evil\\|host") || args[0] == "compare",
            "{args:?}: the host is shown, its | escaped\n{md}"
        );
        assert_safe(&args.join(" "), &md);
    }
    // A line break or an escape sequence in a name: one line, exit 2, nothing kept.
    for (field, text) in [("hostname", "a\n| b |"), ("cpu_model", "\u{1b}]0;x\u{7}")] {
        let mut r = run.clone();
        r["machine"][field] = text.into();
        let p = dir.path().join("bad.json");
        std::fs::write(&p, serde_json::to_vec(&r).unwrap()).unwrap();
        let out = cmd(&db, &["import", p.to_str().unwrap()]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{field}: {err}");
        assert!(
            err.contains(&format!("machine.{field}: holds a control character"))
                && err.lines().count() == 1,
            "{field}: {err}"
        );
    }
    let runs = stdout(&mut cmd(&db, &["history", "--format", "json"]));
    let runs: serde_json::Value = serde_json::from_str(&runs).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(4), "{runs}");
}
