//! Reading the kernel's files (sysfs, procfs) under a root: `/` on a live
//! machine, a recorded tree in tests.

use std::path::Path;

/// A file under `root`, trimmed; None if absent or empty.
pub(crate) fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}
