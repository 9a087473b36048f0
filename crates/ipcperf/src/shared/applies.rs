//! A flag that shapes a mechanism's kernel object applies to some mechanisms
//! only. One that applies to none of a run's mechanisms is bad input, not a
//! flag dropped without a word: each mechanism's record says the options it
//! applied (`MechOptions::describe`), and that is the test.

use crate::fail::Fail;
use ipcperf_core::mechanism::{MechOptions, MechanismKind};

/// Whether `kind` applies the flag: its record names the option (with this
/// value, where one is given).
fn applies(opts: &MechOptions, kind: MechanismKind, key: &str, value: Option<&str>) -> bool {
    opts.describe(kind)
        .iter()
        .any(|(k, v)| k == key && value.is_none_or(|want| v == want))
}

/// `--pipe-size`, `--nodelay`, `--sndbuf`, `--rcvbuf`, `--ipv6`, `--priority`,
/// `--nonblocking` and `--dir` given for a run none of whose mechanisms applies it:
/// one line naming the mechanisms that would.
pub fn check(opts: &MechOptions, mechs: &[MechanismKind]) -> Result<(), Fail> {
    let flags: [(&str, bool, &str, Option<&str>); 8] = [
        ("--pipe-size", opts.pipe_size.is_some(), "pipe_size", None),
        ("--nodelay", opts.nodelay, "nodelay", None),
        ("--sndbuf", opts.sndbuf.is_some(), "sndbuf", None),
        ("--rcvbuf", opts.rcvbuf.is_some(), "rcvbuf", None),
        ("--ipv6", opts.ipv6, "ip", Some("v6")),
        ("--priority", opts.mq_priority.is_some(), "priority", None),
        ("--nonblocking", opts.nonblocking, "nonblocking", None),
        ("--dir", opts.dir.is_some(), "dir", None),
    ];
    for (flag, given, key, value) in flags {
        if !given || mechs.iter().any(|&m| applies(opts, m, key, value)) {
            continue;
        }
        let to: Vec<&str> = MechanismKind::ALL
            .iter()
            .filter(|&&m| applies(opts, m, key, value))
            .map(|m| m.name())
            .collect();
        let named: Vec<&str> = mechs.iter().map(|m| m.name()).collect();
        return Err(Fail::usage(format!(
            "{flag} applies to {}, and none of {} is one",
            and_list(&to),
            named.join(", ")
        )));
    }
    Ok(())
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(v: &[&str]) -> String {
    match v {
        [] => "no mechanism of this build".into(),
        [one] => (*one).into(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// `--spin-for` is how long `--wake adaptive` spins before it sleeps: with no
/// adaptive wake-up asked (the default is futex) it was dropped without a word.
pub fn check_spin_for(
    given: bool,
    wakes: &[ipcperf_core::mechanism::shm_ring::Wake],
) -> Result<(), Fail> {
    use ipcperf_core::mechanism::shm_ring::Wake;
    if !given || wakes.contains(&Wake::Adaptive) {
        return Ok(());
    }
    let asked: Vec<&str> = wakes.iter().map(|w| w.name()).collect();
    Err(Fail::usage(format!(
        "--spin-for applies to --wake adaptive (spin, then sleep); this run's wake-ups: {}",
        asked.join(", ")
    )))
}
