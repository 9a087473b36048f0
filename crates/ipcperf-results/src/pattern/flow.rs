//! One way of a conversation: how many messages, their sizes and the gaps
//! between them, kept as histograms (never the messages), and the patterns
//! fitted to them.

use hdrhistogram::Histogram;

use super::fitted;

/// Sizes and gaps of the messages one way.
#[derive(Clone)]
pub struct Flow {
    pub count: u64,
    pub bytes: u64,
    pub sizes: Histogram<u64>,
    /// Nanoseconds between one message and the next.
    pub gaps: Histogram<u64>,
    pub first_ns: Option<u64>,
    pub last_ns: u64,
    /// Σ ln(size) and Σ ln(size)², for the lognormal fit.
    ln_sum: f64,
    ln_sq: f64,
    /// The smallest and largest size and gap seen, exactly: the histograms
    /// hold values to 0.1%, so their min and max are a bucket's edge (a
    /// 100,000,000-byte message reads 100,007,935), not a size seen.
    size_lo: u64,
    size_hi: u64,
    gap_lo: u64,
    gap_hi: u64,
    /// The first [`DISTINCT`] sizes seen, each with its exact count: a way
    /// of one size but a short last write is that size. Past them, sizes not
    /// yet seen are left uncounted (`full`), those seen still counted, so a
    /// size most messages have is found however many others there are.
    pub(super) distinct: std::collections::BTreeMap<u64, u64>,
    /// Whether a size went uncounted (here, or in a way merged in).
    full: bool,
}

/// The most sizes a way keeps counts of (a way merged from others up to twice
/// as many, each still exact).
const DISTINCT: usize = 64;

/// The share of messages one size must have for the way to be fitted as that
/// size (`fixed:`): a pipe's 4 KiB writes and a short last one are 4 KiB
/// writes, not a lognormal around 4016 B whose draws are never page-sized.
pub const MOSTLY: f64 = 0.9;

impl Flow {
    pub(super) fn new() -> Flow {
        Flow {
            count: 0,
            bytes: 0,
            // 3 significant figures: sizes and gaps to 0.1%.
            sizes: Histogram::new(3).unwrap_or_else(|_| unreachable!("3 figures is valid")),
            gaps: Histogram::new(3).unwrap_or_else(|_| unreachable!("3 figures is valid")),
            first_ns: None,
            last_ns: 0,
            ln_sum: 0.0,
            ln_sq: 0.0,
            size_lo: u64::MAX,
            size_hi: 0,
            gap_lo: u64::MAX,
            gap_hi: 0,
            distinct: Default::default(),
            full: false,
        }
    }

    pub(super) fn add(&mut self, time_ns: u64, bytes: u64) {
        if self.first_ns.is_none() {
            self.first_ns = Some(time_ns);
        } else {
            // Out of order (a -ff merge, a resumed read): a gap of 0.
            let gap = time_ns.saturating_sub(self.last_ns);
            let _ = self.gaps.record(gap);
            self.gap_lo = self.gap_lo.min(gap);
            self.gap_hi = self.gap_hi.max(gap);
        }
        self.last_ns = self.last_ns.max(time_ns);
        self.count += 1;
        self.bytes += bytes;
        let _ = self.sizes.record(bytes);
        self.size_lo = self.size_lo.min(bytes);
        self.size_hi = self.size_hi.max(bytes);
        if let Some(n) = self.distinct.get_mut(&bytes) {
            *n += 1;
        } else if self.distinct.len() < DISTINCT {
            self.distinct.insert(bytes, 1);
        } else {
            self.full = true;
        }
        let l = (bytes as f64).ln();
        self.ln_sum += l;
        self.ln_sq += l * l;
    }

    pub(super) fn merge(&mut self, o: &Flow) {
        if o.count == 0 {
            return;
        }
        self.count += o.count;
        self.bytes += o.bytes;
        let _ = self.sizes.add(&o.sizes);
        let _ = self.gaps.add(&o.gaps);
        self.first_ns = Some(match self.first_ns {
            Some(f) => f.min(o.first_ns.unwrap_or(f)),
            None => o.first_ns.unwrap_or(0),
        });
        self.last_ns = self.last_ns.max(o.last_ns);
        self.ln_sum += o.ln_sum;
        self.ln_sq += o.ln_sq;
        self.size_lo = self.size_lo.min(o.size_lo);
        self.size_hi = self.size_hi.max(o.size_hi);
        self.gap_lo = self.gap_lo.min(o.gap_lo);
        self.gap_hi = self.gap_hi.max(o.gap_hi);
        // A size's count stays exact where each side counted it, or has
        // counted every size it saw (so it saw none of it); else it goes.
        let (mine, full) = (std::mem::take(&mut self.distinct), self.full);
        let known = |d: &std::collections::BTreeMap<u64, u64>, full: bool, size: &u64| {
            d.get(size).copied().or((!full).then_some(0))
        };
        for size in mine.keys().chain(o.distinct.keys()) {
            if let (Some(a), Some(b)) = (known(&mine, full, size), known(&o.distinct, o.full, size))
            {
                self.distinct.insert(*size, a + b);
            }
        }
        self.full = full || o.full;
        // Ways of many sizes merged again and again: the commonest kept, the
        // rest left uncounted, so a merged way stays small.
        if self.distinct.len() > 2 * DISTINCT {
            let mut v: Vec<(u64, u64)> = self.distinct.iter().map(|(s, n)| (*s, *n)).collect();
            v.sort_by_key(|&(size, n)| (std::cmp::Reverse(n), size));
            v.truncate(2 * DISTINCT);
            self.distinct = v.into_iter().collect();
            self.full = true;
        }
    }

    /// The commonest size and how many messages had it, where that is known:
    /// every size was counted, or this one had more messages than all those
    /// left uncounted together.
    pub fn commonest(&self) -> Option<(u64, u64)> {
        let (size, n) = self
            .distinct
            .iter()
            .max_by_key(|(size, n)| (**n, std::cmp::Reverse(**size)))
            .map(|(s, n)| (*s, *n))?;
        let uncounted = self.count.saturating_sub(self.distinct.values().sum());
        (!self.full || n > uncounted).then_some((size, n))
    }

    /// The smallest and the largest message, as seen (0, 0 with none).
    pub fn size_range(&self) -> (u64, u64) {
        if self.count == 0 {
            (0, 0)
        } else {
            (self.size_lo, self.size_hi)
        }
    }

    /// The size at quantile `q`, within the sizes seen (one size: that size).
    pub fn size_at(&self, q: f64) -> u64 {
        let (lo, hi) = self.size_range();
        self.sizes.value_at_quantile(q).clamp(lo, hi)
    }

    /// The gap at quantile `q`, within the gaps seen; `None` under two messages.
    pub fn gap_at(&self, q: f64) -> Option<u64> {
        (self.gap_lo <= self.gap_hi).then(|| {
            self.gaps
                .value_at_quantile(q)
                .clamp(self.gap_lo, self.gap_hi)
        })
    }

    /// The longest gap seen; `None` under two messages.
    pub fn gap_max(&self) -> Option<u64> {
        (self.gap_lo <= self.gap_hi).then_some(self.gap_hi)
    }

    /// The sizes fitted: [`fitted::Sizes::Fixed`] when every message, or
    /// [`MOSTLY`] of them, had one size, else a lognormal (the geometric mean
    /// and geometric standard deviation).
    pub fn size_fit(&self) -> Option<fitted::Sizes> {
        if self.count == 0 {
            return None;
        }
        let (lo, hi) = self.size_range();
        if lo == hi {
            return Some(fitted::Sizes::Fixed(lo));
        }
        if let Some((size, n)) = self.commonest() {
            if n as f64 >= MOSTLY * self.count as f64 {
                return Some(fitted::Sizes::Fixed(size));
            }
        }
        let n = self.count as f64;
        let mean = self.ln_sum / n;
        let var = (self.ln_sq / n - mean * mean).max(0.0);
        Some(fitted::Sizes::LogNormal {
            median: mean.exp(),
            spread: var.sqrt().exp(),
        })
    }

    /// The gaps fitted: Poisson arrivals at the mean rate.
    pub fn gap_fit(&self) -> Option<fitted::Gaps> {
        let span = self.last_ns.saturating_sub(self.first_ns?);
        if self.count < 2 || span == 0 {
            return None;
        }
        let rate = (self.count - 1) as f64 / (span as f64 / 1e9);
        Some(fitted::Gaps::Poisson(rate.clamp(0.001, 1e7)))
    }
}
