//! A network namespace joined to ours by a veth pair, for TCP across a network
//! namespace (`--across net`): made with iproute2's `ip` before the peer starts
//! (the peer joins it), removed with the link (deleting the namespace deletes its
//! veth end, and with it ours). Names carry our pid: `ipcperf-<pid>-<seq>` for the
//! namespace, `ipv<pid><seq>a|b` for the interfaces.

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{Error, Result};

static SEQ: AtomicU32 = AtomicU32::new(0);

/// The namespace, our interface, and both addresses (a /30).
#[derive(Debug)]
pub struct VethNs {
    pub name: String,
    pub ours: String,
    pub our_ip: Ipv4Addr,
    pub their_ip: Ipv4Addr,
    pub mtu: Option<u32>,
    _undo: ipcperf_sys::cleanup::Registration,
}

fn ip(args: &[&str]) -> Result<String> {
    let out = Command::new("ip").args(args).output().map_err(|e| {
        Error::Refused(format!(
            "--across net with tcp makes a veth pair with iproute2's `ip`, which did not run: {e}"
        ))
    })?;
    if !out.status.success() {
        return Err(Error::Refused(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl VethNs {
    /// The record's `path` fact: our interface and address, theirs, the
    /// namespace and the MTU.
    pub fn path_fact(&self) -> (String, String) {
        (
            "path".into(),
            format!(
                "veth {} {} to {} in {}{}",
                self.ours,
                self.our_ip,
                self.their_ip,
                self.name,
                self.mtu.map(|m| format!(", MTU {m}")).unwrap_or_default()
            ),
        )
    }

    pub fn create() -> Result<VethNs> {
        if !ipcperf_sys::ns::may_unshare() {
            return Err(Error::Refused(
                "across net, tcp and udp run over a veth pair made for the case, which takes \
                 root (a user namespace's network has only its own loopback)"
                    .into(),
            ));
        }
        let pid = std::process::id();
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("ipcperf-{pid}-{seq}");
        // Interface names hold 15 bytes: the pid and the sequence, shortened.
        let tag = format!("{}{}", pid % 1_000_000, seq % 100);
        let (ours, theirs) = (format!("ipv{tag}a"), format!("ipv{tag}b"));
        // A /30 of 10.233.0.0/16 from the pid and the sequence.
        let n = (pid.wrapping_mul(31).wrapping_add(seq)) % (1 << 14);
        let base = 0x0AE9_0000u32 | (n << 2);
        let our_ip = Ipv4Addr::from(base + 1);
        let their_ip = Ipv4Addr::from(base + 2);
        // Registered first: a Ctrl-C half-way removes whatever was made.
        let undo_name = name.clone();
        let undo_if = ours.clone();
        let undo =
            ipcperf_sys::cleanup::register(ipcperf_sys::cleanup::Undo::Call(Box::new(move || {
                let _ = Command::new("ip")
                    .args(["netns", "del", &undo_name])
                    .output();
                let _ = Command::new("ip").args(["link", "del", &undo_if]).output();
            })));
        let v = VethNs {
            name: name.clone(),
            ours: ours.clone(),
            our_ip,
            their_ip,
            mtu: None,
            _undo: undo,
        };
        ip(&["netns", "add", &name])?;
        ip(&[
            "link", "add", &ours, "type", "veth", "peer", "name", &theirs,
        ])?;
        ip(&["link", "set", &theirs, "netns", &name])?;
        ip(&["addr", "add", &format!("{our_ip}/30"), "dev", &ours])?;
        ip(&["link", "set", &ours, "up"])?;
        ip(&[
            "-n",
            &name,
            "addr",
            "add",
            &format!("{their_ip}/30"),
            "dev",
            &theirs,
        ])?;
        ip(&["-n", &name, "link", "set", &theirs, "up"])?;
        ip(&["-n", &name, "link", "set", "lo", "up"])?;
        let mut v = v;
        v.mtu = std::fs::read_to_string(format!("/sys/class/net/{ours}/mtu"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        Ok(v)
    }

    /// The file the peer joins.
    pub fn path(&self) -> String {
        format!("/run/netns/{}", self.name)
    }
}

impl Drop for VethNs {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
        let _ = Command::new("ip")
            .args(["link", "del", &self.ours])
            .output();
    }
}
