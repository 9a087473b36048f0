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
