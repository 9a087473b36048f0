//! A fuzz test of the command line: seeded argument vectors over every subcommand
//! and every flag of the binary's own command tree (`ipcperf __cli-tree`), values
//! drawn by kind (sizes, durations, counts, lists, paths, URLs, placement classes,
//! hostile strings).
//! Each must end within its bound with exit 0, 1 or 2 — never a signal, a panic
//! or an abort — and leave no named object, directory or process behind.
//!
//! IPCPERF_FUZZ_SEED=S reproduces a run (the seed is printed, and named on
//! failure); IPCPERF_FUZZ_SEED=random draws a new one;
//! IPCPERF_FUZZ_N=N changes how many vectors are tried (default 2000).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

#[path = "fuzz/vectors.rs"]
mod vectors;
use vectors::*;

/// Processes still running with `marker` in their environment (a vector's own).
fn marked(marker: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.split(|&b| b == 0).any(|kv| kv == marker.as_bytes()) {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            if !stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            {
                v.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    v
}

/// Named objects of run `pid` left in `tmp`, /dev/shm, SysV or POSIX queues.
fn objects_of(pid: u32, tmp: &Path) -> Vec<String> {
    let prefix = format!("ipcperf-{pid}-");
    let ours = |n: &str| {
        let n = n.trim_start_matches('/');
        n.strip_prefix("sem.").unwrap_or(n).starts_with(&prefix)
    };
    let mut left = Vec::new();
    for dir in [tmp, Path::new("/dev/shm")] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if ours(&e.file_name().to_string_lossy()) {
                left.push(e.path().display().to_string());
            }
        }
    }
    for q in ipcperf_sys::sysv_msg::list() {
        if ipcperf_sys::sysv_msg::owner_of_key(q.key) == Some(pid as i32) {
            left.push(format!("SysV queue {}", q.id));
        }
    }
    for (key, id, _) in ipcperf_sys::sem::sysv_sem_list() {
        if ipcperf_sys::sem::sem_owner_of_key(key) == Some(pid as i32) {
            left.push(format!("SysV semaphores {id}"));
        }
    }
    for n in ipcperf_sys::mqueue::list().unwrap_or_default() {
        if ours(&n) {
            left.push(format!("POSIX queue {n}"));
        }
    }
    left
}

/// How many vectors ended with exit 0, 1 and 2.
static EXITS: [std::sync::atomic::AtomicUsize; 3] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 3];

/// Run one vector; None when it kept every promise.
fn try_one(n: usize, args: &[String], dir: &Path) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let marker = format!("IPCPERF_FUZZ_CASE={}-{n}", std::process::id());
    let (k, v) = marker.split_once('=').unwrap();
    // Run in the test's own directory: a relative path a vector names (a hostile
    // string taken for a file name) lands there, never in the checkout.
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .env("IPCPERF_NO_SAVE", "1")
        .env(k, v)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    let t0 = Instant::now();
    let limit = Duration::from_secs(60);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Some(format!("still running after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let err = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    if let Some(sig) = status.signal() {
        return Some(format!("killed by signal {sig}; stderr: {err}"));
    }
    match status.code() {
        Some(c @ 0..=2) => {
            EXITS[c as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        _ => return Some(format!("exit {status}; stderr: {err}")),
    }
    if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
        return Some(format!("panicked: {err}"));
    }
    if status.code() == Some(2) && !err.starts_with("ipcperf") {
        return Some(format!("bad input without ipcperf's one line: {err:?}"));
    }
    // Children die with their parent: give a peer a moment to go.
    let t = Instant::now();
    let mut alive = marked(&marker);
    while !alive.is_empty() && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
        alive = marked(&marker);
    }
    if !alive.is_empty() {
        return Some(format!("left processes {alive:?}"));
    }
    let left = objects_of(pid, dir);
    (!left.is_empty()).then(|| format!("left objects {left:?}"))
}

#[test]
fn generated_command_lines_each_end_cleanly() {
    // A fixed seed unless one is given; `random` draws one from the clock.
    let seed: u64 = match std::env::var("IPCPERF_FUZZ_SEED").ok().as_deref() {
        Some("random") => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        Some(s) => s.parse().expect("IPCPERF_FUZZ_SEED: a number or `random`"),
        None => 0x1bc_9e7f_2026_1123,
    };
    let count: usize = std::env::var("IPCPERF_FUZZ_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A history with a run in it, a run file to import and a broken one.
    let out = Command::new(BIN)
        .args([
            "run", "pipe", "--sizes", "64,4k", "-d", "5ms", "--repeat", "1", "-f", "json", "--db",
        ])
        .arg(d.join("h.db"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::write(d.join("run.json"), &out.stdout).unwrap();
    std::fs::write(d.join("bad.json"), &out.stdout[..out.stdout.len() / 2]).unwrap();

    let subs: Vec<Sub> = tree(BIN)
        .into_iter()
        .filter(|s| !NOT_GENERATED.iter().any(|(n, _)| *n == s.name))
        .collect();
    assert!(
        subs.len() > 15,
        "the command tree names {} subcommands",
        subs.len()
    );
    // A few lines that are no subcommand at all.
    let odd: Vec<Sub> = ["nosuch", "__peer", "--help", "--version", ""]
        .iter()
        .map(|n| Sub {
            name: n.to_string(),
            args: Vec::new(),
        })
        .collect();
    let mut r = Rng((seed ^ 0x9e37_79b9_7f4a_7c15) | 1);
    let vectors: Vec<Vec<String>> = (0..count)
        .map(|_| {
            let s = if r.chance(3) {
                &odd[r.below(odd.len())]
            } else {
                &subs[r.below(subs.len())]
            };
            vector(&mut r, s, d)
        })
        .collect();
    eprintln!(
        "seed {seed}: {count} vectors over {} subcommands",
        subs.len()
    );
    let next = Mutex::new(0usize);
    let slow = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(args) = vectors.get(i) else {
                    return;
                };
                let t = Instant::now();
                let verdict = try_one(i, args, d);
                slow.lock().unwrap().push((t.elapsed(), i));
                if let Some(why) = verdict {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("#{i} {args:?}: {why}"));
                }
            });
        }
    });
    let mut slow = slow.into_inner().unwrap();
    slow.sort();
    for (t, i) in slow.iter().rev().take(8) {
        eprintln!("  slowest: {t:.1?} #{i} {:?}", vectors[*i]);
    }
    let mut f = failures.into_inner().unwrap();
    // Nothing of the machine's was touched: the devices the vectors name are
    // still devices (an export once renamed a file over /dev/null).
    for dev in ["/dev/null", "/dev/full"] {
        use std::os::unix::fs::FileTypeExt;
        let t = std::fs::metadata(dev).map(|m| m.file_type());
        if !t.is_ok_and(|t| t.is_char_device()) {
            f.push(format!("{dev} is no longer a device"));
        }
    }
    if d.join("nonexistent").exists() {
        f.push("a directory named only in a path argument was made".into());
    }
    assert!(
        f.is_empty(),
        "seed {seed}: {} of {count} vectors broke a promise:\n{}",
        f.len(),
        f.join("\n")
    );
    let e: Vec<usize> = EXITS
        .iter()
        .map(|x| x.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    eprintln!(
        "seed {seed}: {count} command lines ended cleanly in {:.0?} (exit 0: {}, 1: {}, 2: {})",
        t0.elapsed(),
        e[0],
        e[1],
        e[2]
    );
    // The vectors must reach real runs and real failures, not only argument errors.
    assert!(e[0] > count / 10 && e[2] > count / 10, "{e:?}");
}
