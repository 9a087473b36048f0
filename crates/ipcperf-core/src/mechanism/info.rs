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
}

/// Single, threads and processes.
pub const ALL_MODES: &[Mode] = &[Mode::Single, Mode::Threads, Mode::Processes];
/// One thread only (no reader).
pub const SOLO: &[Mode] = &[Mode::Single];
/// Two sides only.
pub const TWO_SIDES: &[Mode] = &[Mode::Threads, Mode::Processes];
