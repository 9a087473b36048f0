//! `ipcperf pipeline`: Stover's timed pipelines. Each method is real processes
//! started through `/bin/sh` (or, for ipcperf's own mechanisms, a writer and a peer
//! process), timed from the start to the last process's exit, over `--repeat`
//! rounds that visit every method in turn. The result is an ordinary run record.

use std::io::IsTerminal;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use clap::Args;
use ipcperf_core::mechanism::{MechOptions, MechanismKind};
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::observer::Quiet;
use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
use ipcperf_core::record::{unix_ms, CaseRecord, CaseStatus, RunRecord, SeriesRecord};
use ipcperf_core::runner;
use ipcperf_sys::cleanup::{register, Undo};
use ipcperf_sys::clock::{children_cpu_ns, now_ns};
use ipcperf_sys::names::PrivateDir;

use crate::export::Format;
use crate::fail::Fail;
use crate::shared::db::{SaveArgs, Saver};
use crate::shared::gen_sink::random_seed;
use crate::shared::gen_sink::SinkReport;
use crate::units::{self, fmt_size};

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf pipeline\n  ipcperf pipeline --bytes 1G --chunk 64k --repeat 5"
)]
pub struct PipelineArgs {
    /// Bytes each method moves (Stover: 512M): 1M and 1MiB are 2^20, 1MB is 10^6.
    /// A multiple of --chunk.
    #[arg(long, short, default_value = "512M", value_parser = units::parse_bytes)]
    pub bytes: usize,

    /// Bytes per write and per read (Stover: 1k).
    #[arg(long, short, default_value = "1k", value_parser = units::parse_block)]
    pub chunk: usize,

    /// Rounds; each round runs every method once, in Stover's column order.
    #[arg(long, short, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// Directory for the temp file and the socket path (tmpfs or disk).
    #[arg(long)]
    pub dir: Option<PathBuf>,

    /// Output format (json is the run record).
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub save: SaveArgs,
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

/// What one shell run took and said.
#[derive(Debug)]
struct ShellRun {
    /// From just before the start to the exit of the last process.
    elapsed_ns: u64,
    /// CPU time of all its processes together.
    cpu_ns: u64,
    status: ExitStatus,
    stderr: String,
}

/// Run `script` with `/bin/sh -c` in a process group of its own.
fn time_shell(script: &str, limit: Duration) -> Result<ShellRun, String> {
    let cpu0 = children_cpu_ns();
    let t0 = now_ns();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    // Killed with us, even by SIGKILL; gen and sink die with the shell in turn.
    ipcperf_sys::signal::command_dies_with_parent(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start /bin/sh: {e}"))?;
    let group = child.id() as i32;
    // Ctrl-C reaches our process group, not this one: have the cleanup kill it
    // (a negative pid names a process group).
    let _kill = register(Undo::Kill(-group));
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("ipcperf-shell".into())
        .spawn(move || {
            // Reads stderr to end of file, then reaps the shell: every process is gone.
            let out = child.wait_with_output();
            let _ = tx.send((now_ns(), out));
        });
    if let Err(e) = waiter {
        // The child went with the closure: the group still runs. End it.
        ipcperf_sys::signal::kill(-group);
        return Err(format!("cannot start a thread to wait for /bin/sh: {e}"));
    }
    match rx.recv_timeout(limit) {
        Ok((t1, Ok(out))) => Ok(ShellRun {
            elapsed_ns: t1 - t0,
            cpu_ns: children_cpu_ns() - cpu0,
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }),
        Ok((_, Err(e))) => Err(format!("waiting for /bin/sh: {e}")),
        Err(e) => {
            ipcperf_sys::signal::kill(-group);
            Err(match e {
                RecvTimeoutError::Timeout => {
                    format!("still running after {} s; killed", limit.as_secs())
                }
                RecvTimeoutError::Disconnected => "lost the wait for /bin/sh; killed".into(),
            })
        }
    }
}

/// One timed run of a shell method, or why it failed.
fn run_shell(script: &str, counted: bool, bytes: u64, limit: Duration) -> Result<ShellRun, String> {
    let run = time_shell(script, limit)?;
    if !run.status.success() {
        let why = run.stderr.lines().rev().find(|l| !l.trim().is_empty());
        return Err(why.map_or_else(|| format!("/bin/sh: {}", run.status), str::to_string));
    }
    match sink_report(&run.stderr)? {
        Some(r) if r.bytes != bytes => Err(format!("sink got {} bytes of {bytes}", r.bytes)),
        None if counted => Err("the sink wrote no report".into()),
        _ => Ok(run),
    }
}

/// What every method of one pipeline run shares.
struct Setting {
    bytes: u64,
    chunk: usize,
    seed: u64,
    opts: MechOptions,
    env: RunEnv,
    /// The longest a shell method may run before it is killed.
    limit: Duration,
}

impl Setting {
    /// Two processes, unpinned, payload touched, set-up timed: the shape of every row.
    fn spec(&self, kind: MechanismKind) -> CaseSpec {
        CaseSpec {
            length: Length::Count {
                blocks: self.bytes / self.chunk as u64,
            },
            include_setup: true,
            opts: self.opts.clone(),
            ..CaseSpec::new(kind, Mode::Processes, self.chunk, Placement::UNPINNED)
        }
    }

    /// The record a method's rounds fill in.
    fn record(&self, m: &Method) -> CaseRecord {
        let kind = match m.how {
            How::Mechanism(Some(kind)) => kind,
            _ => MechanismKind::Unix,
        };
        let mut r = CaseRecord::for_spec(&self.spec(kind));
        r.mechanism = m.name.to_string();
        r.options.insert("what".into(), m.label.into());
        match &m.how {
            How::Shell { script, .. } => {
                let seed = self.seed.to_string();
                r.options.extend(
                    [
                        ("via", "/bin/sh -c"),
                        ("command", script),
                        ("seed", &seed),
                        ("data", "random printable ASCII"),
                        ("cpu", "of all its processes, as writer_cpu_ns"),
                    ]
                    .map(|(k, v)| (k.to_string(), v.to_string())),
                );
            }
            How::Mechanism(Some(_)) => {
                r.options.insert(
                    "timed".into(),
                    "peer start, connect, transfer, peer exit".into(),
                );
            }
            How::Mechanism(None) => fail(
                &mut r,
                CaseStatus::Refused,
                "not available in this build".into(),
            ),
        }
        r
    }

    /// One round of method `m`: a series added to `rec`, or `rec` marked failed.
    fn run_once(&self, m: &Method, rec: &mut CaseRecord) {
        match &m.how {
            How::Shell { script, counted } => {
                // Its processes run in a group of their own, which a Ctrl-Z does
                // not stop: the round is timed here, so one that held a stop of
                // ours is taken again.
                let got = ipcperf_core::stop::unstopped(&mut rec.options, || {
                    Ok(run_shell(script, *counted, self.bytes, self.limit))
                })
                .unwrap_or_else(|e| Err(e.to_string()));
                match got {
                    Ok(run) => rec.series.push(SeriesRecord {
                        blocks: self.bytes / self.chunk as u64,
                        bytes: self.bytes,
                        elapsed_ns: run.elapsed_ns,
                        // A pipeline's processes are not split into writer and
                        // reader: their CPU time together, so CPUs busy stays true.
                        writer_cpu_ns: run.cpu_ns,
                        reader_cpu_ns: None,
                        writer_counts: None,
                        reader_counts: None,
                    }),
                    Err(e) => fail(rec, CaseStatus::Failed, e),
                }
            }
            How::Mechanism(Some(kind)) => {
                let got = runner::run_case(&self.spec(*kind), &self.env, &mut Quiet);
                // What the runner took again after a stop, counted with the rounds'.
                let n = ipcperf_core::stop::retaken(&got.options);
                ipcperf_core::stop::count_retaken(&mut rec.options, n);
                if got.is_ok() {
                    rec.series.extend(got.series);
                    rec.placement = got.placement;
                } else {
                    fail(rec, got.status, got.message.unwrap_or_default());
                }
            }
            How::Mechanism(None) => {}
        }
    }
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
    if let Some(d) = &a.dir {
        crate::shared::values::usable_dir(d)?;
    }
    // The temp-file method writes all of --bytes there first.
    let base = a
        .dir
        .clone()
        .unwrap_or_else(ipcperf_sys::names::default_base);
    if let Ok(free) = ipcperf_sys::fd::free_bytes(&base) {
        if a.bytes as u64 > free / 10 * 9 {
            return Err(Fail::usage(format!(
                "--bytes {}: the temp-file method would not fit in {} ({} free); \
                 give fewer bytes or --dir on a larger file system",
                fmt_size(a.bytes as u64),
                base.display(),
                fmt_size(free)
            )));
        }
    }
    let exe = std::env::current_exe()
        .map_err(|e| Fail::failure(format!("cannot find this executable: {e}")))?;
    let set = Setting {
        bytes: a.bytes as u64,
        chunk: a.chunk,
        seed: random_seed(),
        opts: MechOptions {
            dir: a.dir.clone(),
            ..MechOptions::default()
        },
        env: RunEnv::new(PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?),
        limit: Duration::from_secs(60 + a.bytes as u64 / 10_000_000),
    };
    let tmp_dir = PrivateDir::create(&set.opts.base_dir(), "pipeline")
        .map_err(|e| Fail::failure(e.to_string()))?;
    let methods = methods(
        &exe.to_string_lossy(),
        &tmp_dir.join("tmp").to_string_lossy(),
        a.bytes,
        a.chunk,
        set.seed,
    );
    let mut run = RunRecord::begin("pipeline", std::env::args().collect());
    let mut saver = Saver::start(&a.save, &mut run)?;
    let mut records: Vec<CaseRecord> = methods.iter().map(|m| set.record(m)).collect();
    // Progress on a terminal, as every measuring command's bar; none under -q
    // ("the results only": its rounds were drawn there too).
    let progress = std::io::stderr().is_terminal() && !ipcperf_results::console::quiet();
    for round in 1..=a.repeat {
        for (m, rec) in methods.iter().zip(records.iter_mut()) {
            if rec.is_ok() {
                if progress {
                    ipcperf_results::console::err_raw(&format!(
                        "\r\x1b[Kpipeline: round {round}/{}: {}",
                        a.repeat,
                        ipcperf_results::console::printable(m.label)
                    ));
                }
                set.run_once(m, rec);
            }
        }
    }
    if progress {
        ipcperf_results::console::err_raw("\r\x1b[K");
    }
    drop(tmp_dir);
    for r in records.iter_mut().filter(|r| r.is_ok()) {
        r.summarize();
    }
    // A case gathers its series over every round, so each is kept once all have run.
    for r in &records {
        saver.save_case(r);
    }
    run.cases = records;
    crate::shared::ending::stops_said(&run);
    run.finished_ms = Some(unix_ms());
    run.complete = true;
    let kept = saver.finish_quietly(&run);
    crate::console::out(&crate::document::document(&run, a.format, None));
    // Where it was kept, after the results (as every measuring command says it).
    if let Some(k) = kept {
        k.say();
    }
    // A failed case, or a run the history stopped taking (written to a file).
    let failed = run.cases.iter().any(|c| c.status == CaseStatus::Failed);
    Ok(i32::from(failed || saver.lost()))
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

    const SEC: Duration = Duration::from_secs(10);

    /// Processes in process group `group` that are not zombies, from /proc.
    fn running_in_group(group: i32) -> usize {
        let stats = std::fs::read_dir("/proc").unwrap().filter_map(|e| {
            let stat = std::fs::read_to_string(e.ok()?.path().join("stat")).ok()?;
            // After "pid (comm) ": state, ppid, pgrp.
            let rest = stat.rsplit_once(") ")?.1.to_string();
            Some(rest)
        });
        stats
            .filter(|rest| {
                let f: Vec<&str> = rest.split(' ').collect();
                f.get(2) == Some(&group.to_string().as_str()) && f[0] != "Z"
            })
            .count()
    }

    #[test]
    fn a_shell_run_fails_on_status_stray_output_or_a_short_count() {
        let err = |script: &str, counted| run_shell(script, counted, 10, SEC).err();
        assert_eq!(
            err("echo it broke >&2; exit 3", false).as_deref(),
            Some("it broke")
        );
        assert!(err("exit 3", false).unwrap().contains("exit status: 3"));
        assert_eq!(err("echo oops >&2", false).as_deref(), Some("oops"));
        assert_eq!(
            err("true", true).as_deref(),
            Some("the sink wrote no report")
        );
        let report =
            |n| format!(r#"echo '{{"bytes":{n},"reads":1,"seconds":1,"mb_per_sec":1}}' >&2"#);
        assert_eq!(
            err(&report(9), true).as_deref(),
            Some("sink got 9 bytes of 10")
        );
        let ok = run_shell(&report(10), true, 10, SEC).unwrap();
        assert!(ok.elapsed_ns > 0);
    }

    #[test]
    fn a_shell_run_past_its_limit_is_killed_with_all_its_processes() {
        let dir = PrivateDir::create(&ipcperf_sys::names::default_base(), "t").unwrap();
        let pid_file = dir.join("pid");
        let script = format!(
            "echo $$ > {}; sleep 30 & sleep 30; wait",
            sh_quote(&pid_file.to_string_lossy())
        );
        let t0 = std::time::Instant::now();
        let e = run_shell(&script, false, 0, Duration::from_millis(300)).unwrap_err();
        assert!(e.contains("killed"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        let group: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Every process of the group (the shell and both sleeps) is dead soon after
        // (zombies wait for whoever reaps them: they no longer run).
        let gone = (0..200).position(|_| {
            std::thread::sleep(Duration::from_millis(10));
            running_in_group(group) == 0
        });
        assert!(gone.is_some(), "process group {group} still running");
    }
}
