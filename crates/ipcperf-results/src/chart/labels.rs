//! A chart's labels are made of parts (mechanism, mode, size, place): a part
//! every label holds alike is said once, in the title, not on every line
//! ("posix-sem-named processes shared-l3 0→1 request/rele…" was cut short on a
//! chart whose every case ran in processes at shared-l3 0→1).

/// The parts that every one of `labels` holds at the same place (joined, for
/// a title; empty where none), and each label without them. Labels of
/// different shapes, fewer than two, or one that would be left empty share
/// nothing. Empty parts are left out of both.
pub(crate) fn shorten(labels: &[Vec<String>]) -> (String, Vec<String>) {
    let join = |parts: &mut dyn Iterator<Item = &String>| {
        parts
            .filter(|p| !p.is_empty())
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let whole = || labels.iter().map(|l| join(&mut l.iter())).collect();
    let Some(first) = labels.first() else {
        return (String::new(), Vec::new());
    };
    if labels.len() < 2 || labels.iter().any(|l| l.len() != first.len()) {
        return (String::new(), whole());
    }
    let shared: Vec<bool> = (0..first.len())
        .map(|i| labels.iter().all(|l| l[i] == first[i]))
        .collect();
    let short: Vec<String> = labels
        .iter()
        .map(|l| join(&mut l.iter().zip(&shared).filter(|p| !p.1).map(|p| p.0)))
        .collect();
    if short.iter().any(String::is_empty) {
        return (String::new(), whole());
    }
    let common = join(&mut first.iter().zip(&shared).filter(|p| *p.1).map(|p| p.0));
    (common, short)
}

/// For labels that are not made of parts (a comparison's case names, of
/// several shapes): the words every label holds (in the first label's order,
/// for a title) and each label without them ("pipe 64 B · switches/msg" where
/// every row ran in processes, shared-l3 0→1, touch). Nothing is taken where a
/// label would be left empty or two would read alike.
pub(crate) fn shorten_words(labels: &[String]) -> (String, Vec<String>) {
    let unchanged = || (String::new(), labels.to_vec());
    let Some(first) = labels.first() else {
        return unchanged();
    };
    if labels.len() < 2 {
        return unchanged();
    }
    let shared: Vec<&str> = first
        .split_whitespace()
        .filter(|w| labels.iter().all(|l| l.split_whitespace().any(|x| x == *w)))
        .collect();
    let short: Vec<String> = labels
        .iter()
        .map(|l| {
            l.split_whitespace()
                .filter(|w| !shared.contains(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut seen = short.clone();
    seen.sort();
    seen.dedup();
    if short.iter().any(String::is_empty) || seen.len() < short.len() {
        return unchanged();
    }
    let mut title: Vec<&str> = Vec::new();
    for w in shared {
        if !title.contains(&w) {
            title.push(w);
        }
    }
    (title.join(" "), short)
}

/// `title` with what every line shares after its first clause: "Round trips,
/// fastest p50 first · processes 512 B".
pub(crate) fn titled(title: &str, shared: &str) -> String {
    if shared.is_empty() {
        title.to_string()
    } else {
        format!("{title} · {shared}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(v: &[&[&str]]) -> Vec<Vec<String>> {
        v.iter()
            .map(|l| l.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn a_part_every_label_holds_is_said_once() {
        let l = parts(&[
            &["pipe", "processes", "512 B", "same-cpu 0→0", ""],
            &["unix (epoll)", "processes", "512 B", "shared-l3 0→1", ""],
        ]);
        let (common, short) = shorten(&l);
        assert_eq!(common, "processes 512 B");
        assert_eq!(short, ["pipe same-cpu 0→0", "unix (epoll) shared-l3 0→1"]);
    }

    #[test]
    fn words_every_case_name_holds_go_to_the_title() {
        let names: Vec<String> = [
            "stream pipe processes 64 B shared-l3 0→1 touch · switches/msg",
            "stream pipe processes 64 B shared-l3 0→1 touch",
            "stream unix processes 4 KiB shared-l3 0→1 touch · CPU µs/msg",
        ]
        .map(String::from)
        .to_vec();
        let (title, short) = shorten_words(&names);
        assert_eq!(title, "stream processes shared-l3 0→1 touch");
        assert_eq!(
            short,
            [
                "pipe 64 B · switches/msg",
                "pipe 64 B",
                "unix 4 KiB · CPU µs/msg"
            ]
        );
        // A name that would be left empty, or two that would read alike: as they were.
        let alike: Vec<String> = ["a b", "b a"].map(String::from).to_vec();
        assert_eq!(shorten_words(&alike), (String::new(), alike.clone()));
        let one: Vec<String> = vec!["pipe 64 B".into()];
        assert_eq!(shorten_words(&one), (String::new(), one.clone()));
    }

    #[test]
    fn nothing_is_shared_where_it_would_lose_a_label() {
        // One label: its parts are the whole of it.
        let one = parts(&[&["pipe", "processes", "512 B"]]);
        assert_eq!(
            shorten(&one),
            (String::new(), vec!["pipe processes 512 B".into()])
        );
        // Two alike: neither may be left empty.
        let twins = parts(&[&["pipe", "processes"], &["pipe", "processes"]]);
        assert_eq!(shorten(&twins).0, "");
        assert_eq!(shorten(&twins).1, ["pipe processes", "pipe processes"]);
        // Different shapes: no part is at the same place in both.
        let mixed = parts(&[&["pipe", "processes", "512 B"], &["futex", "processes"]]);
        assert_eq!(shorten(&mixed).0, "");
        assert_eq!(
            shorten(&mixed).1,
            ["pipe processes 512 B", "futex processes"]
        );
        assert_eq!(titled("Cycles per second", ""), "Cycles per second");
        assert_eq!(
            titled("Round trips", "processes"),
            "Round trips · processes"
        );
    }
}
