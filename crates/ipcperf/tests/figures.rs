//! Every figure in the book has one source: a figure the README or a chapter
//! quotes is a link to a figures file a bench script wrote (docs/src/figures/),
//! and holds there; a decimal stated bare is a constant named here, never a
//! measurement copied by hand.

use std::path::{Path, PathBuf};

mod common;
use common::md_links;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The figures `text` (a page in `dir`) quotes from the book's figures files:
/// each link `[FIGURE](figures/F.md)`, FIGURE a number, whose text is not in that file, as
/// "FIGURE: not in F". A measured figure in prose is such a link, so it has
/// one source: a bench script writes the file, the page quotes it, and two
/// pages cannot quote one measurement differently.
fn unsourced(text: &str, dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for (figure, target) in md_links(text) {
        // A quoted figure is a number; a link with words (a page's title)
        // only points at the file.
        // A figure, or a figure with its range: "0.993 (0.986–1.054)".
        let number = figure.starts_with(|c: char| c.is_ascii_digit())
            && figure
                .chars()
                .all(|c| c.is_ascii_digit() || ".,()–- /".contains(c));
        if !target.contains("figures/") || !number {
            continue;
        }
        let file = target.split('#').next().unwrap_or_default();
        let source = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        // A count of trials ("148/150") is one figure, whole.
        let numbers = figure
            .split(|c: char| "()–- ".contains(c))
            .map(|n| n.trim_end_matches(|c| ".,".contains(c)))
            .filter(|n| !n.is_empty());
        for n in numbers {
            if source.is_empty() {
                out.push(format!("{n}: {file} is missing"));
            } else if !holds(&source, n) {
                out.push(format!("{n}: not in {file}"));
            }
        }
    }
    out
}

/// Whether `source` holds `figure` whole: not inside a longer number ("1.3"
/// is not in "1.36" nor in "21.3").
fn holds(source: &str, figure: &str) -> bool {
    let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == '.');
    source.match_indices(figure).any(|(i, _)| {
        let before = source[..i].chars().next_back();
        let mut after = source[i + figure.len()..].chars();
        let (a, b) = (after.next(), after.next());
        // A number may end a sentence: "1.3." is 1.3, "1.3.5" is not.
        let after_number = digit(a) && (a != Some('.') || digit(b));
        !digit(before) && !after_number
    })
}

/// Every figure the README and the book quote from a figures file is in it;
/// a planted contradiction (a figure its source does not hold) is caught.
#[test]
fn quoted_figures_are_in_their_sources() {
    let src = root().join("docs/src");
    // The checker itself: the book's dd ratio, right and wrong.
    let planted = "On one CPU ipcperf runs [1.3](figures/peers-2vcpu.md)× dd.";
    assert_eq!(
        unsourced(planted, &src),
        ["1.3: not in figures/peers-2vcpu.md"]
    );
    let right = "On one CPU ipcperf runs [1.081](figures/peers-2vcpu.md)× dd.";
    assert!(unsourced(right, &src).is_empty());
    // A count of trials is checked whole (it was not checked at all).
    let trials = |n: &str| format!("called in [{n}](figures/verdicts-newest-2vcpu.md) trials");
    assert!(unsourced(&trials("512/525"), &src).is_empty());
    assert_eq!(
        unsourced(&trials("513/525"), &src),
        ["513/525: not in figures/verdicts-newest-2vcpu.md"]
    );
    let mut bad = Vec::new();
    let mut quoted = 0;
    let mut pages = vec![(root().join("README.md"), root())];
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push((p, src.clone()));
        }
    }
    for (page, dir) in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        quoted += text.matches("figures/").count();
        for b in unsourced(&text, &dir) {
            bad.push(format!("{}: {b}", page.display()));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(quoted > 5, "the book quotes its figures files");
    // Each figures file is a page of the book too (mdBook renders a link to
    // `figures/F.md` as `figures/F.html`, which exists only for a listed page).
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    for e in std::fs::read_dir(src.join("figures")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            summary.contains(&format!("(figures/{name})")),
            "SUMMARY.md does not list figures/{name}"
        );
    }
}

/// The decimal numbers the book's prose states without quoting a figures file,
/// as "LINE: NUMBER": outside code blocks and `code`, each decimal (1.081,
/// 0.97) that is not inside a `[..](figures/..)` link. A measured figure
/// belongs in a figures file that a bench script wrote, quoted by link; what
/// may stand bare is a constant of the method or the code (`NOT_MEASURED`).
fn unquoted_decimals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside {
            continue;
        }
        // Code spans out (a span is written on one line in this book).
        let mut prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        // Links to figures files out whole (their figures are checked by
        // `unsourced`); other links keep their words, lose their targets.
        while let Some(i) = prose.find("](") {
            let Some(j) = prose[i..].find(')').map(|j| i + j) else {
                break;
            };
            let start = prose[..i].rfind('[').unwrap_or(i);
            if prose[i..j].contains("figures/") {
                prose.replace_range(start..=j, " ");
            } else {
                prose.replace_range(i..=j, "] ");
            }
        }
        let b = prose.as_bytes();
        let mut k = 0;
        while k < b.len() {
            let word = |c: u8| c.is_ascii_alphanumeric() || c == b'.';
            if !b[k].is_ascii_digit() || (k > 0 && word(b[k - 1])) {
                k += 1;
                continue;
            }
            let mut e = k;
            while e < b.len() && b[e].is_ascii_digit() {
                e += 1;
            }
            let decimal = e + 1 < b.len() && b[e] == b'.' && b[e + 1].is_ascii_digit();
            if decimal {
                e += 1;
                while e < b.len() && b[e].is_ascii_digit() {
                    e += 1;
                }
                let glued = e < b.len()
                    && (b[e].is_ascii_alphanumeric()
                        || (b[e] == b'.' && b.get(e + 1).is_some_and(u8::is_ascii_digit)));
                let number = &prose[k..e];
                if !glued && !NOT_MEASURED.iter().any(|(c, _)| *c == number) {
                    out.push(format!("{}: {number}", n + 1));
                }
            }
            k = e.max(k + 1);
        }
    }
    out
}

/// Decimals the book may state bare: constants, versions, thresholds, never a
/// measurement (each with why).
const NOT_MEASURED: &[(&str, &str)] = &[
    ("1.87", "the Rust version ipcperf needs"),
    ("5.6", "a kernel version"),
    ("5.18", "a kernel version"),
    ("6.3", "a kernel version"),
    ("6.18", "a kernel version"),
    ("2.0", "Apache-2.0"),
    ("1.4826", "the MAD's scale to a standard deviation"),
    (
        "1.5",
        "the bound on a row's could-call over its limit (issue 55)",
    ),
    ("8.5", "the expected range of three normal samples of sd 5%"),
    ("1.386", "z of an 83.4% interval"),
    ("83.4", "the interval two of which apart make a 5% test"),
    ("0.05", "a test's level"),
    ("0.02", "a p-value in a worked example"),
    ("0.01", "a test's level"),
    ("0.001", "a test's level"),
    (
        "0.008",
        "the rank-sum test's smallest p with 5 series a side",
    ),
    ("0.5", "a quantile; topology's least time"),
    ("0.99", "a quantile"),
    ("0.999", "a quantile"),
    ("1.0", "a ratio of one"),
    ("1.00", "one CPU busy; a ratio of one"),
    ("2.00", "two CPUs busy"),
    ("0.90", "a target band"),
    ("1.10", "a target band"),
    ("1.15", "a target"),
    ("1.05", "a target: within ×1.05 of the C floor"),
    ("1.25", "a target: tracing's cost on the 16-CPU guest"),
    ("0.3", "a target: the parts agree within 0.3 µs"),
    ("0.1", "the peer's first retry pause"),
    ("0.2", "matrix's time a pair, as planned"),
    ("7.5", "topology --measure's plan for 16 CPUs"),
    (
        "0.8",
        "a point in the example trace; the planted outliers' factor",
    ),
    ("1.2", "a point in the example trace"),
    ("2.4", "the example program's gap between requests, ms"),
    ("0.450", "a note's example text"),
    ("0.470", "a note's example text"),
    ("0.028", "a note's example text"),
    ("100.0", "a schedule kept whole"),
];

/// Every decimal in the README's and the book's prose is quoted from a figures
/// file or is a constant: a figure copied by hand fails here.
#[test]
fn no_figure_is_copied_by_hand() {
    // The checker: a bare measurement is caught, a quoted one and code are not.
    let planted =
        "ipcperf runs 1.081× dd; `--sizes 1.5k`\n[1.081](figures/peers-2vcpu.md) and 0.99.";
    assert_eq!(unquoted_decimals(planted), ["1: 1.081"]);
    let mut bad = Vec::new();
    let src = root().join("docs/src");
    let mut pages = vec![root().join("README.md")];
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for b in unquoted_decimals(&text) {
            bad.push(format!("{}:{b}", page.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "figures stated by hand (quote them from a docs/src/figures file by link, \
         or name a constant in NOT_MEASURED):\n{}",
        bad.join("\n")
    );
}
