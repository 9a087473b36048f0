//! Cross-memory attach: process_vm_readv(2) copies straight from another
//! process's memory into ours, one copy and no kernel buffer in between.

use std::io::IoSliceMut;

use nix::sys::uio::RemoteIoVec;
use nix::unistd::Pid;

use crate::error::Errno;

/// Copy `buf.len()` bytes at address `addr` in process `pid` into `buf`; returns
/// the bytes copied (a partial copy is possible at a page that is not mapped).
#[inline]
pub fn read_from(pid: i32, addr: usize, buf: &mut [u8]) -> Result<usize, Errno> {
    let len = buf.len();
    let mut local = [IoSliceMut::new(buf)];
    let remote = [RemoteIoVec { base: addr, len }];
    nix::sys::uio::process_vm_readv(Pid::from_raw(pid), &mut local, &remote)
}
