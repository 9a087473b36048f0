//! A process-wide registry of what must be undone if the process is interrupted.
//!
//! Every guard of a named object registers here when it creates the object and
//! unregisters when it removes it. Normal exits and errors run the guards' `Drop`;
//! Ctrl-C (see [`crate::signal`]) runs [`run_all`], which removes what is still
//! registered and kills peer processes still registered, so nothing is left behind.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One thing to undo.
pub enum Undo {
    /// Remove this path (a directory recursively).
    Path(PathBuf),
    /// SIGKILL this process (a peer we started).
    Kill(i32),
    /// Anything else (SysV ids, POSIX names): a closure that removes it.
    Call(Box<dyn Fn() + Send>),
}

static NEXT: AtomicU64 = AtomicU64::new(1);
static REGISTRY: Mutex<BTreeMap<u64, Undo>> = Mutex::new(BTreeMap::new());

/// Proof of registration; dropping it unregisters (the owner has undone it itself).
#[derive(Debug)]
pub struct Registration(u64);

/// Register something to undo on interruption.
pub fn register(u: Undo) -> Registration {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    REGISTRY
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, u);
    Registration(id)
}

impl Drop for Registration {
    fn drop(&mut self) {
        REGISTRY
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.0);
    }
}

/// How many undo entries are registered now (tests use it to prove guards let go).
pub fn pending() -> usize {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner()).len()
}

/// Undo everything registered: kill peers first, then remove objects. Newest first.
pub fn run_all() {
    let all: Vec<Undo> = {
        let mut r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *r).into_values().rev().collect()
    };
    for u in &all {
        if let Undo::Kill(pid) = u {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    for u in all {
        match u {
            Undo::Path(p) => {
                if p.is_dir() {
                    let _ = std::fs::remove_dir_all(&p);
                } else {
                    let _ = std::fs::remove_file(&p);
                }
            }
            Undo::Call(f) => f(),
            Undo::Kill(_) => {}
        }
    }
}
