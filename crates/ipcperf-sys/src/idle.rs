//! The CPU latency request (PM QoS, `/dev/cpu_dma_latency`): while a descriptor
//! that wrote a value is open, no CPU enters an idle state whose exit latency is
//! above it (0: none deeper than polling). The kernel drops the request when
//! the descriptor closes, however the process ends, so there is nothing to
//! clean up after a kill.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

/// The device of the request.
pub const DEVICE: &str = "/dev/cpu_dma_latency";

/// The value the kernel reads back when no request is in force (its default:
/// no limit).
pub const NO_LIMIT_US: i32 = 2_000_000_000;

/// A request held for as long as this lives.
#[derive(Debug)]
pub struct LatencyRequest {
    _file: File,
    us: u32,
}

impl LatencyRequest {
    /// Ask that no CPU exits from idle slower than `us` microseconds.
    pub fn hold(us: u32) -> std::io::Result<LatencyRequest> {
        LatencyRequest::hold_at(Path::new(DEVICE), us)
    }

    fn hold_at(device: &Path, us: u32) -> std::io::Result<LatencyRequest> {
        let mut f = OpenOptions::new().write(true).open(device)?;
        let v = i32::try_from(us).unwrap_or(i32::MAX);
        // The kernel takes the value as a native-endian s32 (or a hex string).
        f.write_all(&v.to_ne_bytes())?;
        Ok(LatencyRequest { _file: f, us })
    }

    /// The latency asked for, µs.
    pub fn us(&self) -> u32 {
        self.us
    }
}

/// The request in force now (the smallest of every holder's), µs; None where
/// the device cannot be read. [`NO_LIMIT_US`] when nobody holds one.
pub fn in_force_us() -> Option<i32> {
    in_force_at(Path::new(DEVICE))
}

fn in_force_at(device: &Path) -> Option<i32> {
    // Opening for reading only adds no request.
    let mut f = File::open(device).ok()?;
    let mut b = [0u8; 4];
    f.read_exact(&mut b).ok()?;
    Some(i32::from_ne_bytes(b))
}

/// Whether a request can be made here (the device exists and this process may
/// write it), and if not, why.
pub fn can_request() -> Result<(), String> {
    match OpenOptions::new().write(true).open(DEVICE) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(format!(
            "{DEVICE}: permission denied (it takes root, or write access to it)"
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{DEVICE}: no such device (a kernel without CPU latency QoS)"
        )),
        Err(e) => Err(format!("{DEVICE}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request writes the 4-byte native value; a missing device is an error.
    #[test]
    fn a_request_writes_its_value_and_a_missing_device_is_an_error() {
        let dir = std::env::temp_dir().join(format!("ipcperf-idle-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dev = dir.join("lat");
        std::fs::write(&dev, []).unwrap();
        let r = LatencyRequest::hold_at(&dev, 7).unwrap();
        assert_eq!(r.us(), 7);
        assert_eq!(in_force_at(&dev), Some(7));
        assert!(LatencyRequest::hold_at(&dir.join("none"), 0).is_err());
        assert_eq!(in_force_at(&dir.join("none")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
