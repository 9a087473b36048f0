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

/// The IPv4 routes of /proc/net/route: (destination, mask) as host-order
/// numbers (the file prints each as the raw network-order word in hex).
fn parse_routes(text: &str) -> Vec<(u32, u32)> {
    let word = |h: &str| {
        u32::from_str_radix(h, 16)
            .ok()
            .map(|x| u32::from_be_bytes(x.to_ne_bytes()))
    };
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((word(f.get(1)?)?, word(f.get(7)?)?))
        })
        .collect()
}

/// The first /30 of 10.233.0.0/16, trying from the `start`-th on, that no route
/// but a default one covers or falls inside; its network address.
fn free_slash30(start: u32, routes: &[(u32, u32)]) -> Option<u32> {
    const SLOTS: u32 = 1 << 14;
    (0..SLOTS)
        .map(|i| 0x0AE9_0000u32 | (((start.wrapping_add(i)) % SLOTS) << 2))
        .find(|&net| {
            routes.iter().all(|&(dest, mask)| {
                // Compared under the shorter of the two masks.
                let m = mask & 0xFFFF_FFFC;
                mask == 0 || (net & m) != (dest & m)
            })
        })
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
        // A /30 of 10.233.0.0/16 from the pid and the sequence, that no route of
        // this machine reaches already (a cluster's pod or service network may
        // well live in 10.233/16: its addresses must not be taken over).
        let routes = std::fs::read_to_string("/proc/net/route")
            .map(|t| parse_routes(&t))
            .unwrap_or_default();
        let start = pid.wrapping_mul(31).wrapping_add(seq);
        let base = free_slash30(start, &routes).ok_or_else(|| {
            Error::Refused(
                "--across net: every /30 of 10.233.0.0/16 is reached by a route of this \
                 machine already; no address for the veth pair"
                    .into(),
            )
        })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A /proc/net/route as a little-endian machine prints it: a default route,
    /// 10.233.0.0/18 (a cluster's services) and 10.233.64.5/32.
    const ROUTES: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
kube0\t0000E90A\t00000000\t0001\t0\t0\t0\t00C0FFFF\t0\t0\t0
cali1\t0540E90A\t00000000\t0005\t0\t0\t0\tFFFFFFFF\t0\t0\t0
";

    #[test]
    fn a_veth_subnet_steers_clear_of_this_machines_routes() {
        let r = parse_routes(ROUTES);
        if cfg!(target_endian = "little") {
            assert_eq!(
                r,
                vec![
                    (0, 0),
                    (0x0AE9_0000, 0xFFFF_C000),
                    (0x0AE9_4005, 0xFFFF_FFFF)
                ]
            );
        }
        let r = vec![
            (0, 0),
            (0x0AE9_0000, 0xFFFF_C000),
            (0x0AE9_4005, 0xFFFF_FFFF),
        ];
        // A slot inside the /18: moved past it, to 10.233.64.0/30 (free: the
        // /32 is 10.233.64.5, in the next one).
        let net = free_slash30(5, &r).unwrap();
        assert_eq!(net, 0x0AE9_4000, "{net:x}");
        // Starting at the slot of 10.233.64.4/30: skipped for the /32 in it.
        let net = free_slash30(0x1001, &r).unwrap();
        assert_eq!(net, 0x0AE9_4008, "{net:x}");
        // The default route alone takes nothing.
        assert_eq!(free_slash30(7, &[(0, 0)]), Some(0x0AE9_0000 | (7 << 2)));
        // A route over all of 10/8: nothing is free.
        assert_eq!(free_slash30(7, &[(0x0A00_0000, 0xFF00_0000)]), None);
    }
}
