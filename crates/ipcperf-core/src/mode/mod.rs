//! Where the two sides of a case run: one thread, two threads, or two processes;
//! and on which CPUs (placement).

pub mod process;
pub mod protocol;
pub mod roundtrip;
pub mod session;
pub mod thread;
pub mod watchdog;

use serde::{Deserialize, Serialize};

/// How the two sides of a case are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One thread writes a block, then reads it back (Bradford's pipespeed2).
    Single,
    /// A writer thread and a reader thread in one process (pipespeed2t).
    Threads,
    /// A writer process and a reader process; the reader is ipcperf itself.
    Processes,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Single, Mode::Threads, Mode::Processes];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Threads => "threads",
            Mode::Processes => "processes",
        }
    }

    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// CPUs the two sides are pinned to (None: not pinned).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
pub struct Placement {
    pub writer_cpu: Option<usize>,
    pub reader_cpu: Option<usize>,
}

impl Placement {
    pub const UNPINNED: Placement = Placement {
        writer_cpu: None,
        reader_cpu: None,
    };

    pub fn pinned(writer: usize, reader: usize) -> Placement {
        Placement {
            writer_cpu: Some(writer),
            reader_cpu: Some(reader),
        }
    }

    /// `same-cpu`, `cross-cpu`, `unpinned` or `partly-pinned`.
    pub fn label(&self) -> &'static str {
        match (self.writer_cpu, self.reader_cpu) {
            (Some(a), Some(b)) if a == b => "same-cpu",
            (Some(_), Some(_)) => "cross-cpu",
            (None, None) => "unpinned",
            _ => "partly-pinned",
        }
    }
}
