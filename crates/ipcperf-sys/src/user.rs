//! Users by name (the password database, as `id -u NAME` reads it).

/// The uid of the user called `name`, if this machine has one.
pub fn uid_of(name: &str) -> Option<u32> {
    nix::unistd::User::from_name(name)
        .ok()
        .flatten()
        .map(|u| u.uid.as_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_0_and_a_made_up_name_is_none() {
        assert_eq!(uid_of("root"), Some(0));
        assert_eq!(uid_of("no-such-user-ipcperf"), None);
    }
}
