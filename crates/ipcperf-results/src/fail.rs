//! The error a command ends with: one line for the user and its exit code.

/// The exit codes, one per outcome (the man page and "Reading the output" list
/// them). Where a run has several outcomes the worst counts: bad input before
/// anything ran, else a failed case over a regression.
pub mod exit {
    /// Everything asked ran, and no gate fired.
    pub const OK: i32 = 0;
    /// A case failed while it ran (or the command could not do its work).
    pub const FAILED: i32 = 1;
    /// Bad input: nothing was measured (or a read named what is not there).
    pub const USAGE: i32 = 2;
    /// `compare --fail-on-regression` called a regression.
    pub const REGRESSION: i32 = 3;
}

/// An error for the user: one line, and the exit code it deserves.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
}

impl Fail {
    /// Bad input: exit code 2.
    pub fn usage(message: impl Into<String>) -> Fail {
        Fail {
            code: exit::USAGE,
            message: message.into(),
        }
    }
    /// Something failed while running: exit code 1.
    pub fn failure(message: impl Into<String>) -> Fail {
        Fail {
            code: exit::FAILED,
            message: message.into(),
        }
    }
}

/// Whether `path` can be written: a file (not a directory) that can be opened for
/// writing, made if missing (and then removed again). A device that exists
/// (`/dev/null`, `/dev/stdout`) is taken as it is, unopened; a FIFO or a socket is
/// refused (opening one could wait for a reader forever). Commands that measure
/// check every path they will write before they measure; the error is bad input,
/// one line.
pub fn check_writable(path: &std::path::Path) -> Result<(), Fail> {
    use std::os::unix::fs::FileTypeExt;
    if path.is_dir() {
        return Err(Fail::usage(format!(
            "{}: is a directory; name a file to write",
            path.display()
        )));
    }
    if let Ok(m) = std::fs::metadata(path) {
        let t = m.file_type();
        if t.is_char_device() {
            return Ok(());
        }
        if !t.is_file() {
            return Err(Fail::usage(format!(
                "{}: not a regular file (a FIFO, a socket or a block device); name a file to write",
                path.display()
            )));
        }
    }
    let existed = path.exists();
    match std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => Err(Fail::usage(format!("cannot write {}: {e}", path.display()))),
    }
}

/// A file rewritten whole, again and again (`--export-*`, through a temporary
/// file renamed over it): it must be a regular file or not exist yet, and a
/// symbolic link is followed to the file it names, which is the one replaced
/// (never the link itself, never a device: renaming over `/dev/null` would
/// replace the machine's own). Returns the path to rename over.
pub fn check_rewritable(path: &std::path::Path) -> Result<std::path::PathBuf, Fail> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(Fail::usage(format!(
            "{}: not a regular file; an export is rewritten whole as each case finishes, so it \
             must be a file (or not exist yet)",
            path.display()
        ))),
        Ok(_) => {
            check_writable(path)?;
            std::fs::canonicalize(path)
                .map_err(|e| Fail::usage(format!("cannot write {}: {e}", path.display())))
        }
        Err(_) => {
            check_writable(path)?;
            Ok(path.to_path_buf())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_paths_are_checked_and_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.png");
        check_writable(&p).unwrap();
        assert!(!p.exists(), "the probe file stays");
        std::fs::write(&p, b"keep").unwrap();
        check_writable(&p).unwrap();
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"keep",
            "an existing file was changed"
        );
        let f = check_writable(&dir.path().join("no/such/m.png")).unwrap_err();
        assert_eq!(f.code, 2);
        assert!(f.message.starts_with("cannot write"), "{}", f.message);
        assert!(!f.message.contains("Os {"), "{}", f.message);
        assert_eq!(check_writable(dir.path()).unwrap_err().code, 2);
        // A device is taken unopened; a FIFO is refused (opening it would wait).
        check_writable(std::path::Path::new("/dev/null")).unwrap();
        let fifo = dir.path().join("f");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert_eq!(check_writable(&fifo).unwrap_err().code, 2);
    }

    /// An export is never renamed over a device or a FIFO; a link is followed to
    /// its file, which is what gets replaced.
    #[test]
    fn rewritten_files_are_regular_files_and_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        for p in ["/dev/null", "/dev/full"] {
            let f = check_rewritable(std::path::Path::new(p)).unwrap_err();
            assert!(f.message.contains("not a regular file"), "{}", f.message);
        }
        let target = dir.path().join("t.json");
        std::fs::write(&target, b"{}").unwrap();
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(
            check_rewritable(&link).unwrap(),
            std::fs::canonicalize(&target).unwrap()
        );
        let new = dir.path().join("new.json");
        assert_eq!(check_rewritable(&new).unwrap(), new);
    }
}
