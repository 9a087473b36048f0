//! What each mechanism is, as `ipcperf list` shows it: its name, the modes it
//! runs in, the named objects it makes, a one-line summary. Each mechanism's
//! `Mechanism::INFO` holds its own.

use serde::Serialize;

use super::MechanismKind;
use crate::kind::Mode;

/// What a user can know about a mechanism before running it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct MechanismInfo {
    pub kind: MechanismKind,
    pub name: &'static str,
    pub summary: &'static str,
    /// Modes it can run in.
    pub modes: &'static [Mode],
    /// One side only (no reader): `null`, `memcpy`.
    pub solo: bool,
    /// The reader starts only after the writer has written everything (`file`).
    pub reader_after_writer: bool,
    /// Named objects it creates, for `list`.
    pub names: &'static str,
    /// Its named objects go under `--dir` (a FIFO, a socket path, a file).
    #[serde(skip)]
    pub in_dir: bool,
    /// The mechanism it is built on (a library over a socket, io_uring over a
    /// socket or pipe), whose cost the report sets it beside.
    pub base: Option<MechanismKind>,
    /// The library (crate) it drives, with its version: in every result.
    pub library: Option<&'static str>,
}

impl MechanismInfo {
    /// Mechanism `kind`, named `name`, in a line: two sides in every mode, no
    /// named object, built on no other mechanism nor a library. An `INFO` sets
    /// what differs beside it: `MechanismInfo { modes: TWO_SIDES,
    /// ..MechanismInfo::new(kind, name, summary) }`.
    pub const fn new(kind: MechanismKind, name: &'static str, summary: &'static str) -> Self {
        MechanismInfo {
            kind,
            name,
            summary,
            modes: ALL_MODES,
            solo: false,
            reader_after_writer: false,
            names: "none",
            in_dir: false,
            base: None,
            library: None,
        }
    }
}

/// The io_uring crate the uring mechanisms drive (the version Cargo.lock holds:
/// a test checks).
pub const IO_URING: &str = "io-uring 0.7.15";

/// Single, threads and processes.
pub const ALL_MODES: &[Mode] = &[Mode::Single, Mode::Threads, Mode::Processes];
/// One thread only (no reader).
pub const SOLO: &[Mode] = &[Mode::Single];
/// Two sides only.
pub const TWO_SIDES: &[Mode] = &[Mode::Threads, Mode::Processes];

#[cfg(test)]
mod tests {
    /// Each library's name and version as this build locks it.
    #[test]
    fn library_versions_are_the_locked_ones() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("Cargo.lock");
        for info in super::super::MechanismKind::INFOS {
            let Some(lib) = info.library else { continue };
            let mut words = lib.split(' ');
            let (name, version) = (words.next().unwrap(), words.next().expect("a version"));
            let entry = format!("name = \"{name}\"\nversion = \"{version}\"");
            assert!(
                lock.contains(&entry),
                "{}: Cargo.lock holds no {lib}",
                info.name
            );
        }
    }
}
