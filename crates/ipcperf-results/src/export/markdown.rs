//! Markdown tables, for pasting into issues and reports.

use super::cells::View;

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(v: &View) -> String {
    let mut out = format!("# {}\n", esc(&v.heading));
    for t in &v.tables {
        out.push_str(&format!("\n## {}\n\n", esc(&t.title)));
        out.push_str(&format!(
            "| {} |\n",
            t.header
                .iter()
                .map(|h| esc(h))
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
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        for n in &t.notes {
            out.push_str(&format!("\n*{}*\n", esc(n)));
        }
    }
    out
}
