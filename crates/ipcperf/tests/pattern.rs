//! `ipcperf pattern` on traces of a real program made here: a request/reply
//! program (C, compiled with cc) over two pipes and over a Unix socket pair,
//! traced by Debian's strace with -yy (both ends found as one conversation),
//! without it (each side's descriptors), and with -ff (a file per process). The
//! conversations must be found with the program's sizes and counts.

use std::path::Path;
use std::process::Command;

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

/// 25 requests of 90 bytes from the parent, each answered with 200 bytes by the
/// child: over two pipes (`pipe`) or a socket pair (`unix`, send/recv).
const PROGRAM: &str = r#"
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
static void all(int fd, char *b, size_t n, int rd) {
    size_t d = 0;
    while (d < n) {
        ssize_t r = rd ? read(fd, b + d, n - d) : write(fd, b + d, n - d);
        if (r <= 0) _exit(3);
        d += (size_t)r;
    }
}
int main(int argc, char **argv) {
    int up[2], down[2];
    char q[90], a[200];
    memset(q, 'q', sizeof q);
    memset(a, 'a', sizeof a);
    int sock = argc > 1 && strcmp(argv[1], "unix") == 0;
    if (sock) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, up)) return 1;
        down[0] = up[0]; down[1] = up[1];
    } else if (pipe(up) || pipe(down)) {
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int in = sock ? up[1] : up[0], out = sock ? up[1] : down[1];
        for (int i = 0; i < 25; i++) {
            if (sock) { if (recv(in, q, sizeof q, MSG_WAITALL) != sizeof q) _exit(2);
                        if (send(out, a, sizeof a, 0) != sizeof a) _exit(2); }
            else { all(in, q, sizeof q, 1); all(out, a, sizeof a, 0); }
        }
        _exit(0);
    }
    int out = sock ? up[0] : up[1], in = sock ? up[0] : down[0];
    for (int i = 0; i < 25; i++) {
        if (sock) { if (send(out, q, sizeof q, 0) != sizeof q) return 2;
                    if (recv(in, a, sizeof a, MSG_WAITALL) != sizeof a) return 2; }
        else { all(out, q, sizeof q, 0); all(in, a, sizeof a, 1); }
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
}
"#;

/// The program, compiled into `dir`.
fn program(dir: &Path) -> std::path::PathBuf {
    let src = dir.join("reqrep.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = dir.join("reqrep");
    let out = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// `strace FLAGS -o TRACE PROGRAM ARG`.
fn trace(exe: &Path, arg: &str, flags: &[&str], trace: &Path) {
    let out = Command::new("strace")
        .args(flags)
        .args([
            "-e",
            "trace=read,write,sendmsg,recvmsg,sendto,recvfrom",
            "-o",
        ])
        .arg(trace)
        .arg(exe)
        .arg(arg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ipcperf pattern TRACE --format json`: one record per conversation and way.
fn pattern(trace: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(BIN)
        .arg("pattern")
        .arg(trace)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

/// The (messages, size p50, size max) of each way shown, busiest conversation first.
fn flows(rows: &[serde_json::Value], n: usize) -> Vec<(u64, u64, u64, String)> {
    rows.iter()
        .take(n)
        .map(|r| {
            (
                r["messages"].as_u64().unwrap(),
                r["size_p50"].as_u64().unwrap(),
                r["size_max"].as_u64().unwrap(),
                r["way"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn request_reply_programs_traced_by_strace() {
    if !common::have("strace") || !common::have("cc") {
        eprintln!("skipped: needs strace and cc (apt-get install strace gcc; .ci/run does)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = program(dir.path());

    // A socket pair with -yy: one conversation, both ways, both ends.
    let t = dir.path().join("unix.trace");
    trace(&exe, "unix", &["-f", "-ttt", "-yy"], &t);
    let rows = pattern(&t);
    let first = &rows[0];
    assert_eq!(first["conversation"], 1);
    assert!(
        first["channel"]
            .as_str()
            .unwrap()
            .starts_with("UNIX-STREAM"),
        "{first}"
    );
    assert_eq!(first["both_sides"], true);
    assert_eq!(
        flows(&rows, 2),
        [(25, 90, 90, "A→B".into()), (25, 200, 200, "B→A".into())],
        "{rows:#?}"
    );
    assert_eq!(
        first["fitted"].as_str().unwrap().split(' ').nth(1),
        Some("fixed:90")
    );

    // Two pipes with -yy: two conversations, each one way, 25 messages.
    let t = dir.path().join("pipe.trace");
    trace(&exe, "pipe", &["-f", "-ttt", "-yy"], &t);
    let rows = pattern(&t);
    let mut pipes: Vec<(u64, u64, u64, String)> = flows(&rows, 2);
    pipes.sort();
    assert_eq!(
        pipes,
        [(25, 90, 90, "A→B".into()), (25, 200, 200, "A→B".into())],
        "{rows:#?}"
    );
    assert!(rows[..2]
        .iter()
        .all(|r| r["channel"].as_str().unwrap().starts_with("pipe:[") && r["both_sides"] == true));

    // Without -yy (and -tt, -ff: a file per process): each process's descriptor
    // is a conversation seen from its side: the parent writes the requests out
    // and reads the replies in; the child reads the requests in and writes the
    // replies out.
    let t = dir.path().join("ff.trace");
    trace(&exe, "pipe", &["-ff", "-tt"], &t);
    let rows = pattern(&t);
    let mut found: Vec<(u64, u64, u64, String)> = flows(&rows, 4);
    found.sort();
    assert_eq!(
        found,
        [
            (25, 90, 90, "A→B".into()),
            (25, 90, 90, "B→A".into()),
            (25, 200, 200, "A→B".into()),
            (25, 200, 200, "B→A".into()),
        ],
        "{rows:#?}"
    );
    assert!(rows.iter().all(|r| r["both_sides"] == false));
}

#[test]
fn bad_traces_are_refused_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        (
            "100 1795676566.520100 write(3, \"x\", 1) = 1\n100 1795676566.5x write(3, \"x\", 1) = 1\n",
            "line 2: ",
        ),
        ("100 1795676566.520100 openat(AT_FDCWD, \"/x\", O_RDONLY) = 3\n", "no conversation"),
        ("time_ns,direction,size\n0,>,10\n5,sideways,10\n", "line 3: direction"),
        ("", "no conversation"),
    ] {
        let f = dir.path().join("bad.trace");
        std::fs::write(&f, text).unwrap();
        let out = Command::new(BIN).arg("pattern").arg(&f).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want) && err.lines().count() == 1, "{text}: {err}");
    }
    // A missing file; a device that never ends; a FIFO nobody writes to (opening
    // it would wait forever): each refused at once.
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for path in ["/nonexistent/trace", "/dev/zero", fifo.to_str().unwrap()] {
        let t0 = std::time::Instant::now();
        let out = Command::new(BIN).args(["pattern", path]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{path}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(10), "{path}");
    }
}
