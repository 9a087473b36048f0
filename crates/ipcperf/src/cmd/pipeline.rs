//! `ipcperf pipeline`: Stover's timed pipelines. Each method is real processes
//! started through `/bin/sh` (or, for ipcperf's own mechanisms, a writer and a peer
//! process), timed from the start to the last process's exit, over `--repeat`
//! rounds that visit every method in turn. The result is an ordinary run record.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use ipcperf_core::mechanism::{MechOptions, MechanismKind};
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::observer::Quiet;
use ipcperf_core::payload::Payload;
use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
use ipcperf_core::record::{unix_ms, CaseRecord, CaseStatus, RunRecord, SeriesRecord};
use ipcperf_core::runner;
use ipcperf_core::stats::spread;
use ipcperf_sys::cleanup::{register, Undo};
use ipcperf_sys::clock::now_ns;
use ipcperf_sys::names::PrivateDir;

use super::gen::random_seed;
use super::sink::SinkReport;
use crate::cli::Format;
use crate::export::{self, view};
use crate::units::{self, fmt_mbps, fmt_size};
use crate::Fail;

#[derive(Args, Debug)]
pub struct PipelineArgs {
    /// Bytes each method moves (Stover: 512M; k = 1024). A multiple of --chunk.
    #[arg(long, short, default_value = "512M", value_parser = units::parse_size)]
    pub bytes: usize,

    /// Bytes per write and per read (Stover: 1k).
    #[arg(long, short, default_value = "1k", value_parser = units::parse_size)]
    pub chunk: usize,

    /// Rounds; each round runs every method once, in Stover's column order.
    #[arg(long, short, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// Directory for the temp file and the socket path (tmpfs or disk).
    #[arg(long)]
    pub dir: Option<PathBuf>,

    /// Output format (json is the run record).
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// How one of Stover's methods runs.
enum How {
    /// A shell command line; `counted` when it ends in a sink that reports its bytes.
    Shell { script: String, counted: bool },
    /// One of ipcperf's own mechanisms between two processes (None: not in this build).
    Mechanism(Option<MechanismKind>),
}

struct Method {
    /// The record's mechanism name.
    name: &'static str,
    /// What runs, in Stover's words.
    label: &'static str,
    how: How,
}

/// Quote for /bin/sh: inside single quotes everything is literal but `'` itself.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Stover's columns, in his order: msgq, tmp file, unix, pipe, |cat, >/dev/null.
fn methods(exe: &str, tmp: &str, bytes: usize, chunk: usize, seed: u64) -> Vec<Method> {
    let gen = format!(
        "{} gen --bytes {bytes} --chunk {chunk} --seed {seed}",
        sh_quote(exe)
    );
    let sink = format!("{} sink --chunk {chunk} --format json", sh_quote(exe));
    let tmp = sh_quote(tmp);
    let shell = |name, label, script: String, counted| Method {
        name,
        label,
        how: How::Shell { script, counted },
    };
    let own = |name: &'static str, label| Method {
        name,
        label,
        how: How::Mechanism(MechanismKind::from_name(name)),
    };
    vec![
        own("sysv-msg", "ipcperf's sysv-msg, writer + peer process"),
        shell(
            "tmp-file",
            "gen > tmp; sink < tmp; rm tmp",
            format!("{gen} > {tmp} && {sink} < {tmp} && rm {tmp}"),
            true,
        ),
        own("unix", "ipcperf's unix, writer + peer process"),
        shell("sh-pipe", "gen | sink", format!("{gen} | {sink}"), true),
        shell(
            "cat",
            "gen | cat > /dev/null",
            format!("{gen} | cat > /dev/null"),
            false,
        ),
        shell(
            "dev-null",
            "gen > /dev/null",
            format!("{gen} > /dev/null"),
            false,
        ),
    ]
}

/// What a shell run printed on stderr: the sink's report, if any. Any other line
/// (an error from gen, sink or the shell) fails the run.
fn sink_report(stderr: &str) -> Result<Option<SinkReport>, String> {
    let mut report = None;
    for line in stderr.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match serde_json::from_str::<SinkReport>(line) {
            Ok(r) if report.is_none() => report = Some(r),
            _ => return Err(line.to_string()),
        }
    }
    Ok(report)
}

/// Run `script` with `/bin/sh -c` in a process group of its own. Returns the time
/// from just before the start to the exit of the last process, with its stderr.
fn time_shell(script: &str, limit: Duration) -> Result<(u64, ExitStatus, String), String> {
    let t0 = now_ns();
    let child = Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start /bin/sh: {e}"))?;
    let group = child.id() as i32;
    // Ctrl-C reaches our process group, not this one: have the cleanup kill it
    // (a negative pid names a process group).
    let _kill = register(Undo::Kill(-group));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Reads stderr to end of file, then reaps the shell: every process is gone.
        let out = child.wait_with_output();
        let _ = tx.send((now_ns(), out));
    });
    match rx.recv_timeout(limit) {
        Ok((t1, Ok(out))) => Ok((
            t1 - t0,
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )),
        Ok((_, Err(e))) => Err(format!("waiting for /bin/sh: {e}")),
        Err(_) => {
            ipcperf_sys::signal::kill(-group);
            Err(format!("still running after {} s; killed", limit.as_secs()))
        }
    }
}

/// One timed run of a shell method: its series, or why it failed.
fn run_shell(script: &str, counted: bool, bytes: u64, limit: Duration) -> Result<u64, String> {
    let (ns, status, stderr) = time_shell(script, limit)?;
    let report = sink_report(&stderr);
    if !status.success() {
        let why = stderr.lines().rev().find(|l| !l.trim().is_empty());
        return Err(why.map_or_else(|| format!("/bin/sh: {status}"), str::to_string));
    }
    match report? {
        Some(r) if r.bytes != bytes => Err(format!("sink got {} bytes of {bytes}", r.bytes)),
        None if counted => Err("the sink wrote no report".into()),
        _ => Ok(ns),
    }
}

/// A record for a method, shaped like a two-process case of `spec`.
fn record(spec: &CaseSpec, name: &str, options: BTreeMap<String, String>) -> CaseRecord {
    let mut r = CaseRecord::for_spec(spec);
    r.mechanism = name.to_string();
    r.options = options;
    r
}

fn fail(rec: &mut CaseRecord, status: CaseStatus, message: String) {
    rec.status = status;
    rec.message = Some(message);
    rec.series.clear();
}

pub fn run(a: PipelineArgs) -> Result<i32, Fail> {
    if !a.bytes.is_multiple_of(a.chunk) {
        return Err(Fail::usage(format!(
            "--bytes {} is not a multiple of --chunk {}: every method must move the same chunks",
            a.bytes, a.chunk
        )));
    }
    if let Some(d) = a.dir.as_ref().filter(|d| !d.is_dir()) {
        return Err(Fail::usage(format!(
            "--dir {}: no such directory",
            d.display()
        )));
    }
    let exe = std::env::current_exe()
        .map_err(|e| Fail::failure(format!("cannot find this executable: {e}")))?;
    let env = RunEnv::new(PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?);
    let opts = MechOptions {
        dir: a.dir.clone(),
        ..MechOptions::default()
    };
    let tmp_dir = PrivateDir::create(&opts.base_dir(), "pipeline")
        .map_err(|e| Fail::failure(e.to_string()))?;
    let tmp = tmp_dir.join("tmp");
    let seed = random_seed();
    let bytes = a.bytes as u64;
    let blocks = bytes / a.chunk as u64;
    let limit = Duration::from_secs(60 + bytes / 10_000_000);
    let methods = methods(
        &exe.to_string_lossy(),
        &tmp.to_string_lossy(),
        a.bytes,
        a.chunk,
        seed,
    );

    let spec = |kind| CaseSpec {
        mechanism: kind,
        mode: Mode::Processes,
        block_size: a.chunk,
        placement: Placement::UNPINNED,
        payload: Payload::Touch,
        length: Length::Count { blocks },
        repeat: 1,
        include_setup: true,
        opts: opts.clone(),
    };
    let shape = spec(MechanismKind::Unix);
    let mut records: Vec<CaseRecord> = methods
        .iter()
        .map(|m| {
            let mut o = BTreeMap::from([("what".to_string(), m.label.to_string())]);
            match &m.how {
                How::Shell { script, .. } => {
                    o.insert("via".into(), "/bin/sh -c".into());
                    o.insert("command".into(), script.clone());
                    o.insert("seed".into(), seed.to_string());
                    o.insert("data".into(), "random printable ASCII".into());
                    record(&shape, m.name, o)
                }
                How::Mechanism(Some(kind)) => {
                    o.insert("timed".into(), "peer start, connect, transfer, exit".into());
                    o.extend(CaseRecord::for_spec(&spec(*kind)).options);
                    record(&spec(*kind), m.name, o)
                }
                How::Mechanism(None) => {
                    let mut r = record(&shape, m.name, o);
                    fail(
                        &mut r,
                        CaseStatus::Refused,
                        "not available in this build".into(),
                    );
                    r
                }
            }
        })
        .collect();

    let mut run = RunRecord::begin(std::env::args().collect());
    let progress = std::io::stderr().is_terminal();
    for round in 1..=a.repeat {
        for (m, rec) in methods.iter().zip(records.iter_mut()) {
            if !rec.is_ok() {
                continue;
            }
            if progress {
                eprint!("\r\x1b[Kpipeline: round {round}/{}: {}", a.repeat, m.label);
            }
            match &m.how {
                How::Shell { script, counted } => match run_shell(script, *counted, bytes, limit) {
                    Ok(ns) => rec.series.push(SeriesRecord {
                        blocks,
                        bytes,
                        elapsed_ns: ns,
                    }),
                    Err(e) => fail(rec, CaseStatus::Failed, e),
                },
                How::Mechanism(kind) => {
                    let kind = kind.expect("unavailable methods never run");
                    let got = runner::run_case(&spec(kind), &env, &mut Quiet);
                    if got.is_ok() {
                        rec.series.extend(got.series);
                        rec.placement = got.placement;
                    } else {
                        fail(rec, got.status, got.message.unwrap_or_default());
                    }
                }
            }
        }
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    drop(tmp_dir);
    for r in records.iter_mut().filter(|r| r.is_ok()) {
        r.summarize();
    }
    run.cases = records;
    run.finished_ms = Some(unix_ms());
    run.complete = true;

    let view = || build_view(&run, &methods, a.bytes, a.chunk, a.repeat);
    print!("{}", export::render_with(&run, a.format, view));
    let failed = run.cases.iter().any(|c| c.status == CaseStatus::Failed);
    Ok(i32::from(failed))
}

/// The seconds of each series of a case.
fn seconds(c: &CaseRecord) -> Vec<f64> {
    c.series.iter().map(|s| s.elapsed_ns as f64 / 1e9).collect()
}

/// Stover's two tables: times over the rounds, then throughput relative to the slowest.
fn build_view(
    run: &RunRecord,
    methods: &[Method],
    bytes: usize,
    chunk: usize,
    repeat: u32,
) -> view::View {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut medians = Vec::new();
    for (m, c) in methods.iter().zip(&run.cases) {
        match spread(&seconds(c)) {
            Some(s) if c.is_ok() => {
                rows.push(vec![
                    m.name.to_string(),
                    m.label.to_string(),
                    format!("{:.3}", s.min),
                    format!("{:.3}", s.median),
                    format!("{:.3}", s.max),
                    fmt_mbps(bytes as f64 / s.median),
                ]);
                medians.push((m.name, s.median));
            }
            _ => {
                let status = if c.status == CaseStatus::Refused {
                    "skipped"
                } else {
                    "FAILED"
                };
                rows.push(vec![
                    m.name.to_string(),
                    m.label.to_string(),
                    status.into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                ]);
                notes.push(format!(
                    "{}: {}",
                    m.name,
                    c.message.as_deref().unwrap_or("no result")
                ));
            }
        }
    }
    notes.push(
        "shell methods: ipcperf gen and sink through /bin/sh, random printable ASCII; \
         ipcperf's mechanisms: its own writer and reader loops (payload touched)"
            .into(),
    );
    notes.push("MB/s = 10^6 bytes per second at the median time".into());
    let times = view::Table {
        title: format!(
            "Stover's pipelines: {} in {} chunks, {repeat} round{}; seconds from start to the last process's exit",
            fmt_size(bytes as u64),
            fmt_size(chunk as u64),
            if repeat == 1 { "" } else { "s" }
        ),
        header: ["method", "what runs", "min s", "median s", "max s", "MB/s"]
            .map(String::from)
            .to_vec(),
        rows,
        notes,
    };
    let mut tables = vec![times];
    if let Some(slowest) = medians.iter().map(|m| m.1).reduce(f64::max) {
        let mut header = vec![String::new()];
        let mut row = vec!["relative".to_string()];
        for (name, t) in &medians {
            header.push(name.to_string());
            row.push(format!("{:.2}", slowest / t));
        }
        tables.push(view::Table {
            title: "Throughput relative to the slowest (Stover's row; median times)".into(),
            header,
            rows: vec![row],
            notes: Vec::new(),
        });
    }
    view::View {
        heading: view::heading(run),
        tables,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        assert_eq!(sh_quote("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn stderr_must_hold_only_the_sink_report() {
        let ok = r#"{"bytes":10,"reads":1,"seconds":0.1,"mb_per_sec":0.0001,"verified_seed":null}"#;
        assert_eq!(sink_report(ok).unwrap().unwrap().bytes, 10);
        assert_eq!(sink_report("\n").unwrap(), None);
        assert!(sink_report(&format!("ipcperf: error: gen: x\n{ok}")).is_err());
        assert!(sink_report(&format!("{ok}\n{ok}")).is_err());
    }
}
