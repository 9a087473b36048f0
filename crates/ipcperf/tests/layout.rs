//! The layering holds: in each crate, no top-level module imports another that
//! imports it back, directly or through others. A module is `src/x.rs` or
//! `src/x/`; an edge a -> b is any `crate::b` named in a's code (test modules
//! left out). Fails naming the modules of each circle.

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
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module = |p: &Path| -> String {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
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

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for c in ["ipcperf-sys", "ipcperf-core", "ipcperf"] {
        let g = graph(&crates.join(c).join("src"));
        assert!(g.len() > 3, "{c}: no modules found");
        let on = circles(&g);
        if !on.is_empty() {
            found.push(format!("{c}: {on:?}"));
        }
    }
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
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
