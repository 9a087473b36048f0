//! One way out for what is not a run (the history, the mechanism list, a
//! topology, a comparison, a traffic pattern, a fleet, a trend): a command
//! builds one [`Document`] and [`emit`] writes it in the format asked for, or
//! refuses the metrics formats in the one wording ([`Format::not_a_run`]).
//! Runs go out through [`crate::document::document`].

use super::csv::CsvOut;
use super::Format;
use crate::fail::Fail;

/// What a command says, in each form.
pub struct Document {
    /// What it is, for the refusal of the metrics formats ("the run history").
    pub what: &'static str,
    /// `--format json`: the records, written pretty.
    pub json: serde_json::Value,
    /// `--format csv`.
    pub csv: String,
    /// The default: tables for a terminal.
    pub table: String,
    /// `--format markdown`.
    pub markdown: String,
}

/// `doc` in `format`, each form ending with one newline.
pub fn emit(doc: &Document, format: Format) -> Result<String, Fail> {
    let mut text = match format {
        Format::Json => serde_json::to_string_pretty(&doc.json)
            .map_err(|e| Fail::failure(format!("cannot write JSON: {e}")))?,
        Format::Csv => doc.csv.clone(),
        Format::Table => doc.table.clone(),
        Format::Markdown => doc.markdown.clone(),
        Format::OpenMetrics | Format::Prometheus => return Err(format.not_a_run(doc.what)),
    };
    let kept = text.trim_end_matches('\n').len();
    text.truncate(kept);
    text.push('\n');
    Ok(text)
}

/// Rows under a header as CSV.
pub fn csv_rows<H: AsRef<str>, C: AsRef<str>>(header: &[H], rows: &[Vec<C>]) -> String {
    let mut w = CsvOut::default();
    w.row(header.iter().map(|h| h.as_ref()));
    for r in rows {
        w.row(r.iter().map(|c| c.as_ref()));
    }
    w.text()
}

/// Rows under a header as a markdown table (`|` in a cell escaped).
pub fn markdown_rows<H: AsRef<str>, C: AsRef<str>>(header: &[H], rows: &[Vec<C>]) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let esc = super::markdown::escape;
    let mut out = line(header.iter().map(|h| esc(h.as_ref())).collect());
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        out.push_str(&line(r.iter().map(|c| esc(c.as_ref())).collect()));
    }
    out
}

/// Rows under a header as a terminal table, fitted to its width.
pub fn table_rows<H: AsRef<str>, C: AsRef<str>>(header: &[H], rows: &[Vec<C>]) -> String {
    // Fitted to the terminal as a run's tables are (export::table::fit).
    let t = super::cells::Table {
        title: String::new(),
        header: header.iter().map(|h| h.as_ref().to_string()).collect(),
        rows: rows
            .iter()
            .map(|r| r.iter().map(|c| c.as_ref().to_string()).collect())
            .collect(),
        notes: Vec::new(),
    };
    let cols = crate::console::terminal_width().map(usize::from);
    let (c, dropped) = super::table::fit(&t, cols);
    let note = super::table::left_out(&dropped, cols);
    format!(
        "{c}{}",
        note.strip_suffix('\n')
            .map_or(String::new(), |n| format!("\n{n}"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        let header = ["name", "what"];
        let rows = vec![vec!["a|b", "say \"hi\", twice"]];
        Document {
            what: "a test",
            json: serde_json::json!([{"name": "a|b"}]),
            csv: csv_rows(&header, &rows),
            table: table_rows(&header, &rows),
            markdown: markdown_rows(&header, &rows),
        }
    }

    #[test]
    fn each_format_one_way_and_the_metrics_refused_in_one_wording() {
        let d = doc();
        assert_eq!(
            emit(&d, Format::Csv).unwrap(),
            "name,what\na|b,\"say \"\"hi\"\", twice\"\n"
        );
        assert_eq!(
            emit(&d, Format::Markdown).unwrap(),
            "| name | what |\n|---|---|\n| a\\|b | say \"hi\", twice |\n"
        );
        assert!(emit(&d, Format::Table).unwrap().contains("┆"));
        let j: serde_json::Value = serde_json::from_str(&emit(&d, Format::Json).unwrap()).unwrap();
        assert_eq!(j[0]["name"], "a|b");
        for f in [Format::OpenMetrics, Format::Prometheus] {
            let e = emit(&d, f).unwrap_err();
            assert_eq!(e.code, 2);
            assert!(e.message.contains("not a test"), "{}", e.message);
        }
    }

    /// A cell stays one cell of one row whatever it holds, and no tag reaches
    /// the page: a backslash before a `|` cannot unescape it, a line break is a
    /// space, `<` is an entity.
    #[test]
    fn a_markdown_cell_is_text_in_one_cell() {
        let md = markdown_rows(&["a", "b"], &[vec!["x\\|y\n| z |", "<img src=x>"]]);
        assert_eq!(
            md,
            "| a | b |\n|---|---|\n| x\\\\\\|y \\| z \\| | &lt;img src=x> |\n"
        );
    }
}
