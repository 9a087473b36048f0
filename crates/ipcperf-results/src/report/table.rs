//! A view table as HTML: figures right-aligned and kept with their units, words
//! left-aligned, a table wider than the page scrolling in its own box.

use std::collections::HashSet;

use super::esc;
use crate::export::view::Table;

/// A view table as HTML.
pub fn table_html(t: &Table) -> String {
    noted_table(t, &mut HashSet::new())
}

/// Tables one after another, a note word for word as under an earlier one
/// said once (the switches/msg note stood under each of a run's seven tables).
pub fn tables_html<'a>(tables: impl IntoIterator<Item = &'a Table>) -> String {
    let mut said = HashSet::new();
    tables
        .into_iter()
        .map(|t| noted_table(t, &mut said))
        .collect()
}

/// A table and those of its notes not in `said` (which then holds them).
fn noted_table<'a>(t: &'a Table, said: &mut HashSet<&'a str>) -> String {
    // A table wider than the page (the latency table's 13 columns) scrolls in
    // its own box: the whole page scrolled sideways.
    let mut o = format!(
        "<div class=\"wide\"><table>\n<caption>{}</caption>\n",
        esc(&t.title)
    );
    // A table without a header is a list of names and values, left-aligned.
    let numeric = !t.header.is_empty();
    if numeric {
        o.push_str("<thead><tr>");
        for h in &t.header {
            o.push_str(&format!("<th>{}</th>", esc(h)));
        }
        o.push_str("</tr></thead>\n");
    }
    o.push_str("<tbody>\n");
    // Figures right-aligned, so their digits line up; words (a verdict, a
    // reason) left-aligned, as they read.
    let figures: Vec<bool> = (0..t.header.len())
        .map(|i| i > 0 && numeric && figure_column(t.rows.iter().filter_map(|r| r.get(i))))
        .collect();
    for r in &t.rows {
        o.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if figures.get(i) == Some(&true) {
                " class=\"n\""
            } else {
                ""
            };
            o.push_str(&format!("<td{class}>{}</td>", unit_held(&esc(c))));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table></div>\n");
    for n in t.notes.iter().filter(|n| said.insert(n.as_str())) {
        o.push_str(&format!(
            "<p class=\"note\">{}</p>\n",
            options_held(&esc(n))
        ));
    }
    o
}

/// A figure kept with its unit where a cell wraps ("1841 µs" broke between
/// them, "64 KiB" too), and a range whole ("(2085–2468)" broke after its
/// dash: a word joiner holds it); "124 (117–133)" may still break before its
/// range.
pub(super) fn unit_held(cell: &str) -> String {
    const UNITS: &[&str] = &["B", "KiB", "MiB", "GiB", "ns", "µs", "ms", "s", "MB/s", "%"];
    let mut out = String::with_capacity(cell.len());
    let words: Vec<&str> = cell.split(' ').collect();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            let figure =
                words[i - 1].ends_with(|c: char| c.is_ascii_digit() || c == '†' || c == ')');
            let unit = UNITS.contains(&w.trim_end_matches([',', ';', ')', '†']));
            out.push_str(if figure && unit { "&nbsp;" } else { " " });
        }
        let mut chars = w.chars().peekable();
        while let Some(c) = chars.next() {
            out.push(c);
            if c == '–' && chars.peek().is_some_and(char::is_ascii_digit) {
                out.push('\u{2060}');
            }
        }
    }
    out
}

/// Whether a column's cells are mostly figures (`1841 µs`, `-3.2%`, `< 0.001`,
/// `2.00×`), placeholders (`-`, `n/a`, empty) left aside.
pub(super) fn figure_column<'a>(cells: impl Iterator<Item = &'a String>) -> bool {
    let (mut figures, mut words) = (0, 0);
    for c in cells.map(|c| c.trim()) {
        if matches!(c, "" | "-" | "–" | "n/a") {
            continue;
        }
        let body = c.trim_start_matches(['-', '+', '~', '<', '>', '≤', '≥', '±', '=', ' ']);
        if body.starts_with(|ch: char| ch.is_ascii_digit() || ch == '.') {
            figures += 1;
        } else {
            words += 1;
        }
    }
    figures >= words && figures > 0
}

/// A note's options kept whole where it wraps: "--repeat" broke after its
/// dashes ("--" / "repeat"). A span, not joiners, so a copied option is the
/// option.
pub(super) fn options_held(note: &str) -> String {
    note.split(' ')
        .map(|w| {
            if w.starts_with("--") && w.len() > 2 {
                format!("<span class=\"opt\">{w}</span>")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
