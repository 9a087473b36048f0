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

/// The rows of every table `md` holds, as a markdown reader (mdBook's) parses it,
/// and the text of its paragraphs and list items.
fn parsed(md: &str) -> (usize, Vec<String>) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut rows = 0;
    let mut texts = Vec::new();
    let mut text: Option<String> = None;
    for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match e {
            Event::Start(Tag::TableHead | Tag::TableRow) => rows += 1,
            Event::Start(Tag::Paragraph | Tag::Item) => text = Some(String::new()),
            Event::End(TagEnd::Paragraph | TagEnd::Item) => texts.extend(text.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(s) = text.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(s) = text.as_mut() {
                    s.push('\n');
                }
            }
            _ => {}
        }
    }
    (rows, texts)
}

/// A line said above a table (trend's and fleet's counts, the newest run's
/// verdicts) is a paragraph or a list item of its own, never the table's header:
/// every `|` line is a row of a table as mdBook reads it, and no two lines said
/// above it run together into one paragraph.
#[test]
fn markdown_lines_above_a_table_are_their_own_and_every_row_is_a_table_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for _ in 0..3 {
        stdout(&mut cmd(
            &db,
            &[
                "run", "pipe", "--sizes", "64", "-r", "2", "-d", "20ms", "--pin", "0,0", "-q",
            ],
        ));
    }
    for args in [
        &["trend", "pipe", "--format", "markdown"][..],
        &["fleet", "--all-cases", "--format", "markdown"],
        &["history", "--format", "markdown"],
        &["compare", "1", "3", "--format", "markdown"],
        &[
            "compare",
            "2",
            "3",
            "--baseline-runs",
            "2",
            "--format",
            "markdown",
        ],
        &["export", "1", "--format", "markdown"],
    ] {
        let md = stdout(&mut cmd(&db, args));
        let lines = md.lines().filter(|l| l.starts_with('|')).count();
        let rules = md
            .lines()
            .filter(|l| l.starts_with("|--") || l.starts_with("|:-"))
            .count();
        let (rows, texts) = parsed(&md);
        assert!(lines > 0, "{args:?}: a table\n{md}");
        assert_eq!(
            rows + rules,
            lines,
            "{args:?}: a | line outside a table\n{md}"
        );
        for t in &texts {
            assert!(
                !t.contains('|'),
                "{args:?}: a table row read as text: {t:?}\n{md}"
            );
        }
        if args[0] == "trend" {
            // The count of runs and the newest run's verdicts: two, not one.
            let head = texts
                .iter()
                .filter(|t| t.contains("runs of"))
                .collect::<Vec<_>>();
            assert_eq!(head.len(), 1, "{texts:?}\n{md}");
            assert!(!head[0].contains("newest"), "{texts:?}\n{md}");
            assert!(
                texts
                    .iter()
                    .any(|t| t.starts_with("newest run of each case")),
                "{texts:?}"
            );
        }
        if args[0] == "fleet" {
            assert!(
                texts.iter().any(|t| t.starts_with("1 host,")),
                "{texts:?}\n{md}"
            );
            assert!(
                !texts
                    .iter()
                    .any(|t| t.starts_with("1 host,") && t.contains("not judged")),
                "{texts:?}\n{md}"
            );
        }
    }
}
