//! Values a user names on a command line (`--format json`), declared here once
//! with their names and help, so the results library needs no argument parser:
//! the binary turns [`Choice::CHOICES`] into its flags' possible values.

/// An enum chosen by name.
pub trait Choice: Copy + PartialEq + 'static {
    /// Every value a user may name: the value, its name, one line of help ("" for
    /// none). Values missing here exist but are not named by users.
    const CHOICES: &'static [(Self, &'static str, &'static str)];

    /// The name a user gives for this value, if users name it.
    fn choice_name(self) -> Option<&'static str> {
        Self::CHOICES
            .iter()
            .find(|(v, _, _)| *v == self)
            .map(|(_, n, _)| *n)
    }

    /// The value of a name, if it is one.
    fn from_name(name: &str) -> Option<Self> {
        Self::CHOICES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(v, _, _)| *v)
    }
}

#[cfg(test)]
mod tests {
    use super::Choice;
    use crate::advise::{Figure, Pattern};
    use crate::export::Format;

    fn round_trip<T: Choice + std::fmt::Debug>() {
        for (v, name, _) in T::CHOICES {
            assert_eq!(T::from_name(name), Some(*v), "{name}");
            assert_eq!(v.choice_name(), Some(*name));
        }
        assert_eq!(T::from_name("no-such"), None);
    }

    #[test]
    fn every_name_parses_back_to_its_value() {
        round_trip::<Format>();
        round_trip::<Pattern>();
        round_trip::<Figure>();
        assert_eq!(Format::from_name("openmetrics"), Some(Format::OpenMetrics));
        assert_eq!(Figure::from_name("p99.9"), Some(Figure::P999));
        assert_eq!(Pattern::Replay.choice_name(), None);
        assert_eq!(Format::Json.to_string(), "json");
    }
}
