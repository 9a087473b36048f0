//! The console table.

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table as Comfy};

use super::view::View;

pub fn render(v: &View) -> String {
    let mut out = format!("{}\n", v.heading);
    for t in &v.tables {
        let mut c = Comfy::new();
        c.load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(t.header.clone());
        for r in &t.rows {
            c.add_row(r.clone());
        }
        out.push_str(&format!("\n{}\n{c}\n", t.title));
        for n in &t.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
    }
    out
}
