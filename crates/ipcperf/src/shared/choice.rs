//! Flags whose values are the results library's named choices.

/// The parser of a flag whose value is one of the results library's named
/// choices (`--format`, advise's `--pattern`): its names and help become the
/// flag's possible values, as a `ValueEnum` would make them.
#[derive(Clone)]
pub struct ChoiceParser<T> {
    /// Names taken but not listed in `--help` (a command that takes them only
    /// to refuse them with a line saying where they apply).
    hidden: fn(&T) -> bool,
}

/// `#[arg(value_parser = choice::<Format>())]`.
pub fn choice<T>() -> ChoiceParser<T> {
    ChoiceParser { hidden: |_| false }
}

/// `--format` of a command whose output is not a run's figures (history, list,
/// topology, compare, pattern, fleet, trend): its help lists table, json, csv
/// and markdown; the metrics formats are refused with one line.
pub fn document_format() -> ChoiceParser<crate::export::Format> {
    ChoiceParser {
        hidden: |f| f.is_metrics(),
    }
}

impl<T> clap::builder::TypedValueParser for ChoiceParser<T>
where
    T: crate::choice::Choice + Clone + Send + Sync,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let names = T::CHOICES.iter().map(|(_, n, _)| *n);
        let name = clap::builder::PossibleValuesParser::new(names).parse_ref(cmd, arg, value)?;
        // PossibleValuesParser took only a listed name.
        T::from_name(&name).ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(T::CHOICES.iter().map(|(v, name, help)| {
            let value = clap::builder::PossibleValue::new(*name).hide((self.hidden)(v));
            if help.is_empty() {
                value
            } else {
                value.help(*help)
            }
        })))
    }
}
