//! The error a command ends with: one line for the user and its exit code.

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
            code: 2,
            message: message.into(),
        }
    }
    /// Something failed while running: exit code 1.
    pub fn failure(message: impl Into<String>) -> Fail {
        Fail {
            code: 1,
            message: message.into(),
        }
    }
}

/// Whether `path` can be written: a file (not a directory) that can be opened for
/// writing, made if missing (and then removed again). Commands that measure check
/// every path they will write before they measure; the error is bad input, one line.
pub fn check_writable(path: &std::path::Path) -> Result<(), Fail> {
    if path.is_dir() {
        return Err(Fail::usage(format!(
            "{}: is a directory; name a file to write",
            path.display()
        )));
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
    }
}
