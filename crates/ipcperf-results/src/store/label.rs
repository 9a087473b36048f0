//! A run's label (`--label`): what a store keeps and finds a run by.

/// A run label: 1 to 64 characters, none of them control characters, and not
/// something that reads as an id (`last`, a number).
pub fn check_label(s: &str) -> Result<String, String> {
    let n = s.chars().count();
    if n == 0 || n > 64 {
        return Err(format!("'{s}': a label has 1 to 64 characters"));
    }
    if s.chars().any(char::is_control) {
        return Err("a label cannot hold control characters".into());
    }
    // A number of any length (99999999999999999999 is too big for an id, yet
    // reads as one, and `show` said "no run is labelled" of it).
    if s == "last" || s.parse::<i64>().is_ok() || s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{s}' would read as a run id: a label needs a letter in it (baseline, v1.2, ...)"
        ));
    }
    Ok(s.to_string())
}

/// A label given to a new run (`--label`): [`check_label`], and no space at
/// either end. `--label " nightly"` (a quoting slip) was kept as it came, shown
/// as "nightly" in a table, and then `compare nightly` found no run of it.
/// Labels already kept, or imported, are read as they are.
pub fn check_new_label(s: &str) -> Result<String, String> {
    let label = check_label(s)?;
    if label.trim() != label {
        return Err(format!(
            "'{s}': a label cannot begin or end with a space: a table shows it without \
             them, and its name without them would not find it"
        ));
    }
    Ok(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_label_has_no_space_at_either_end() {
        assert_eq!(check_new_label("nightly v2").as_deref(), Ok("nightly v2"));
        for bad in [" nightly", "nightly ", "\u{a0}nightly", "   "] {
            let e = check_new_label(bad).unwrap_err();
            assert!(e.contains("begin or end with a space"), "{bad:?}: {e}");
            // Kept or imported ones still read as they are.
            assert!(check_label(bad).is_ok(), "{bad:?}");
        }
    }
}
