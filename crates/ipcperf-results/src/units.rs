//! Parsing and printing of sizes (`64k`, `1M`), size lists (`64,1k`, `16..1M`,
//! `bradford`) and durations (`2s`, `500ms`). Binary prefixes: 1k = 1024.

use ipcperf_core::plan::{pow2_range, BRADFORD_SIZES};

/// A byte count, by the one rule every help states: k, M, G (KiB, MiB, GiB)
/// are powers of 2, kB, MB, GB powers of 10 (`64k`, `64KiB` → 65536, `64kB` →
/// 64000; counts and rates take k = 1000).
/// Zero is refused: a block of no bytes measures nothing.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let decimal = lower.ends_with('b')
        && !lower.ends_with("ib")
        && lower[..lower.len() - 1]
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphabetic());
    if decimal && !negative(t) {
        let v = parse_size::Config::new()
            .parse_size(t)
            .map_err(|e| format!("'{s}' is not a size ({e}); try 1MB, 1MiB or 1M"))?;
        if v == 0 {
            return Err(format!("'{s}': a size must be at least 1 byte"));
        }
        return usize::try_from(v).map_err(|_| format!("'{s}' is too large"));
    }
    parse_binary(t)
}

/// `-64k`, `-1`: a number with a minus sign (not `--verify`).
fn negative(s: &str) -> bool {
    s.trim()
        .strip_prefix('-')
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
}

/// A size whose suffixes are powers of 2 (`k`, `KiB`).
fn parse_binary(s: &str) -> Result<usize, String> {
    let cfg = parse_size::Config::new().with_binary();
    if negative(s) {
        return Err(format!("'{s}': a size cannot be negative"));
    }
    let v = cfg
        .parse_size(s.trim())
        .map_err(|e| format!("'{s}' is not a size ({e}); try 64, 4k, 1M or 1MiB"))?;
    if v == 0 {
        return Err(format!("'{s}': a size must be at least 1 byte"));
    }
    usize::try_from(v).map_err(|_| format!("'{s}' is too large"))
}

/// The largest block, chunk or buffer any flag takes: 1 GiB. Larger ones are not
/// IPC blocks, and would fail (or abort) allocating their buffers.
pub const MAX_BLOCK: usize = 1 << 30;

/// A size for one block, chunk or buffer: as [`parse_size`], at most [`MAX_BLOCK`].
pub fn parse_block(s: &str) -> Result<usize, String> {
    let v = parse_size(s)?;
    if v > MAX_BLOCK {
        return Err(format!("'{s}' is more than a block may be (at most 1G)"));
    }
    Ok(v)
}

/// A list of sizes: comma-separated sizes, power-of-two ranges `lo..hi`, or the
/// preset `bradford` (his pipespeed2 sizes, 1 B to 4 KiB). Sorted, duplicates removed.
pub fn parse_sizes(s: &str) -> Result<Vec<usize>, String> {
    let mut v = Vec::new();
    refuse_empty_item(s, "64,1k,64k")?;
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if item.eq_ignore_ascii_case("bradford") {
            v.extend_from_slice(&BRADFORD_SIZES);
        } else if let Some((lo, hi)) = item.split_once("..") {
            let (lo, hi) = (parse_block(lo)?, parse_block(hi)?);
            if hi < lo {
                return Err(format!("'{item}': the range ends below where it starts"));
            }
            v.extend(pow2_range(lo, hi));
            // Both ends as given, powers of two or not: 100..1000 ends at 1000.
            v.push(hi);
        } else {
            v.push(parse_block(item)?);
        }
    }
    if v.is_empty() {
        return Err(format!("'{s}' names no sizes"));
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// A list with an empty item (`64k,,4k`, `64k,`) is bad input, not a shorter
/// list: a size typed between the commas may have been lost.
pub fn refuse_empty_item(s: &str, example: &str) -> Result<(), String> {
    if s.trim().is_empty() || !s.split(',').any(|i| i.trim().is_empty()) {
        return Ok(());
    }
    Err(format!(
        "'{s}': an item between commas is empty; list them as {example}"
    ))
}

/// The longest duration any flag takes: a day. Longer ones are typing mistakes, and
/// some (2^64 s) do not fit a `Duration` at all.
pub const MAX_DURATION_SECS: f64 = 86_400.0;

/// `2s`, `500ms`, `1.5s`, `100us`, `1m`; a number needs its unit. Must be > 0.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("'{s}': a duration must be more than zero"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration; try 2s, 500ms or 1m"))?;
    let scale = match unit.trim() {
        "" => {
            return Err(format!(
                "'{s}' has no unit: write {num}s or {num}ms (ns, us, ms, s, m, h)"
            ))
        }
        "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        u => {
            return Err(format!(
                "'{s}': unknown unit '{u}' (use ns, us, ms, s, m or h)"
            ))
        }
    };
    let secs = n * scale;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("'{s}': a duration must be more than zero"));
    }
    if secs > MAX_DURATION_SECS {
        return Err(format!(
            "'{s}' is longer than ipcperf measures (at most {}h)",
            MAX_DURATION_SECS / 3600.0
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// The shortest series a flag may ask for: below it one block (or one clock
/// read's worth of work) fills the series, and nothing is timed.
pub const MIN_SERIES_NS: u128 = 100_000;

/// A series length (`--duration` of run, latency, sync): as [`parse_duration`],
/// at least 100 µs.
pub fn parse_series_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(s)?;
    if d.as_nanos() < MIN_SERIES_NS {
        return Err(format!(
            "'{s}' is too short to time a series: at least 100us (one block may take longer)"
        ));
    }
    Ok(d)
}

/// A byte count (`gen`, `sink`, `pipeline --bytes`): as every size,
/// [`parse_size`] (`1M`, `1MiB` = 1,048,576; `1MB` = 1,000,000).
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    parse_size(s)
}

/// 65536 → "64 KiB", 1000 → "1000 B".
pub fn fmt_size(n: u64) -> String {
    const U: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n;
    let mut i = 0;
    while i < 3 && v >= 1024 && v.is_multiple_of(1024) {
        v /= 1024;
        i += 1;
    }
    format!("{v} {}", U[i])
}

/// Bytes per second as MB/s (10^6 bytes), three significant figures or more.
pub fn fmt_mbps(bps: f64) -> String {
    let mb = bps / 1e6;
    if mb >= 100.0 {
        format!("{mb:.0}")
    } else if mb >= 10.0 {
        format!("{mb:.1}")
    } else {
        fmt_small(mb)
    }
}

/// A figure under 10 with two decimals ("1.11"), and one under 0.1 with two
/// significant figures ("0.00021"), never a measured value shown as "0.00";
/// only a true zero is "0".
pub fn fmt_small(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() || v.abs() >= 0.1 {
        return format!("{v:.2}");
    }
    let places = (1 - v.abs().log10().floor() as i64).clamp(2, 12) as usize;
    format!("{v:.places$}")
}

/// A figure to four significant digits at most, small ones as [`fmt_small`]:
/// "2327", "145.0", "14.90", "0.050". Compare's CPU time per 1 MiB message read
/// "2326.55 µs", a width that wrapped the case column at 80 columns.
pub fn fmt_figure(v: f64) -> String {
    if !v.is_finite() {
        return fmt_small(v);
    }
    match v.abs() {
        a if a >= 999.95 => format!("{v:.0}"),
        a if a >= 99.995 => format!("{v:.1}"),
        _ => fmt_small(v),
    }
}

/// Nanoseconds in the unit that reads best, two decimals: "812 ns", "46.27 µs",
/// "8.00 ms", "1.50 s" (fleet's 8 ms round trip read "8004.46 µs").
pub fn fmt_time_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A rate with a k/M suffix: 1234567 → "1.23M".
pub fn fmt_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2}M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k", r / 1e3)
    } else if r >= 1.0 || r <= 0.0 {
        format!("{r:.0}")
    } else {
        // Below one a second, three figures: 0.4/s was "0/s".
        let places = (2.0 - r.log10().floor()).clamp(0.0, 12.0) as usize;
        format!("{r:.places$}")
    }
}

/// A percentage, `5%` or `5`, as a fraction (0.05); 0 to 100.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%').trim();
    match t.parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p / 100.0),
        Ok(_) => Err(format!("'{s}': a percentage from 0 to 100")),
        Err(_) => Err(format!("'{s}' is not a percentage (5%, 2.5)")),
    }
}

/// `spin`, `futex`, `eventfd` or `sem`: how an shm ring's waiting side is woken.
pub fn parse_wake(s: &str) -> Result<ipcperf_core::mechanism::shm_ring::Wake, String> {
    ipcperf_core::mechanism::shm_ring::Wake::from_name(s.trim()).ok_or_else(|| {
        format!("unknown wake-up '{s}' (known: spin, futex, eventfd, sem, adaptive)")
    })
}

/// A whole count, with k = 1000 and M = 10^6 as rates take them (`10k`, `2M`),
/// from `lo` to `hi`. A negative one says so ("'-1': a count from 1 to …"),
/// not "invalid digit found in string".
pub fn parse_count(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000),
        Some((i, 'M')) => (&t[..i], 1_000_000),
        _ => (t, 1),
    };
    let range = || format!("'{s}': a count from {lo} to {hi}");
    if num.starts_with('-') && num[1..].parse::<u64>().is_ok() {
        return Err(range());
    }
    let n = num
        .parse::<u64>()
        .map_err(|_| format!("'{s}' is not a count; try 1000 or 10k"))?;
    match n.checked_mul(mult) {
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(range()),
    }
}

/// A seed (`gen --seed`, `sink --verify-seed`, `replay --seed`): a whole number
/// from 0 to 2^64 − 1, said so ("invalid digit found in string" was all `-1` got).
pub fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("'{s}' is not a seed: a whole number from 0 to {}", u64::MAX))
}

/// `--count`: blocks or round trips a series, 1 to 2^26.
pub fn parse_series_count(s: &str) -> Result<u64, String> {
    parse_count(s, 1, 1 << 26)
}

/// `history --last`, `pattern --top`: 1 or more.
pub fn parse_positive_count(s: &str) -> Result<usize, String> {
    parse_count(s, 1, u64::from(u32::MAX)).map(|n| n as usize)
}

/// A parsed `--rate` list: round trips per second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateList(pub Vec<u64>);

/// `10k,50k,100000`: offered loads in round trips per second (k = 1000, M = 10^6:
/// rates are counted in tens, not in binary). From 1/s to 10M/s.
pub fn parse_rates(s: &str) -> Result<RateList, String> {
    let mut v = Vec::new();
    for item in s.split(',').map(str::trim) {
        let (num, mult) = match item.char_indices().last() {
            Some((i, 'k' | 'K')) => (&item[..i], 1e3),
            Some((i, 'M')) => (&item[..i], 1e6),
            _ => (item, 1.0),
        };
        let r = num
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(|x| x * mult)
            .ok_or_else(|| format!("'{item}' is not a rate; try 10k or 50000"))?;
        if !(1.0..=1e7).contains(&r) {
            return Err(format!(
                "'{item}': a rate from 1 to 10M round trips per second"
            ));
        }
        let r = r.round() as u64;
        if !v.contains(&r) {
            v.push(r);
        }
    }
    Ok(RateList(v))
}

/// A parsed `--wake` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeList(pub Vec<ipcperf_core::mechanism::shm_ring::Wake>);

/// `spin,futex,adaptive`: each wake-up once, in the order given.
pub fn parse_wakes(s: &str) -> Result<WakeList, String> {
    let mut v = Vec::new();
    for item in s.split(',') {
        let w = parse_wake(item)?;
        if !v.contains(&w) {
            v.push(w);
        }
    }
    Ok(WakeList(v))
}

/// Milliseconds since the epoch as `2026-11-21 02:58:22 UTC`.
pub fn fmt_utc(ms: u64) -> String {
    let ts = i64::try_from(ms)
        .ok()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok());
    match ts {
        Some(t) => t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
        // Past jiff's range (year 9999): no date to show, only the raw figure.
        None => format!("{ms} ms after 1970"),
    }
}

/// Case names in the order a reader expects: a size (`64 B`, `4 KiB`) by its
/// bytes, another number by its value, the other words as text. Sorted as
/// strings, `trend` and `fleet` listed 1 MiB before 4 KiB before 64 B.
pub fn case_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn words(s: &str) -> Vec<Result<f64, &str>> {
        let mut out = Vec::new();
        let mut it = s.split_whitespace().peekable();
        while let Some(w) = it.next() {
            let Ok(n) = w.parse::<f64>() else {
                out.push(Err(w));
                continue;
            };
            let scale = match it.peek() {
                Some(&"B") => 1.0,
                Some(&"KiB") => 1024.0,
                Some(&"MiB") => 1024.0 * 1024.0,
                Some(&"GiB") => 1024.0 * 1024.0 * 1024.0,
                _ => {
                    out.push(Ok(n));
                    continue;
                }
            };
            it.next();
            out.push(Ok(n * scale));
        }
        out
    }
    let (a, b) = (words(a), words(b));
    for (x, y) in a.iter().zip(&b) {
        let o = match (x, y) {
            (Ok(x), Ok(y)) => x.total_cmp(y),
            (Err(x), Err(y)) => x.cmp(y),
            (Ok(_), Err(_)) => std::cmp::Ordering::Less,
            (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        };
        if o.is_ne() {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_small_figure_keeps_two_significant_figures() {
        use super::{fmt_mbps, fmt_small};
        assert_eq!(fmt_small(0.0), "0");
        assert_eq!(fmt_small(1.114), "1.11");
        assert_eq!(fmt_small(0.17), "0.17");
        assert_eq!(fmt_small(0.05), "0.050");
        assert_eq!(fmt_small(0.000213), "0.00021");
        use super::fmt_figure;
        assert_eq!(fmt_figure(2326.55), "2327");
        assert_eq!(fmt_figure(144.96), "145.0");
        assert_eq!(fmt_figure(99.999), "100.0");
        assert_eq!(fmt_figure(14.9), "14.90");
        assert_eq!(fmt_figure(0.05), "0.050");
        assert_eq!(fmt_mbps(4_000.0), "0.0040");
        assert_eq!(fmt_mbps(5.5e6), "5.50");
    }

    #[test]
    fn cases_sort_by_their_sizes_not_their_spelling() {
        let mut v = vec![
            "stream pipe processes 1 MiB same-cpu touch",
            "stream pipe processes 64 KiB same-cpu touch",
            "stream pipe processes 64 B shared-l3 touch",
            "stream pipe processes 4 KiB same-cpu touch",
            "stream pipe processes 64 B same-cpu touch",
            "stream fifo processes 1 MiB same-cpu touch",
        ];
        v.sort_by(|a, b| super::case_order(a, b));
        assert_eq!(
            v,
            [
                "stream fifo processes 1 MiB same-cpu touch",
                "stream pipe processes 64 B same-cpu touch",
                "stream pipe processes 64 B shared-l3 touch",
                "stream pipe processes 4 KiB same-cpu touch",
                "stream pipe processes 64 KiB same-cpu touch",
                "stream pipe processes 1 MiB same-cpu touch",
            ]
        );
    }

    use super::*;

    /// One rule for every number with a suffix (issue 52): a size's k, M, G and
    /// KiB, MiB, GiB are powers of 2, its kB, MB, GB powers of 10, in --sizes
    /// (which read 1MB as 2^20) as in gen's --bytes (which read it as 10^6);
    /// a rate's k is 1000.
    #[test]
    fn a_suffix_means_one_thing_everywhere() {
        for parse in [parse_size, parse_bytes, parse_block] {
            assert_eq!(parse("64k"), Ok(65_536));
            assert_eq!(parse("64K"), Ok(65_536));
            assert_eq!(parse("64KiB"), Ok(65_536));
            assert_eq!(parse("64kB"), Ok(64_000));
            assert_eq!(parse("1M"), Ok(1 << 20));
            assert_eq!(parse("1MB"), Ok(1_000_000));
        }
        assert_eq!(parse_sizes("1MB,64k").unwrap(), vec![65_536, 1_000_000]);
        assert_eq!(parse_rates("10k").unwrap().0, vec![10_000]);
        assert_eq!(parse_series_count("10k"), Ok(10_000));
        assert_eq!(parse_series_count("2M"), Ok(2_000_000));
        assert_eq!(parse_series_count(" 7 "), Ok(7));
        for bad in ["-1", "0", "-10k", "100M"] {
            assert!(
                parse_series_count(bad)
                    .unwrap_err()
                    .contains("a count from 1 to"),
                "{bad}"
            );
        }
        for bad in ["1.5", "x", "", "k", "1e3", "--verify"] {
            assert!(
                parse_series_count(bad).unwrap_err().contains("not a count"),
                "{bad}"
            );
        }
    }

    #[test]
    fn utc_dates() {
        assert_eq!(fmt_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(fmt_utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(fmt_utc(1_763_693_902_000), "2025-11-21 02:58:22 UTC");
        // Beyond any calendar jiff keeps: the figure, never a panic.
        assert_eq!(fmt_utc(u64::MAX), format!("{} ms after 1970", u64::MAX));
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("5%").unwrap(), 0.05);
        assert_eq!(parse_percent("2.5").unwrap(), 0.025);
        assert_eq!(parse_percent("0").unwrap(), 0.0);
        assert!(parse_percent("101%").is_err());
        assert!(parse_percent("-1").is_err());
        assert!(parse_percent("five").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64k").unwrap(), 65536);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("100").unwrap(), 100);
        assert!(parse_size("0").is_err());
        assert_eq!(
            parse_size("-64k"),
            Err("'-64k': a size cannot be negative".into())
        );
        assert_eq!(
            parse_size("-1MB"),
            Err("'-1MB': a size cannot be negative".into())
        );
        assert!(parse_size("12q").is_err());
        assert_eq!(parse_sizes("64,1k,64k").unwrap(), vec![64, 1024, 65536]);
        assert_eq!(parse_sizes("16..128").unwrap(), vec![16, 32, 64, 128]);
        assert_eq!(parse_sizes("bradford").unwrap().len(), 62);
        assert!(parse_sizes("1M..16").is_err());
        assert!(parse_sizes(",").is_err());
        for typo in ["64k,,4k", "64k,", ",64", "64, ,4k"] {
            let e = parse_sizes(typo).unwrap_err();
            assert!(e.contains("between commas is empty"), "{typo}: {e}");
        }
        assert!(parse_sizes("").unwrap_err().contains("names no sizes"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s").unwrap().as_millis(), 2000);
        assert_eq!(parse_duration("500ms").unwrap().as_millis(), 500);
        assert_eq!(parse_duration("1.5s").unwrap().as_millis(), 1500);
        assert!(parse_duration("50").unwrap_err().contains("50s"));
        assert!(parse_series_duration("50us").unwrap_err().contains("100us"));
        assert_eq!(parse_series_duration("100us").unwrap().as_micros(), 100);
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("3 weeks").is_err());
    }

    #[test]
    fn printing() {
        assert_eq!(fmt_size(65536), "64 KiB");
        assert_eq!(fmt_size(1000), "1000 B");
        assert_eq!(fmt_size(1 << 20), "1 MiB");
        assert_eq!(fmt_mbps(6.0e9), "6000");
        assert_eq!(fmt_rate(1_234_567.0), "1.23M");
        // Below one a second, three figures, never "0".
        assert_eq!(fmt_rate(0.4), "0.400");
        assert_eq!(fmt_rate(0.0123), "0.0123");
        assert_eq!(fmt_rate(7.4), "7");
        assert_eq!(fmt_rate(0.0), "0");
    }
}
