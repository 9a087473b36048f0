//! A process-wide registry of what must be undone if the process is interrupted.
//!
//! Every guard of a named object registers here when it creates the object
//! (holding [`creating`] from the making to the registration, so an
//! interruption never sweeps in between) and unregisters when it removes it. Normal exits and errors run the guards' `Drop`;
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
/// Held (shared) from making an object until it is registered; [`run_all`]
/// takes it whole and keeps it, so nothing is made between its sweep and the
/// process's exit, and nothing made just before the sweep goes unregistered.
static CREATING: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Hold this from making a named object until its [`register`] (an interruption
/// then waits for the registration, and none starts once it has begun).
pub fn creating() -> std::sync::RwLockReadGuard<'static, ()> {
    CREATING.read().unwrap_or_else(|p| p.into_inner())
}

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
    // Objects being made are registered first (at most 200 ms: a panic inside a
    // creation holds its guard on this very thread); then none is begun again,
    // the guard kept until the process ends.
    let t = std::time::Instant::now();
    loop {
        match CREATING.try_write() {
            Ok(g) => {
                std::mem::forget(g);
                break;
            }
            Err(std::sync::TryLockError::Poisoned(p)) => {
                std::mem::forget(p.into_inner());
                break;
            }
            Err(std::sync::TryLockError::WouldBlock)
                if t.elapsed() < std::time::Duration::from_millis(200) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(std::sync::TryLockError::WouldBlock) => break,
        }
    }
    // The registry is held for an insert or a removal only; held longer, it is
    // held by the thread running this (an allocation failing inside `register`
    // ends the process from there): 400 ms after the sweep began, what is left
    // stays for `ipcperf clean`, rather than a hang.
    let all: Vec<Undo> = loop {
        match REGISTRY.try_lock() {
            Ok(mut r) => break std::mem::take(&mut *r).into_values().rev().collect(),
            Err(std::sync::TryLockError::Poisoned(p)) => {
                break std::mem::take(&mut *p.into_inner())
                    .into_values()
                    .rev()
                    .collect()
            }
            Err(std::sync::TryLockError::WouldBlock)
                if t.elapsed() < std::time::Duration::from_millis(400) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(std::sync::TryLockError::WouldBlock) => return,
        }
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
