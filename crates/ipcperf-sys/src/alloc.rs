//! The process's allocator: the system's, except that an allocation the process
//! cannot have (an address-space limit, `ulimit -v`; memory exhausted) ends it as
//! an interruption does, in one line, every named object removed, a saved run
//! marked stopped, exit 1, where Rust's own handler aborted (exit 134, a core,
//! objects left behind, "memory allocation of 204800 bytes failed").
//!
//! The way out needs memory of its own (the clean-up, the line, the history's
//! last write), so [`keep_reserve`] maps [`RESERVE`] bytes of address space at
//! start, touching none of it; the first failure hands them back before it goes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

/// Address space held back for the way out: the clean-up's and the history's
/// allocations. glibc's heap, once it cannot grow in place, maps 1 MiB at a
/// time: with 512 KiB held back, a failure of 41 bytes failed again on the way
/// out (the saved run's note lost); 2 MiB never did (`ulimit -v` 17–42 MB).
pub const RESERVE: usize = 2 << 20;

static RESERVED: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());
/// The thread (its id) handling the first failure; 0 while none is.
static FAILING: AtomicI32 = AtomicI32::new(0);

thread_local! {
    /// Set while this thread runs [`fallible`]: a failure is the caller's to take.
    static FALLIBLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f`, in which a failed allocation is returned to its caller as the
/// system returns it (`Vec::try_reserve_exact` then says `Err`), not the end of
/// the process: for a buffer whose size the user chose (`-s 1g`), which the case
/// can refuse while the run goes on.
pub fn fallible<T>(f: impl FnOnce() -> T) -> T {
    let before = FALLIBLE.with(|c| c.replace(true));
    let out = f();
    FALLIBLE.with(|c| c.set(before));
    out
}

/// Whether this thread is inside [`fallible`].
fn failure_is_the_callers() -> bool {
    FALLIBLE.try_with(|c| c.get()).unwrap_or(false)
}

/// Hold [`RESERVE`] bytes of address space (no memory: nothing is touched) for
/// the way out of a failed allocation. Call once, early in `main`.
pub fn keep_reserve() {
    // SAFETY: an anonymous private mapping with no access asks nothing of any
    // existing memory; a failure returns MAP_FAILED, checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            RESERVE,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p != libc::MAP_FAILED {
        let old = RESERVED.swap(p, Ordering::SeqCst);
        if !old.is_null() {
            // SAFETY: `old` is the mapping of an earlier call, RESERVE bytes,
            // which nothing else refers to.
            unsafe { libc::munmap(old, RESERVE) };
        }
    }
}

/// Whether the reserve is held now (tests).
pub fn reserve_held() -> bool {
    !RESERVED.load(Ordering::SeqCst).is_null()
}

/// The system allocator, whose failures end the process cleanly (see the module).
pub struct Guarded;

// SAFETY: every call is passed to `System` unchanged; only a null result (a
// failure) is acted on: inside `fallible` it is returned as it is, elsewhere
// that path never returns.
unsafe impl GlobalAlloc for Guarded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as it is.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() && !failure_is_the_callers() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() && !failure_is_the_callers() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; `new_size` is the caller's, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() && !failure_is_the_callers() {
            out_of_memory(new_size);
        }
        p
    }
}

/// The address-space limit (`ulimit -v`) in KiB, if one is set.
fn address_space_limit_kib() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `r`, which lives for the call.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur / 1024)
}

/// The address-space limit (`ulimit -v`) and what this process has mapped now,
/// in bytes, where a limit is set.
pub fn address_space() -> Option<(u64, u64)> {
    let limit = address_space_limit_kib()? * 1024;
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    Some((limit, pages * page))
}

/// Write `s` to standard error without allocating.
fn raw_err(s: &[u8]) {
    // SAFETY: `s` is a valid slice for the call; a failed write is ignored.
    unsafe { libc::write(2, s.as_ptr().cast(), s.len()) };
}

/// A failed allocation of `size` bytes: the first thread to fail hands the
/// reserve back and ends the process as an interruption does (exit 1); another
/// thread failing meanwhile waits for that end; the failing thread failing again
/// on its way out leaves at once with a fixed line.
fn out_of_memory(size: usize) -> ! {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    match FAILING.compare_exchange(0, me, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {}
        Err(first) if first == me => {
            raw_err(b"ipcperf: out of memory, again on the way out; exiting\n");
            // SAFETY: _exit ends the process at once; nothing after it runs.
            unsafe { libc::_exit(1) }
        }
        Err(_) => loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        },
    }
    let p = RESERVED.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: `p` is the reserve mapped by `keep_reserve`, RESERVE bytes,
        // never handed to anyone; unmapping it frees address space only.
        unsafe { libc::munmap(p, RESERVE) };
    }
    let limit = match address_space_limit_kib() {
        Some(k) => format!("under an address-space limit of {k} KiB (`ulimit -v`)"),
        None => "(memory exhausted)".to_string(),
    };
    crate::signal::end_as_interrupted(
        &format!("out of memory: {size} bytes could not be had {limit}"),
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inside `fallible` a failure is the caller's (null, then `Err` from
    /// `try_reserve`); the scope ends with the thread as it was.
    #[test]
    fn a_failure_inside_fallible_is_returned() {
        let huge = Layout::from_size_align(isize::MAX as usize / 2, 8).unwrap();
        // SAFETY: a non-zero layout; a pointer returned would be freed below.
        let p = fallible(|| unsafe { Guarded.alloc(huge) });
        assert!(p.is_null());
        assert!(!failure_is_the_callers());
        let mut v: Vec<u64> = Vec::new();
        assert!(fallible(|| v.try_reserve_exact(usize::MAX / 16)).is_err());
        keep_reserve();
        assert!(reserve_held());
    }
}
