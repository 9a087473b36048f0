//! `ipcperf pattern TRACE`: what an application's traffic looks like, from an
//! strace trace (or a CSV of time_ns,direction,size): its conversations, the
//! busiest first, each way's messages, sizes, gaps, duration and rate, and the
//! fitted pattern that describes it.

use std::path::PathBuf;

use clap::Args;

use crate::export::csv::CsvOut;
use crate::export::emit::{emit, Document};
use crate::export::Format;
use crate::fail::Fail;
use crate::pattern::table::{rows, table, Row};
use crate::pattern::{self, Conversation};

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  strace -f -ttt -yy -e trace=read,write,sendmsg,recvmsg,sendto,recvfrom -o app.trace ./myapp
  ipcperf pattern app.trace                # its conversations, the busiest first
  ipcperf pattern app.trace --format json
  ipcperf pattern pattern.csv              # time_ns,direction,size per line (> A to B, < B to A)
  ipcperf pattern --size-dist lognormal:300,2 --gaps poisson:20k --for 1s   # a described pattern

strace's -yy names what each descriptor is, so both ends of a pipe or socket pair are
found as one channel; without it, the ends are paired from the pipe, socketpair, dup,
close, fork/clone and execve calls when the trace holds them (trace them too, or
everything), else each process's descriptor is one, seen from its side. Two one-way
channels between two processes, requests on one and answers on the other, are one
conversation. -ff traces (FILE.PID) are read by naming FILE.")]
pub struct PatternArgs {
    /// The trace: strace's output (-f or -ff, with -t, -tt, -ttt or -r), or a CSV
    /// of time_ns,direction,size (direction > from A to B, < back; rows in time order).
    #[arg(required_unless_present = "sizes")]
    pub trace: Option<PathBuf>,
    /// Instead of a trace, a fitted pattern's size distribution: fixed:512,
    /// uniform:64,4k, lognormal:MEDIAN,SPREAD (with --gaps). Was --sizes, now
    /// the block size of every other command.
    #[arg(long = "size-dist", requires = "gaps", conflicts_with = "trace", value_parser = clap::value_parser!(pattern::fitted::Sizes), value_name = "DIST")]
    pub sizes: Option<pattern::fitted::Sizes>,
    /// Its gaps: fixed:RATE, poisson:RATE, bursts:COUNT,RATE_IN_A_BURST,BURSTS_A_SECOND;
    /// a rate a second (20k) or the mean gap (50us).
    #[arg(long, requires = "sizes", value_parser = clap::value_parser!(pattern::fitted::Gaps), value_name = "DIST")]
    pub gaps: Option<pattern::fitted::Gaps>,
    /// How long a fitted pattern runs (at most 10 million messages).
    #[arg(long = "for", default_value = "1s", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub for_: std::time::Duration,
    /// Show at most this many conversations (the busiest).
    #[arg(long, default_value_t = 20, value_parser = crate::units::parse_positive_count)]
    pub top: usize,
    /// Output format: table, markdown, json or csv (one record per conversation and way).
    #[arg(long, short, value_parser = crate::shared::choice::document_format(), default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: PatternArgs) -> Result<i32, Fail> {
    a.format.refuse_metrics("a traffic pattern")?;
    let (p, name) = match (&a.trace, &a.sizes, &a.gaps) {
        (_, Some(s), Some(g)) => (
            pattern::generate(s, g, a.for_.as_secs_f64(), 1),
            "a fitted pattern".to_string(),
        ),
        (Some(t), _, _) => (
            pattern::read(t).map_err(|e| Fail::usage(e.to_string()))?,
            t.display().to_string(),
        ),
        _ => return Err(Fail::usage("give a trace, or --size-dist and --gaps")),
    };
    let shown: Vec<&Conversation> = p.conversations.iter().take(a.top.max(1)).collect();
    let rows: Vec<Row> = shown.iter().flat_map(|c| rows(c)).collect();
    // Each record lists its conversation's channels.
    let mut json = serde_json::to_value(&rows).map_err(|e| Fail::failure(e.to_string()))?;
    if let Some(list) = json.as_array_mut() {
        for (j, r) in list.iter_mut().zip(&rows) {
            j["channels"] = serde_json::json!(r.channels);
        }
    }
    let mut csv = CsvOut::default();
    for r in &rows {
        csv.serialize(r).map_err(Fail::failure)?;
    }
    let doc = Document {
        what: "a traffic pattern",
        json,
        csv: csv.text(),
        table: table(&p, &shown, &name, a.top, Format::Table),
        markdown: table(&p, &shown, &name, a.top, Format::Markdown),
    };
    crate::console::out(&emit(&doc, a.format)?);
    // The table says them in its notes; records say them on stderr.
    if matches!(a.format, Format::Json | Format::Csv) {
        for n in &p.notes {
            crate::console::note(n);
        }
    }
    Ok(0)
}
