//! The layering holds: in each crate, no top-level module imports another that
//! imports it back, directly or through others (a module is `src/x.rs` or
//! `src/x/`; an edge a -> b is any `crate::b` named in a's code, test modules left
//! out); and no file imports another that imports it back, inside a folder or
//! across folders (a file's paths `crate::a::b`, `super::x`, `self::x` and their
//! `{…}` groups name the file they lead to; a folder's `mod.rs` and the files
//! under it are one module's interface and its parts, so edges between them are
//! not counted). Every crate keeps each file to 650 lines. Fails naming
//! the modules or files of each circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its test module.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let l = line.split("//").next().unwrap_or("");
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Top-level module -> the top-level modules it names.
/// The top-level module under `src` that file `f` belongs to (`a` for `a.rs`
/// and for `a/b.rs`).
fn top_module(src: &Path, f: &Path) -> String {
    let rel = f.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module = |p: &Path| top_module(src, p);
    let names: BTreeSet<String> = files.iter().map(|p| module(p)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = module(f);
        if m == "main" || m == "lib" || m.ends_with("tests") || m == "testdata" {
            continue;
        }
        let text = code(&std::fs::read_to_string(f).unwrap());
        let edges = g.entry(m.clone()).or_default();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + 7..];
            let target: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `use crate::{a, b}` names several.
            let targets: Vec<String> = if target.is_empty() && rest.starts_with('{') {
                let block = &rest[1..rest.find('}').unwrap_or(rest.len())];
                block
                    .split(',')
                    .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
                    .collect()
            } else {
                vec![target]
            };
            for t in targets {
                if names.contains(&t) && t != m {
                    edges.insert(t);
                }
            }
        }
    }
    g
}

/// Modules on a circle: those that reach themselves.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = g.get(from).into_iter().flatten().collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n.clone()) {
                todo.extend(g.get(n).into_iter().flatten());
            }
        }
        seen
    };
    g.keys()
        .filter(|m| reach(m).contains(*m))
        .cloned()
        .collect()
}

/// Every crate of the workspace (a folder of crates/ with a Cargo.toml).
fn crate_names() -> Vec<String> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut names: Vec<String> = std::fs::read_dir(&crates)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 4, "crates: {names:?}");
    names
}

/// The results library (store, exporters, charts, report, verdicts, advice,
/// pattern) is usable without the command line: it neither depends on clap nor
/// names it.
#[test]
fn the_results_library_has_no_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ipcperf-results");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        !manifest.contains("clap"),
        "ipcperf-results depends on clap"
    );
    let mut files = Vec::new();
    rust_files(&dir.join("src"), &mut files);
    assert!(files.len() > 30, "found only {} files", files.len());
    let named: Vec<String> = files
        .iter()
        .filter(|f| code(&std::fs::read_to_string(f).unwrap()).contains("clap"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(named.is_empty(), "clap named in {named:?}");
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for c in crate_names() {
        let g = graph(&crates.join(&c).join("src"));
        assert!(g.len() > 3, "{c}: no modules found");
        let on = circles(&g);
        if !on.is_empty() {
            found.push(format!("{c}: {on:?}"));
        }
    }
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
}

/// A file's module path: `a/b.rs` is a::b, `a/mod.rs` is a, `main.rs` the root.
fn module_path(src: &Path, f: &Path) -> Vec<String> {
    let rel = f.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The paths a file's code names: `crate::…`, `super::…`, `self::…`, with
/// `prefix::{a, b::c}` groups expanded one level, as segment lists resolved from
/// the crate root.
fn named_paths(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for head in ["crate::", "super::", "self::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(head) {
            let start = at + i;
            at = start + head.len();
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            // The module this path starts from.
            let mut base: Vec<String> = match head {
                "crate::" => Vec::new(),
                _ => {
                    // A mod.rs file is its folder's module; another file is its own.
                    let mut b = here.to_vec();
                    if head == "super::" && !b.is_empty() {
                        b.pop();
                    }
                    b
                }
            };
            // Further `super::` steps.
            let mut rest = &code[at..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            let ident = |s: &str| -> String {
                s.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect::<String>()
                    .trim_end_matches(':')
                    .to_string()
            };
            let path = ident(rest);
            let after = &rest[path.len()..];
            let mut prefix = base.clone();
            prefix.extend(path.split("::").filter(|s| !s.is_empty()).map(String::from));
            let group = after
                .strip_prefix("::{")
                .or_else(|| after.strip_prefix('{'));
            match group {
                Some(g) => {
                    let inner = &g[..g.find('}').unwrap_or(g.len())];
                    for item in inner.split(',') {
                        let item = ident(item.trim());
                        let mut p = prefix.clone();
                        p.extend(item.split("::").filter(|s| !s.is_empty()).map(String::from));
                        out.push(p);
                    }
                }
                None => out.push(prefix),
            }
        }
    }
    out
}

/// File -> the files it names, by module path (edges between a folder's mod.rs
/// and the files under it left out).
fn file_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mods: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_path(src, f), f.clone()))
        .collect();
    let name = |m: &[String]| {
        if m.is_empty() {
            "crate".to_string()
        } else {
            m.join("::")
        }
    };
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let here = module_path(src, f);
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        if here.is_empty() || stem.ends_with("tests") || stem == "testdata" {
            continue;
        }
        let text = code(&std::fs::read_to_string(f).unwrap());
        let edges = g.entry(name(&here)).or_default();
        for p in named_paths(&text, &here) {
            // The longest prefix that is a file of the crate.
            let Some(target) = (1..=p.len())
                .rev()
                .map(|k| &p[..k])
                .find(|k| mods.contains_key(*k))
            else {
                continue;
            };
            let related = target.starts_with(&here) || here.starts_with(target);
            if !related {
                edges.insert(name(target));
            }
        }
    }
    g
}

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for c in crate_names() {
        let g = file_graph(&crates.join(&c).join("src"));
        assert!(g.len() > 10, "{c}: no files found");
        let on = circles(&g);
        if !on.is_empty() {
            found.push(format!("{c}: {on:?}"));
        }
    }
    assert!(found.is_empty(), "file circles:\n{}", found.join("\n"));
}

/// The resolver reads the forms the code uses.
#[test]
fn paths_lead_to_the_files_they_name() {
    let here: Vec<String> = vec!["export".into(), "latency".into()];
    let got = named_paths(
        "use super::view::{Table, mechanism_label};\nuse crate::{units::fmt_size, console};\nself::x::y();",
        &here,
    );
    let got: Vec<String> = got.iter().map(|p| p.join("::")).collect();
    assert!(got.contains(&"export::view::Table".to_string()), "{got:?}");
    assert!(got.contains(&"units::fmt_size".to_string()), "{got:?}");
    assert!(got.contains(&"console".to_string()), "{got:?}");
    assert!(
        got.contains(&"export::latency::x::y".to_string()),
        "{got:?}"
    );
}

/// No source or test file of any crate is over 650 lines: a long file is parts
/// that belong in a folder of their own.
#[test]
fn every_crate_keeps_its_files_short() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for c in crate_names() {
        for dir in ["src", "tests", "examples", "benches"] {
            let d = crates.join(&c).join(dir);
            if d.is_dir() {
                rust_files(&d, &mut files);
            }
        }
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 650).then(|| format!("{} ({n} lines)", f.strip_prefix(&crates).unwrap().display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 650 lines: {long:?}");
}

#[test]
fn the_check_finds_a_circle_when_there_is_one() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    let on: Vec<String> = circles(&g).into_iter().collect();
    assert_eq!(on, ["a", "b", "c"]);
}

/// No command module uses another, by any path (`crate::cmd::x`, `super::x`):
/// what two commands share lives in `shared/` or the results library. A command
/// in a folder (`cmd/advise/`) may use its own files.
#[test]
fn no_command_module_uses_another() {
    let cmd = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
    let mut files = Vec::new();
    rust_files(&cmd, &mut files);
    let command = |f: &Path| top_module(&cmd, f);
    let names: BTreeSet<String> = files.iter().map(|f| command(f)).collect();
    assert!(names.len() > 20, "commands: {names:?}");
    let mut found = Vec::new();
    for f in &files {
        let own = command(f);
        if own == "mod" {
            continue;
        }
        let text = code(&std::fs::read_to_string(f).unwrap());
        let flat = text.split_whitespace().collect::<String>();
        // From cmd/x.rs, `super::` is cmd itself; from cmd/x/y.rs it is x.
        let top = f.parent() == Some(cmd.as_path());
        for other in names.iter().filter(|n| **n != own && *n != "mod") {
            let mut ways = vec![format!("crate::cmd::{other}")];
            if top {
                ways.push(format!("super::{other}"));
            }
            let braced = flat.contains("crate::cmd::{") || (top && flat.contains("super::{"));
            if ways
                .iter()
                .any(|w| flat.contains(&format!("{w}::")) || flat.contains(&format!("{w};")))
                || braced
            {
                found.push(format!("{} uses {other}", f.display()));
            }
        }
    }
    found.dedup();
    assert!(found.is_empty(), "{found:#?}");
}

/// Every CSV is written through one writer (the results library's CsvOut).
#[test]
fn one_csv_writer() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sites = Vec::new();
    for c in crate_names() {
        let mut files = Vec::new();
        rust_files(&crates.join(&c).join("src"), &mut files);
        for f in files {
            let n = code(&std::fs::read_to_string(&f).unwrap())
                .matches("Writer::from_writer")
                .count();
            if n > 0 {
                sites.push(format!("{} ({n})", f.display()));
            }
        }
    }
    assert_eq!(sites.len(), 1, "CSV writers made in {sites:?}");
}

/// The binary and the results library print through `console` (`out`, `outln!`,
/// `errln!`), never std's print macros: those panic when the reader went away
/// (`ipcperf run 2>&1 | head -1`), and a panic there aborted the run.
#[test]
fn no_print_macro_that_panics() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let std_print = regex::Regex::new(r"(?:^|[^\w:]|std::)e?print(?:ln)?!\s*[(\[{]").unwrap();
    let mut sites = Vec::new();
    for c in ["ipcperf", "ipcperf-results"] {
        let mut files = Vec::new();
        rust_files(&crates.join(c).join("src"), &mut files);
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy();
            if name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = code(&std::fs::read_to_string(&f).unwrap());
            // std's print!, println!, eprint!, eprintln!, as a name of their
            // own or std's (not `errprint!`, not another crate's `x::println!`).
            let n = std_print.find_iter(&text).count();
            if n > 0 {
                sites.push(format!("{} ({n} std print macros)", f.display()));
            }
        }
    }
    assert!(sites.is_empty(), "std print macros in {sites:?}");
}
