//! Markdown tables, for pasting into issues and reports.

use super::cells::View;

/// Text as a markdown cell, heading or note shows it, whoever wrote it (a host
/// name an imported run brought): a backslash and `|` escaped (a cell ends at a bare
/// `|`), `<` written `&lt;` (no raw HTML, no autolink) and line breaks and other
/// control characters as spaces (a row, heading or note stays one line).
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

pub fn render(v: &View) -> String {
    // A heading may go on in a paragraph of its own (compare's "A = run 1 on ...").
    let heading: Vec<String> = v.heading.split('\n').map(escape).collect();
    let mut out = format!("# {}\n", heading.join("\n"));
    for t in &v.tables {
        out.push_str(&format!("\n## {}\n\n", escape(&t.title)));
        out.push_str(&format!(
            "| {} |\n",
            t.header
                .iter()
                .map(|h| escape(h))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        out.push_str(&format!(
            "|{}\n",
            t.header.iter().map(|_| "---|").collect::<String>()
        ));
        for r in &t.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| escape(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        for n in &t.notes {
            out.push_str(&format!("\n*{}*\n", escape(n)));
        }
    }
    out
}
