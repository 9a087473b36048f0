//! The error a command ends with: one line for the user and its exit code.

/// An error for the user: one line, and the exit code it deserves.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
}

impl Fail {
    /// Bad input: exit code 2.
    pub fn usage(message: impl Into<String>) -> Fail {
        Fail {
            code: 2,
            message: message.into(),
        }
    }
    /// Something failed while running: exit code 1.
    pub fn failure(message: impl Into<String>) -> Fail {
        Fail {
            code: 1,
            message: message.into(),
        }
    }
}
