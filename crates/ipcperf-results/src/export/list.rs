//! `ipcperf list`: the mechanisms at a terminal's width, one mechanism whole,
//! and the namespaces a case may cross.

use ipcperf_core::mechanism::MechanismKind;

/// What a mechanism is built on: the kernel object beneath it and the library
/// (with its version) it drives; "kernel" for the kernel's own paths.
pub fn built_on(i: &ipcperf_core::mechanism::MechanismInfo) -> String {
    match (i.base, i.library) {
        (Some(b), Some(l)) => format!("{} via {l}", b.name()),
        (Some(b), None) => b.name().to_string(),
        (None, Some(l)) => l.to_string(),
        (None, None) => "kernel".into(),
    }
}

/// The width text is wrapped to: the terminal's, else 80 columns.
pub fn width() -> usize {
    crate::console::terminal_width()
        .map_or(80, usize::from)
        .max(40)
}

/// A mechanism's summary up to its first "; " outside parentheses (the rest is
/// for `list MECHANISM`).
pub fn short(summary: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in summary.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ';' if depth == 0 && summary[i..].starts_with("; ") => return &summary[..i],
            _ => {}
        }
    }
    summary
}

pub use crate::console::wrap_opts;

/// The one-letter names of a mechanism's modes: s(ingle), t(hreads), p(rocesses).
pub fn mode_letters(i: &ipcperf_core::mechanism::MechanismInfo) -> String {
    use ipcperf_core::mode::Mode;
    [
        (Mode::Single, "s"),
        (Mode::Threads, "t"),
        (Mode::Processes, "p"),
    ]
    .iter()
    .map(|(m, l)| if i.modes.contains(m) { *l } else { "-" })
    .collect::<Vec<_>>()
    .join("")
}

/// The compact list: a line (or a few, wrapped at words) a mechanism.
pub fn compact(width: usize) -> String {
    let name_w = MechanismKind::INFOS
        .iter()
        .map(|i| i.name.len())
        .max()
        .unwrap_or(8);
    let lead = name_w + 2 + 3 + 2;
    let text_w = width.saturating_sub(lead).max(20);
    let mut out = format!("{:name_w$}  {:3}  what it is\n", "mechanism", "mod");
    for i in MechanismKind::INFOS {
        let lines = textwrap::wrap(short(i.summary), wrap_opts(text_w));
        for (k, l) in lines.iter().enumerate() {
            if k == 0 {
                out.push_str(&format!("{:name_w$}  {}  {l}\n", i.name, mode_letters(i)));
            } else {
                out.push_str(&format!("{:lead$}{l}\n", ""));
            }
        }
    }
    out.push_str(&textwrap::fill(
        "modes: s single (one thread), t threads, p processes. `ipcperf list NAME` says \
         all of one; --format json gives every field.",
        wrap_opts(width),
    ));
    out
}

/// The sysctls that bound a mechanism.
pub fn limit_prefix(k: MechanismKind) -> &'static [&'static str] {
    use MechanismKind as K;
    match k {
        K::Pipe | K::Fifo | K::Vmsplice | K::UringPipe => &["fs.pipe"],
        K::PosixMq => &["fs.mqueue"],
        K::SysvMsg => &["kernel.msg"],
        K::Tcp | K::UringTcp => &["net.core", "net.ipv4.tcp"],
        K::Udp => &["net.core"],
        K::Unix | K::UnixDgram | K::UnixSeqpacket | K::UringUnix => &["net.core", "net.unix"],
        K::Shm => &["kernel.shm"],
        _ => &[],
    }
}
