//! Shared memory: a mapping shared between threads and processes, backed by a memfd
//! (handed to a peer as a descriptor) or by a named POSIX object (`shm_open`, opened
//! by name), whose guard `shm_unlink`s it on drop and on Ctrl-C.
//!
//! Typed views into the mapping (an `AtomicU32`, a `sem_t`, a `pthread_mutex_t`) are
//! handed out by offset, bounds- and alignment-checked.

use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;

use nix::fcntl::OFlag;
use nix::sys::memfd::{memfd_create, MFdFlags};
use nix::sys::mman::{mmap, mmap_anonymous, munmap, shm_open, shm_unlink, MapFlags, ProtFlags};
use nix::sys::stat::Mode;

use crate::cleanup::{register, Registration, Undo};
use crate::error::{Context, Errno, SysError, SysResult};
use crate::names::unique;

/// A read-write shared mapping; unmapped on drop.
#[derive(Debug)]
pub struct SharedMem {
    ptr: NonNull<u8>,
    len: usize,
    fd: Option<OwnedFd>,
}

// SAFETY: the mapping is plain shared memory; every access through this type goes
// through atomics or through C objects (sem_t, pthread_mutex_t) designed for
// concurrent use from several threads and processes.
unsafe impl Send for SharedMem {}
// SAFETY: as above; `&SharedMem` only hands out atomics and process-shared objects.
unsafe impl Sync for SharedMem {}

impl SharedMem {
    fn map(fd: Option<OwnedFd>, len: usize, what: &str) -> SysResult<SharedMem> {
        let n = NonZeroUsize::new(len)
            .ok_or_else(|| SysError::new("mmap", what.to_string(), Errno::EINVAL))?;
        let prot = ProtFlags::PROT_READ | ProtFlags::PROT_WRITE;
        let ptr = match &fd {
            // SAFETY: a fresh mapping at an address the kernel chooses; no existing
            // memory is aliased. The descriptor is valid for the call.
            Some(f) => unsafe { mmap(None, n, prot, MapFlags::MAP_SHARED, f.as_fd(), 0) },
            // SAFETY: as above, anonymous and shared (visible to forked children).
            None => unsafe { mmap_anonymous(None, n, prot, MapFlags::MAP_SHARED) },
        }
        .ctx("mmap", &what)?;
        Ok(SharedMem {
            ptr: ptr.cast(),
            len,
            fd,
        })
    }

    /// An anonymous shared mapping of `len` bytes (zeroed), shared with forked children.
    pub fn anonymous(len: usize) -> SysResult<SharedMem> {
        Self::map(None, len, "anonymous shared mapping")
    }

    /// A memfd of `len` bytes (zeroed), mapped; its descriptor can be handed to a peer.
    pub fn memfd(tag: &str, len: usize) -> SysResult<SharedMem> {
        let name = unique(tag);
        let fd = memfd_create(name.as_str(), MFdFlags::MFD_CLOEXEC).ctx("memfd_create", &name)?;
        reserve(&fd, len, &name)?;
        Self::map(Some(fd), len, &name)
    }

    /// Map a descriptor a peer handed over (a memfd or shm object of at least `len` bytes).
    pub fn from_fd(fd: OwnedFd, len: usize) -> SysResult<SharedMem> {
        let st = nix::sys::stat::fstat(&fd).ctx("fstat", &"shared memory descriptor")?;
        if (st.st_size as usize) < len {
            return Err(SysError::new(
                "map shared memory",
                format!("{} bytes wanted, {} present", len, st.st_size),
                Errno::EINVAL,
            ));
        }
        Self::map(Some(fd), len, "shared memory descriptor")
    }

    /// A new descriptor for the same memory (to hand to a peer).
    pub fn dup_fd(&self) -> SysResult<OwnedFd> {
        let fd = self.fd.as_ref().ok_or_else(|| {
            SysError::new("dup", "anonymous mapping (no descriptor)", Errno::EBADF)
        })?;
        fd.try_clone().ctx("dup", &"shared memory descriptor")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A pointer to `size` bytes at `offset`, aligned to `align`; panics when the
    /// range is outside the mapping or misaligned (a programming error).
    #[inline]
    pub(crate) fn at(&self, offset: usize, size: usize, align: usize) -> *mut u8 {
        assert!(
            offset.checked_add(size).is_some_and(|e| e <= self.len),
            "shared memory range {offset}+{size} outside a {}-byte mapping",
            self.len
        );
        assert!(
            offset.is_multiple_of(align),
            "offset {offset} not aligned to {align}"
        );
        // SAFETY: offset + size <= len, checked above, so the result is inside the mapping.
        unsafe { self.ptr.as_ptr().add(offset) }
    }

    /// The 64-bit word at `offset`, as an atomic.
    #[inline]
    pub fn atomic_u64(&self, offset: usize) -> &std::sync::atomic::AtomicU64 {
        let p = self.at(offset, 8, 8);
        // SAFETY: `p` is inside the mapping, 8-aligned and valid for as long as `self`;
        // shared memory may be changed by others at any time, which atomics allow.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(p.cast()) }
    }

    /// Copy `src` into the mapping at `offset` (bounds-checked). The caller's
    /// protocol (a ring's head and tail) keeps the other side off these bytes.
    #[inline]
    pub fn write_bytes(&self, offset: usize, src: &[u8]) {
        let p = self.at(offset, src.len(), 1);
        // SAFETY: the range is inside the mapping (checked by `at`); `src` is a
        // separate buffer of ours, so the two do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, src.len()) }
    }

    /// Copy bytes at `offset` out of the mapping into `dst` (bounds-checked).
    #[inline]
    pub fn read_bytes(&self, offset: usize, dst: &mut [u8]) {
        let p = self.at(offset, dst.len(), 1);
        // SAFETY: the range is inside the mapping; `dst` is our own buffer.
        unsafe { std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), dst.len()) }
    }

    /// Lend `len` bytes of the mapping at `offset` to `f` to write in place (a
    /// zero-copy ring's loan), bounds-checked. As with [`SharedMem::write_bytes`],
    /// the caller's protocol keeps the other side (and any other loan) off these
    /// bytes until they are published.
    #[inline]
    pub fn with_bytes_mut<R>(
        &self,
        offset: usize,
        len: usize,
        f: impl FnOnce(&mut [u8]) -> R,
    ) -> R {
        let p = self.at(offset, len, 1);
        // SAFETY: the range is inside the mapping (checked by `at`) and lives as
        // long as `self`; the ring protocol gives this side those bytes alone until
        // it publishes them, so no other reference reads or writes them meanwhile.
        f(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }

    /// Lend `len` bytes of the mapping at `offset` to `f` to read in place.
    #[inline]
    pub fn with_bytes<R>(&self, offset: usize, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        let p = self.at(offset, len, 1);
        // SAFETY: the range is inside the mapping; the protocol keeps the writer off
        // these published bytes until this side releases them.
        f(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// The 32-bit word at `offset`, as an atomic.
    #[inline]
    pub fn atomic_u32(&self, offset: usize) -> &AtomicU32 {
        let p = self.at(offset, 4, 4);
        // SAFETY: `p` is inside the mapping, 4-aligned and valid for as long as `self`;
        // shared memory may be changed by others at any time, which atomics allow.
        unsafe { AtomicU32::from_ptr(p.cast()) }
    }
}

impl Drop for SharedMem {
    fn drop(&mut self) {
        // SAFETY: this mapping was made by `map` and is unmapped once, here; every
        // reference handed out borrows `self`, so none outlives it.
        let _ = unsafe { munmap(self.ptr.cast(), self.len) };
    }
}

/// Owns a named POSIX shared-memory object: `shm_unlink`s it on drop and on Ctrl-C.
#[derive(Debug)]
pub struct ShmName {
    name: String,
    _reg: Registration,
}

impl ShmName {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for ShmName {
    fn drop(&mut self) {
        let _ = shm_unlink(self.name.as_str());
    }
}

/// Size a fresh shared-memory file to `len` bytes and reserve every page of it now,
/// so a full tmpfs is an error here (ENOSPC, naming the object and the size) and
/// never a SIGBUS at the first touch of a page during the run.
fn reserve(fd: &OwnedFd, len: usize, what: &str) -> SysResult<()> {
    let n = libc::off_t::try_from(len)
        .map_err(|_| SysError::new("ftruncate", what.to_string(), Errno::EFBIG))?;
    nix::unistd::ftruncate(fd, n).ctx("ftruncate", &what)?;
    nix::fcntl::fallocate(fd, nix::fcntl::FallocateFlags::empty(), 0, n)
        .ctx("reserve", &format_args!("{len} bytes for {what}"))
}

/// An anonymous file in memory (a memfd, no name anywhere): data handed to a
/// peer by descriptor and read with `pread`/`pwrite`, never mapped, so it counts
/// in neither side's resident memory.
pub fn memfd_file(tag: &str) -> SysResult<std::fs::File> {
    let name = unique(tag);
    let fd = memfd_create(name.as_str(), MFdFlags::MFD_CLOEXEC).ctx("memfd_create", &name)?;
    Ok(std::fs::File::from(fd))
}

/// Create a named POSIX shared-memory object `/ipcperf-<pid>-<n>-<tag>` of `len`
/// bytes (exclusive, mode 0600) and map it.
pub fn shm_create(tag: &str, len: usize) -> SysResult<(ShmName, SharedMem)> {
    let name = format!("/{}", unique(tag));
    // Held until the name is registered (an interruption waits for it).
    let making = crate::cleanup::creating();
    let fd = shm_open(
        name.as_str(),
        OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC,
        Mode::S_IRUSR | Mode::S_IWUSR,
    )
    .ctx("shm_open", &name)?;
    let n2 = name.clone();
    let guard = ShmName {
        name: name.clone(),
        _reg: register(Undo::Call(Box::new(move || {
            let _ = shm_unlink(n2.as_str());
        }))),
    };
    drop(making);
    reserve(&fd, len, &format!("/dev/shm{name}"))?;
    let mem = SharedMem::map(Some(fd), len, &name)?;
    Ok((guard, mem))
}

/// Open a named POSIX shared-memory object made by [`shm_create`] and map it.
pub fn shm_open_existing(name: &str, len: usize) -> SysResult<SharedMem> {
    let fd =
        shm_open(name, OFlag::O_RDWR | OFlag::O_CLOEXEC, Mode::empty()).ctx("shm_open", &name)?;
    SharedMem::from_fd(fd, len)
}

/// Whether a named POSIX shared-memory object exists.
pub fn shm_exists(name: &str) -> bool {
    std::path::Path::new("/dev/shm")
        .join(name.trim_start_matches('/'))
        .exists()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn memfd_mappings_share_memory() {
        let a = SharedMem::memfd("t-shm", 4096).unwrap();
        let b = SharedMem::from_fd(a.dup_fd().unwrap(), 4096).unwrap();
        a.atomic_u32(8).store(77, Ordering::SeqCst);
        assert_eq!(b.atomic_u32(8).load(Ordering::SeqCst), 77);
        assert!(SharedMem::from_fd(a.dup_fd().unwrap(), 8192).is_err());
    }

    #[test]
    fn named_shm_is_unlinked_on_drop() {
        let (g, a) = shm_create("t-shm", 4096).unwrap();
        let name = g.name().to_string();
        let b = shm_open_existing(&name, 4096).unwrap();
        a.atomic_u32(0).store(5, Ordering::SeqCst);
        assert_eq!(b.atomic_u32(0).load(Ordering::SeqCst), 5);
        assert!(shm_exists(&name));
        drop(g);
        assert!(!shm_exists(&name));
        assert!(shm_open_existing(&name, 4096).is_err());
    }

    #[test]
    #[should_panic]
    fn out_of_range_view_panics() {
        let a = SharedMem::anonymous(4096).unwrap();
        let _ = a.atomic_u32(4096);
    }
}
