//! How a side of the shared-memory ring waits for the other: the strategies the
//! user names with `--wake`.

use serde::{Deserialize, Serialize};

/// How a waiting side is woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wake {
    Spin,
    Futex,
    Eventfd,
    Sem,
    Adaptive,
}

/// How long an `adaptive` wait spins before it sleeps, unless told otherwise.
pub const DEFAULT_SPIN_NS: u64 = 5_000;

impl Wake {
    pub const ALL: [Wake; 5] = [
        Wake::Spin,
        Wake::Futex,
        Wake::Eventfd,
        Wake::Sem,
        Wake::Adaptive,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Wake::Spin => "spin",
            Wake::Futex => "futex",
            Wake::Eventfd => "eventfd",
            Wake::Sem => "sem",
            Wake::Adaptive => "adaptive",
        }
    }
    pub fn from_name(s: &str) -> Option<Wake> {
        Wake::ALL.into_iter().find(|w| w.name() == s)
    }
}
