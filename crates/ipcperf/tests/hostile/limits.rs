//! Low limits a user or a container sets: address space, stack, queued
//! signals, a CPU quota. Each is said in a line or named with the run, never a
//! crash.

use super::*;

/// An address-space limit (`ulimit -v`) too low for the run: an allocation
/// that fails ends it in one line, its objects removed, exit 1, where Rust's
/// handler aborted ("memory allocation of 204800 bytes failed", exit 134).
/// Where too little is left beyond the binary's own mapping to work in (a
/// SIGSEGV with no word, the stack's next page refused), one line, exit 2.
/// Limits from the lowest at which the binary loads upward: each run ends
/// with 0, 1 or 2, and some of them with one of those lines. (glibc's own allocations, out
/// of our reach, may still abort: said as "Fatal glibc error", let pass.)
#[test]
fn an_address_space_limit_ends_a_run_in_a_line_not_an_abort() {
    if !can("address-space limits", &["prlimit"]) {
        return;
    }
    const MIB: u64 = 1 << 20;
    let under = |limit: u64, args: &[&str]| {
        let mut c = Command::new("prlimit");
        c.arg(format!("--as={limit}"))
            .arg(BIN)
            .args(args)
            .env("IPCPERF_NO_SAVE", "1");
        bounded_pid(c, Duration::from_secs(120))
    };
    let start = (8..400)
        .map(|m| m * MIB)
        .find(|&l| matches!(under(l, &["--version"]).1.status.code(), Some(0 | 2)))
        .expect("the binary loads under 400 MiB");
    let mut said = 0;
    let mut pids = Vec::new();
    for limit in (0..16).map(|m| start + m * MIB) {
        // prlimit execs the command: its pid is ipcperf's, whose SysV
        // semaphores `clean` would name by it.
        let (pid, out) = under(limit, &["sync", "-d", "10ms", "-r", "1"]);
        let err = text(&out.stderr);
        assert!(!err.contains("memory allocation of"), "{limit}: {err}");
        if err.contains("Fatal glibc error") {
            continue;
        }
        pids.push(pid);
        assert_no_signal(&out, &format!("--as={limit}"));
        assert!(matches!(out.status.code(), Some(0..=2)), "{limit}: {out:?}");
        if out.status.code() == Some(2) {
            assert!(
                err.contains("address-space limit") && err.lines().count() == 1,
                "{err}"
            );
            said += 1;
            continue;
        }
        if let Some(l) = err.lines().find(|l| l.contains("out of memory:")) {
            said += 1;
            let kib = limit / 1024;
            assert!(
                l.starts_with("ipcperf: out of memory: ")
                    && l.ends_with(&format!(
                        "bytes could not be had under an address-space limit of {kib} KiB \
                         (`ulimit -v`); named objects removed"
                    )),
                "{l}"
            );
            assert_eq!(out.status.code(), Some(1), "{limit}: {err}");
        }
    }
    assert!(said > 0, "no limit from {start} bytes up was too low");
    let left = Command::new(BIN)
        .args(["clean", "--dry-run"])
        .output()
        .unwrap();
    for l in text(&left.stdout).lines().chain(text(&left.stderr).lines()) {
        assert!(
            !pids.iter().any(|p| l.contains(&format!("pid {p})"))),
            "left behind: {l}"
        );
    }
}

/// A stack limit (`ulimit -s`) of 64 KiB overflowed in clap's parsing, even
/// for `--version` (SIGSEGV, exit 134): a soft one is raised, a hard one too
/// low is one line, exit 2.
#[test]
fn a_low_stack_limit_is_raised_or_said_once() {
    if !can("stack limits", &["prlimit"]) {
        return;
    }
    let under = |limit: &str, args: &[&str]| {
        let mut c = Command::new("prlimit");
        c.arg(format!("--stack={limit}"))
            .arg(BIN)
            .args(args)
            .env("IPCPERF_NO_SAVE", "1");
        bounded(c, Duration::from_secs(60))
    };
    let out = under(
        "65536:unlimited",
        &["latency", "pipe", "-d", "10ms", "-r", "1"],
    );
    assert_no_signal(&out, "stack 64 KiB, soft");
    assert!(out.status.success(), "{out:?}");
    let out = under("65536:65536", &["--version"]);
    assert_no_signal(&out, "stack 64 KiB, hard");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.lines().count() == 1 && err.contains("limited to 64 KiB (`ulimit -s`)"),
        "{err}"
    );
}

/// No signals may be queued (`ulimit -i 0`): the signal case names the limit,
/// where it said "sigqueue signal: Try again (EAGAIN)".
#[test]
fn a_full_signal_queue_names_its_limit() {
    if !can("signal-queue limits", &["prlimit"]) {
        return;
    }
    let mut c = Command::new("prlimit");
    c.arg("--sigpending=0")
        .arg(BIN)
        .args(["latency", "signal", "-d", "10ms", "-r", "1"])
        .env("IPCPERF_NO_SAVE", "1");
    let out = bounded(c, Duration::from_secs(60));
    assert_no_signal(&out, "sigpending 0");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = text(&out.stderr);
    assert!(err.contains("RLIMIT_SIGPENDING = 0 (`ulimit -i`)"), "{err}");
}

/// No bytes of POSIX queues allowed (`ulimit -q 0`): the case is refused with
/// the limit named, not the errno's words ("over the system's limit
/// RLIMIT_MSGQUEUE, …: Too many open files (EMFILE)" read as a descriptor
/// limit). Named alone, nothing else could run: bad input, exit 2.
#[test]
fn no_queue_bytes_is_said_as_the_queue_limit() {
    if !can("message-queue limits", &["prlimit"]) {
        return;
    }
    let mut c = Command::new("prlimit");
    c.arg("--msgqueue=0")
        .arg(BIN)
        .args(["latency", "posix-mq", "-d", "10ms", "-r", "1"])
        .env("IPCPERF_NO_SAVE", "1");
    let out = bounded(c, Duration::from_secs(60));
    assert_no_signal(&out, "msgqueue 0");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("this user's queues are at their limit, RLIMIT_MSGQUEUE = 0 bytes"),
        "{err}"
    );
    assert!(!err.contains("Too many open files"), "{err}");
}

/// Run in a cgroup whose CPU quota is half a CPU (a container's `--cpus 0.5`):
/// the quota is named before the run, its throttling after it, and both are
/// kept with the run (a figure otherwise held 30 ms stalls unexplained).
#[test]
fn a_cpu_quota_is_named_and_its_throttling_counted() {
    if !can("a cgroup of our own", &[]) {
        return;
    }
    let tag = format!("ipcperf-quota-{}", std::process::id());
    let v1 = Path::new("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists();
    let v2 = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control")
        .is_ok_and(|c| c.split_whitespace().any(|x| x == "cpu"));
    let cg = if v1 {
        PathBuf::from("/sys/fs/cgroup/cpu").join(&tag)
    } else if v2 {
        PathBuf::from("/sys/fs/cgroup").join(&tag)
    } else {
        eprintln!("skipped: no cgroup cpu controller to set a quota with");
        return;
    };
    std::fs::create_dir(&cg).unwrap();
    if v1 {
        std::fs::write(cg.join("cpu.cfs_period_us"), "100000").unwrap();
        std::fs::write(cg.join("cpu.cfs_quota_us"), "50000").unwrap();
    } else {
        std::fs::write(cg.join("cpu.max"), "50000 100000").unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
            cg.display()
        ))
        .arg(BIN)
        .args(["run", "pipe", "-s", "64k", "-d", "300ms", "-r", "2", "--db"])
        .arg(&db)
        .env_remove("IPCPERF_NO_SAVE");
    let out = bounded(c, Duration::from_secs(120));
    let _ = std::fs::remove_dir(&cg);
    assert_no_signal(&out, "under a quota");
    assert!(out.status.success(), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("cgroup (/{tag}) may use 0.50 CPUs' time")),
        "{err}"
    );
    let json = Command::new(BIN)
        .args(["export", "last", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let q = &v["machine"]["state"]["cpu_quota"];
    assert_eq!(q["quota_us"], 50000, "{q}");
    assert_eq!(q["period_us"], 100000, "{q}");
    // The quota is a rate, not fewer places to run: the machine's CPUs are
    // the affinity mask's (half a CPU's quota once read as "1 CPUs").
    let mask = ipcperf_sys::cpu::allowed_cpus().unwrap().len();
    assert_eq!(v["machine"]["cpus"], mask, "{}", v["machine"]);
    // A stream keeps its writer busy all along, and the reader most of it:
    // half a CPU for both binds in some period of 0.6 s of series and more.
    let n = q["throttled_periods"].as_u64().unwrap();
    assert!(n > 0, "{q}");
    assert!(
        err.contains(&format!("throttled the run in {n} periods")),
        "{err}"
    );
}
