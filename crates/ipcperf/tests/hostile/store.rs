//! Hostile input to the run history: a database that cannot be written, imports
//! too big or absurd.

use super::*;

fn make_db(dir: &Path) -> PathBuf {
    let db = dir.join("h.db");
    let out = Command::new(BIN)
        .args([
            "run", "pipe", "--sizes", "4k", "-d", "20ms", "--repeat", "1", "--db",
        ])
        .arg(&db)
        .env_remove("IPCPERF_NO_SAVE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    db
}

#[test]
fn a_database_that_cannot_be_written_is_still_read() {
    if !can(
        "a read-only mount and another user",
        &["unshare", "mount", "setpriv"],
    ) || !nobody_can_run()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let db = make_db(dir.path());
    let d = dir.path().display();
    let reads = [
        "history",
        "show last",
        "export last",
        "report last -o /dev/null",
    ];
    for r in reads {
        // A read-only mount.
        let out = unshared(
            &["--mount", "--propagation", "private"],
            &format!("mount --bind -o ro {d} {d} && $B {r} --db {}", db.display()),
        );
        assert!(out.status.success(), "ro mount, {r}: {out:?}");
        // A file of root's, read by nobody.
        let mut args: Vec<&str> = r.split(' ').collect();
        let dbs = db.display().to_string();
        args.extend(["--db", &dbs]);
        let out = bounded(as_nobody(&args), Duration::from_secs(20));
        assert!(out.status.success(), "another user's file, {r}: {out:?}");
    }
    // `compare --remeasure` reads as compare does, but the run it measures
    // must be kept: on a read-only history, one line says so (exit 1), with
    // what to do instead. B: a run of three series, a thousand times slower in
    // a copy, so a row is called however noisy the three (twenty times slower
    // once was not, the machine loaded by two other test binaries).
    let db = dir.path().join("g.db");
    let out = Command::new(BIN)
        .args([
            "run", "pipe", "--sizes", "4k", "-d", "20ms", "-r", "3", "-q", "--db",
        ])
        .arg(&db)
        .env_remove("IPCPERF_NO_SAVE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = Command::new(BIN)
        .args(["export", "1", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["started_ms"] = (v["started_ms"].as_u64().unwrap() + 1).into();
    for s in v["cases"][0]["series"].as_array_mut().unwrap() {
        s["bytes"] = (s["bytes"].as_u64().unwrap() / 1000).into();
    }
    let slow = dir.path().join("slow.json");
    std::fs::write(&slow, serde_json::to_vec(&v).unwrap()).unwrap();
    let out = Command::new(BIN)
        .args(["import", "-q", "--db"])
        .arg(&db)
        .arg(&slow)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = unshared(
        &["--mount", "--propagation", "private"],
        &format!(
            "mount --bind -o ro {d} {d} && $B compare 1 2 --remeasure --db {}",
            db.display()
        ),
    );
    assert_eq!(out.status.code(), Some(1), "ro mount, --remeasure: {out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains("--remeasure: run history") && err.contains("--confirm C"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// A run file of `cases` copies of one real case, written as a stream: a forked
/// child's peak memory counts its parent's, so this process must stay small.
fn big_run_file(dir: &Path, cases: usize) -> PathBuf {
    use std::io::Write;
    let out = Command::new(BIN)
        .args([
            "run", "pipe", "--sizes", "4k", "-d", "10ms", "--repeat", "1", "-f", "json",
        ])
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = serde_json::to_string(&v["cases"][0]).unwrap();
    v["cases"] = serde_json::Value::Array(Vec::new());
    let head = serde_json::to_string(&v).unwrap();
    let head = head.strip_suffix("[]}").expect("cases come last");
    let p = dir.join(format!("run-{cases}.json"));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    w.write_all(head.as_bytes()).unwrap();
    w.write_all(b"[").unwrap();
    for i in 0..cases {
        if i > 0 {
            w.write_all(b",").unwrap();
        }
        w.write_all(case.as_bytes()).unwrap();
    }
    w.write_all(b"]}").unwrap();
    w.flush().unwrap();
    p
}

#[test]
fn an_import_streams_in_bounded_memory_and_a_killed_one_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = big_run_file(dir.path(), 60_000);
    let db = dir.path().join("h.db");
    // Bounded memory: the whole file is ~50 MB; the import holds one case at a time.
    // Reaped by wait4 (for its peak memory), not by `Child::wait`.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(BIN)
        .arg("import")
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (status, rss_kb) = ipcperf_sys::signal::wait_with_max_rss(child.id()).unwrap();
    assert_eq!(status, 0, "import failed");
    assert!(rss_kb < 64 * 1024, "import peaked at {rss_kb} KiB");
    // The same run again is refused, naming the run it is.
    let out = Command::new(BIN)
        .arg("import")
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        text(&out.stderr).contains("already kept as run 1"),
        "{out:?}"
    );

    // Killed while keeping: nothing of it is kept.
    let db2 = dir.path().join("h2.db");
    let wal = dir.path().join("h2.db-wal");
    let mut child = Command::new(BIN)
        .arg("import")
        .arg(&file)
        .arg("--db")
        .arg(&db2)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    // Into the transaction: the write-ahead log has grown past the schema.
    while std::fs::metadata(&wal).map_or(0, |m| m.len()) < 4 << 20 {
        assert!(child.try_wait().unwrap().is_none(), "import ended first");
        assert!(t0.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let out = Command::new(BIN)
        .args(["history", "--db"])
        .arg(&db2)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out.stdout).contains("No runs kept"), "{out:?}");

    // A file past the bound is refused before it is read.
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(129 << 20)
        .unwrap();
    let out = Command::new(BIN)
        .arg("import")
        .arg(&huge)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        text(&out.stderr).contains("more than a run import takes"),
        "{out:?}"
    );
}

/// A stream named as a file (a FIFO, `/dev/stdin` on a pipe, `<(…)`) is read
/// once and spooled: an endless one ends at the bound, within seconds, not
/// never; a run through one is kept (the second pass, keeping, read nothing).
#[test]
fn an_import_from_a_stream_is_bounded_and_read_once() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let fifo = dir.path().join("endless");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            let block = vec![b' '; 1 << 16];
            // Until the reader goes away.
            while f.write_all(&block).is_ok() {}
        })
    };
    let mut child = Command::new(BIN)
        .arg("import")
        .arg(&fifo)
        .arg("--db")
        .arg(&db)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("import of an endless FIFO still reading after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        text(&out.stderr).contains("endless: more than a run import takes"),
        "{out:?}"
    );
    writer.join().unwrap();
    // A run through /dev/stdin on a pipe.
    let run = std::fs::read(big_run_file(dir.path(), 2)).unwrap();
    let mut child = Command::new(BIN)
        .args(["import", "/dev/stdin", "--db"])
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || input.write_all(&run));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        text(&out.stdout).starts_with("/dev/stdin: run from "),
        "{out:?}"
    );
}

#[test]
fn absurd_imported_values_are_refused_with_the_field_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = big_run_file(dir.path(), 2);
    let db = dir.path().join("h.db");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 3] = [
        ("cases[1].block_size_bytes", |v| {
            v["cases"][1]["block_size_bytes"] = 0.into()
        }),
        ("cases[0].block_size_bytes", |v| {
            v["cases"][0]["block_size_bytes"] = u64::MAX.into()
        }),
        ("started_ms", |v| {
            v["started_ms"] = 32_503_680_000_000u64.into()
        }),
    ];
    for (field, edit) in edits {
        let mut bad = v.clone();
        edit(&mut bad);
        let p = dir.path().join("bad.json");
        std::fs::write(&p, serde_json::to_vec(&bad).unwrap()).unwrap();
        let out = Command::new(BIN)
            .arg("import")
            .arg(&p)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{field}: {out:?}");
        assert!(text(&out.stderr).contains(field), "{field}: {out:?}");
    }
    // Nothing was kept: no refused import made the history.
    assert!(!db.exists(), "a refused import made {}", db.display());
    let out = Command::new(BIN)
        .args(["history", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out.stderr).contains("no run history at"), "{out:?}");
}

/// The disk under the history fills while a run runs: the run goes on, its
/// results are printed, the whole run is written to the temporary directory
/// for `ipcperf import` (exit 1: it was not kept; said even with `-q`), and that import, once there
/// is room, replaces the unfinished run the history held.
#[test]
fn a_history_whose_disk_fills_mid_run_loses_nothing() {
    if !can("a private mount namespace", &["unshare", "mount"]) {
        return;
    }
    let out = unshared(
        &["--mount", "--propagation", "private"],
        r#"set -u; export IPCPERF_NO_SAVE=
        h=$(mktemp -d) && t=$(mktemp -d) && mount -t tmpfs -o size=320k tmpfs $h || exit 9
        export IPCPERF_DB=$h/h.db TMPDIR=$t
        $B run pipe --sizes 4k -d 20ms --repeat 1 -q >/dev/null || exit 9
        $B run pipe,unix --sizes 4k,64k -d 150ms -q >$t/out 2>$t/err & pid=$!
        i=0; until $B history 2>/dev/null | grep -q incomplete; do
            i=$((i+1)); [ $i -lt 400 ] || exit 9; sleep 0.02; done
        dd if=/dev/zero of=$h/fill bs=4k 2>/dev/null
        wait $pid; echo "RC=$?"; cat $t/err
        grep -q "^unix ·" $t/out && grep -q "^| 64 KiB" $t/out && echo PRINTED
        rm $h/fill
        $B import $t/ipcperf-run-*.json && $B history
        umount $h; rm -rf $h $t"#,
    );
    assert_no_signal(&out, "a run on a full disk");
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert!(o.contains("RC=1"), "exit 1: not kept\n{o}\n{e}");
    assert!(o.contains("PRINTED"), "the results printed\n{o}");
    // "0 bytes free" where it is full to the byte, "N KiB free" where not.
    assert!(
        o.contains("the file system holding")
            && (o.contains(" bytes free)") || o.contains(" KiB free)")),
        "the full disk named\n{o}"
    );
    assert!(
        o.contains("is not kept whole") && o.contains("ipcperf import"),
        "{o}"
    );
    assert!(o.contains("kept as run 3, in place of run 2"), "{o}\n{e}");
    // The history as if the disk had never filled: run 1, and the run whole.
    assert!(o.contains("| 3  | run  "), "{o}");
    assert!(!o.contains("incomplete"), "{o}");
}

/// A PostgreSQL URL at something that takes the connection and never speaks
/// (a web server on the port named, a stopped server): one line within twice
/// the connect timeout, where `history` and every saving run waited for ever.
#[test]
fn a_server_that_never_answers_is_a_line_not_a_hang() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accept and hold every connection, silent, until the test ends.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming() {
            held.push(c);
        }
    });
    let url = format!("postgres://x:secret@127.0.0.1:{port}/db?connect_timeout=2");
    let t0 = Instant::now();
    let mut c = Command::new(BIN);
    c.args(["history", "--db", &url]);
    let out = bounded(c, Duration::from_secs(30));
    let took = t0.elapsed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains("did not answer within 4 s") && !err.contains("secret"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// A shared history whose table another session holds locked (a migration, a
/// forgotten transaction): a bounded wait and one line, where every command
/// waited for the lock for ever. The URL's own `lock_timeout` (1 s here) wins
/// over ipcperf's 20 s.
#[test]
fn a_table_locked_by_another_session_is_a_line_not_a_hang() {
    let Ok(admin) = std::env::var("IPCPERF_TEST_PG") else {
        eprintln!("skipped: IPCPERF_TEST_PG is not set (.ci/run starts a server and sets it)");
        return;
    };
    let name = format!("ipcperf_lock_{}", std::process::id());
    let mut a = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    a.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap().to_string();
    let url = format!("{base}/{name}");
    let result = std::panic::catch_unwind(|| {
        let made = Command::new(BIN)
            .args([
                "run", "pipe", "-s", "4k", "-d", "20ms", "-r", "1", "--db", &url,
            ])
            .env_remove("IPCPERF_NO_SAVE")
            .output()
            .unwrap();
        assert!(made.status.success(), "{made:?}");
        let mut holder = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let mut tx = holder.transaction().unwrap();
        tx.batch_execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
            .unwrap();
        let t0 = Instant::now();
        let mut c = Command::new(BIN);
        c.args(["history", "--db"])
            .arg(format!("{url}?options=-c%20lock_timeout%3D1s"));
        let out = bounded(c, Duration::from_secs(30));
        let took = t0.elapsed();
        drop(tx);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("lock timeout") && err.contains("another session holds the table locked"),
            "{err}"
        );
        assert!(took < Duration::from_secs(10), "{took:?}");
    });
    let _ = a.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// A history named where no file can be made (a directory of /proc) says the
/// system's reason, which SQLite's "unable to open database file" leaves out;
/// it said "the file system holding /proc/self has 0 bytes free", which proc
/// always "has". Nothing is measured first.
#[test]
fn a_history_where_no_file_can_be_made_says_why() {
    let out = Command::new(BIN)
        .args([
            "run", "pipe", "--sizes", "4k", "-d", "20ms", "--repeat", "1",
        ])
        .env("IPCPERF_DB", "/proc/self/ipcperf-test.db")
        .env_remove("IPCPERF_NO_SAVE")
        .output()
        .unwrap();
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{o}\n{e}");
    assert!(
        e.contains("cannot create /proc/self/ipcperf-test.db: No such file or directory"),
        "{e}"
    );
    assert!(!e.contains("bytes free"), "{e}");
    assert!(!o.contains("pipe ·"), "nothing measured\n{o}");
}
