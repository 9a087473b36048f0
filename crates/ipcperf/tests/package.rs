//! The Debian package (`packaging/deb.sh`, cargo-deb) holds a binary that runs, a
//! manual page per subcommand that `man` reads and completions for three shells:
//! it is made from the binary under test and installed into a scratch root
//! (`dpkg --root`), never into the machine's own.

use std::path::Path;
use std::process::Command;

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

#[test]
fn the_deb_installs_into_a_scratch_root_and_its_binary_and_man_pages_work() {
    for tool in ["dpkg", "cargo-deb", "man"] {
        if !common::have(tool) {
            eprintln!("skipped: {tool} is not installed (.ci/run installs it)");
            return;
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("deb");
    let made = Command::new("bash")
        .arg(root.join("packaging/deb.sh"))
        .arg("--binary")
        .arg(BIN)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "deb.sh: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let deb = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .expect("a .deb");
    // A scratch root with an empty dpkg database: nothing of the machine's is touched.
    let r = work.path().join("root");
    std::fs::create_dir_all(r.join("var/lib/dpkg/info")).unwrap();
    std::fs::create_dir_all(r.join("var/lib/dpkg/updates")).unwrap();
    std::fs::write(r.join("var/lib/dpkg/status"), "").unwrap();
    let inst = Command::new("dpkg")
        .arg(format!("--root={}", r.display()))
        .args([
            "--force-script-chrootless",
            "--force-not-root",
            "--force-depends",
            "--log=/dev/null",
            "-i",
        ])
        .arg(&deb)
        .output()
        .unwrap();
    assert!(
        inst.status.success(),
        "dpkg -i: {}",
        String::from_utf8_lossy(&inst.stderr)
    );
    let v = Command::new(r.join("usr/bin/ipcperf"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(v.status.success());
    assert_eq!(
        String::from_utf8_lossy(&v.stdout).trim(),
        format!("ipcperf {}", env!("CARGO_PKG_VERSION"))
    );
    // Every library mechanism is in the package's binary.
    let list = Command::new(r.join("usr/bin/ipcperf"))
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for lib in ["\"zmq-ipc\"", "\"iceoryx2\"", "\"grpc-uds\""] {
        assert!(list.contains(lib), "{lib} is not in the packaged binary");
    }
    let man = r.join("usr/share/man/man1");
    for page in ["ipcperf.1.gz", "ipcperf-run.1.gz", "ipcperf-latency.1.gz"] {
        let m = Command::new("man")
            .arg("-l")
            .arg(man.join(page))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        assert!(m.status.success(), "man -l {page}");
        let text = String::from_utf8_lossy(&m.stdout);
        assert!(
            text.contains("NAME") && text.contains("ipcperf"),
            "{page}: {text}"
        );
    }
    for c in [
        "usr/share/bash-completion/completions/ipcperf",
        "usr/share/zsh/vendor-completions/_ipcperf",
        "usr/share/fish/vendor_completions.d/ipcperf.fish",
    ] {
        let text = std::fs::read_to_string(r.join(c)).unwrap();
        assert!(text.contains("latency"), "{c}");
    }
}
