//! The console table. On a terminal narrower than a table, the columns a reader
//! can most easily spare go first, in a fixed order (said in a note); only if it
//! is still too wide do cells wrap. Pipes and files get every column.

use comfy_table::{ContentArrangement, Table as Comfy};

use super::cells::{Table, View};

/// Columns left out first when a table is wider than the terminal, by header (an
/// exact name, or `*suffix`). The figures a table is for (MB/s, p50, p99) and
/// what names the case (mechanism, mode, placement, size) are never in it.
const SPARE: &[&str] = &[
    "half-rtt p99",
    "half-rtt p50",
    "one-way p99.9",
    "p99.99",
    "p90",
    "mean",
    "*blocks/s",
    "round trips/s",
    "max",
    "max µs",
    "pass",
    "CPUs busy",
    "p99.9",
];

fn spare(header: &str, name: &str) -> bool {
    match name.strip_prefix('*') {
        Some(suffix) => header.ends_with(suffix),
        None => header == name,
    }
}

fn comfy(t: &Table) -> Comfy {
    let mut c = Comfy::new();
    c.load_style(crate::console::table_style())
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(t.header.clone());
    for r in &t.rows {
        c.add_row(r.clone());
    }
    c
}

fn width(c: &Comfy) -> usize {
    c.to_string()
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}

/// `t` made to fit `cols` columns: spare columns dropped in order, then wrapping.
/// Returns the table and the headers it left out.
pub fn fit(t: &Table, cols: Option<usize>) -> (Comfy, Vec<String>) {
    let mut c = comfy(t);
    let Some(cols) = cols else {
        return (c, Vec::new());
    };
    let mut t = t.clone();
    let mut dropped = Vec::new();
    for name in SPARE {
        if width(&c) <= cols {
            break;
        }
        while let Some(i) = t.header.iter().position(|h| spare(h, name)) {
            let h = t.header.remove(i);
            if !dropped.contains(&h) {
                dropped.push(h);
            }
            for r in &mut t.rows {
                if i < r.len() {
                    r.remove(i);
                }
            }
        }
        c = comfy(&t);
    }
    if width(&c) > cols {
        c.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(cols as u16);
    }
    (c, dropped)
}

pub fn render(v: &View) -> String {
    let mut out = String::new();
    let tables = render_tables(&v.tables);
    if v.heading.is_empty() {
        out.push_str(&tables);
    } else if crate::console::quiet() {
        // -q: the tables alone, no banner naming the machine (JSON and CSV
        // keep it), nor the blank line under it.
        out.push_str(tables.trim_start_matches('\n'));
    } else {
        out.push_str(&format!("{}\n{tables}", v.heading));
    }
    out
}

/// The tables alone (each after a blank line), fitted to the terminal.
pub fn render_tables(tables: &[super::cells::Table]) -> String {
    let cols = crate::console::terminal_width().map(usize::from);
    let mut out = String::new();
    for t in tables {
        let (c, dropped) = fit(t, cols);
        out.push_str(&format!("\n{}\n{c}\n", t.title));
        for n in &t.notes {
            out.push_str(&note(n, cols));
        }
        if !dropped.is_empty() {
            out.push_str(&note(
                &format!(
                    "left out to fit the terminal: {} (a wider terminal, or --format \
                     markdown/csv/json, shows them)",
                    dropped.join(", ")
                ),
                cols,
            ));
        }
    }
    out
}

/// A note under a table: one line for pipes and files, wrapped at words to the
/// terminal's width (its lines after the first under its text) on a terminal.
fn note(text: &str, cols: Option<usize>) -> String {
    let line = format!("  note: {text}");
    let Some(cols) = cols else {
        return line + "\n";
    };
    // A figure stays with its unit ("512 B", "63.2 µs"): the space between
    // them is held (no break) while the note is wrapped.
    const UNITS: &[&str] = &["B", "KiB", "MiB", "GiB", "ns", "µs", "ms", "s", "MB/s"];
    let words: Vec<&str> = line.split(' ').collect();
    let mut held = String::with_capacity(line.len());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            let figure = words[i - 1].ends_with(|c: char| c.is_ascii_digit());
            let unit = UNITS
                .iter()
                .any(|u| w.trim_end_matches([',', ';', ':', ')', '.']) == *u);
            held.push(if figure && unit { '\u{a0}' } else { ' ' });
        }
        held.push_str(w);
    }
    let opts = crate::export::list::wrap_opts(cols).subsequent_indent("        ");
    textwrap::fill(&held, opts).replace('\u{a0}', " ") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A note wraps at words within the terminal's width, its later lines under
    /// its text; without a terminal it stays one line, word for word.
    #[test]
    fn a_note_fits_the_terminal_and_keeps_every_word() {
        let text = "idle: each case across CPUs took one more series with no idle state \
                    deeper than polling (/dev/cpu_dma_latency held at 0)";
        assert_eq!(note(text, None), format!("  note: {text}\n"));
        let wrapped = note(text, Some(40));
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.len() > 2, "{wrapped}");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{wrapped}");
        assert!(lines[0].starts_with("  note: idle:"), "{wrapped}");
        assert!(lines[1..]
            .iter()
            .all(|l| l.starts_with("        ") && !l.starts_with("         ")));
        // A figure and its unit are never split between lines.
        let sized = note("pipe 512 B shared-l3 0→1, 63.2 µs", Some(17));
        assert!(
            sized
                .lines()
                .all(|l| !l.ends_with(" 512") && !l.ends_with(" 63.2")),
            "{sized}"
        );
        let words: Vec<&str> = wrapped.split_whitespace().collect();
        let full = format!("note: {text}");
        let want: Vec<&str> = full.split_whitespace().collect();
        assert_eq!(words, want);
    }

    /// The latency table at 80 columns keeps the case, p50 and p99 and says what
    /// it left out; unlimited, it keeps everything.
    #[test]
    fn a_wide_table_drops_spare_columns_in_order_to_fit() {
        let header = crate::export::latency::round_trip_header(false);
        let row: Vec<String> = [
            "shm (spin)",
            "processes",
            "shared-l3 0→1",
            "512 B",
            "55.5k",
            "14.0",
            "13.1",
            "14.2",
            "23.5",
            "90.5",
            "90.5",
            "90.5",
        ]
        .map(String::from)
        .to_vec();
        let t = Table {
            title: "t".into(),
            header,
            rows: vec![row],
            notes: vec![],
        };
        let (c, dropped) = fit(&t, Some(80));
        assert!(width(&c) <= 80, "{c}");
        let text = c.to_string();
        for kept in ["shm (spin)", "shared-l3 0→1", "p50", "p99 "] {
            assert!(text.contains(kept), "{kept} kept:\n{text}");
        }
        assert_eq!(dropped[..3], ["p99.99", "p90", "mean"]);
        let (all, none) = fit(&t, None);
        assert!(none.is_empty() && width(&all) > 80);
    }
}
