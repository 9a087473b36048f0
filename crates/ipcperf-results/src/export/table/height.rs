//! Column widths that make a wrapped table's rows shortest: the numbers only
//! (how many lines each cell takes at each width), so the table's text and
//! wrapping stay in [`super`].

/// Widths from `floors` with up to `spare` more columns shared out so that the
/// rows are as short as they can be (of those, the fewest lines in all).
/// `lines[i][r][w - floors[i]]` is how many lines row `r`'s cell of column `i`
/// takes at width `w` (one entry past its widest need at most); a row is as
/// tall as its tallest cell. Where the columns whose lines change with their
/// width (a figure's never do) are few, every way is tried; else each step
/// goes where it takes the most lines off per column spent, then width moves
/// between two columns while that shortens the rows.
pub(super) fn shortest(lines: &[Vec<Vec<usize>>], floors: &[usize], spare: usize) -> Vec<usize> {
    let n = floors.len();
    let mut spare = spare;
    let top = |i: usize| floors[i] + lines[i][0].len() - 1;
    let height = |w: &[usize]| -> usize {
        (0..lines.first().map_or(0, Vec::len))
            .map(|r| {
                (0..n)
                    .map(|i| lines[i][r][w[i] - floors[i]])
                    .max()
                    .unwrap_or(1)
            })
            .sum()
    };
    // Few columns whose lines change with their width (a figure's never do):
    // every way to share the spare among them, the shortest rows kept (the
    // narrowest of those).
    let elastic: Vec<usize> = (0..n)
        .filter(|&i| lines[i].iter().any(|l| l.first() != l.last()))
        .collect();
    let ways = elastic
        .iter()
        .map(|&i| top(i) - floors[i] + 1)
        .fold(1usize, |a, b| a.saturating_mul(b));
    if ways <= 200_000 {
        let mut w = floors.to_vec();
        // Of the shortest, the one with the fewest lines in all (a name not
        // broken where the row is as tall either way), then the narrowest.
        let cells = |w: &[usize]| -> usize {
            (0..n)
                .map(|i| lines[i].iter().map(|l| l[w[i] - floors[i]]).sum::<usize>())
                .sum()
        };
        let mut best = ((usize::MAX, 0, 0), w.clone());
        every_share(
            &elastic,
            0,
            spare,
            &mut w,
            &mut |w| {
                let key = (height(w), cells(w), w.iter().sum::<usize>());
                if key < best.0 {
                    best = (key, w.to_vec());
                }
            },
            &top,
            floors,
        );
        return best.1;
    }
    let mut w = floors.to_vec();
    while spare > 0 {
        let now = height(&w);
        // The best (lines saved per column, column, step).
        let mut best: Option<(f64, usize, usize)> = None;
        for i in 0..n {
            for step in 1..=(top(i) - w[i]).min(spare) {
                let mut v = w.clone();
                v[i] += step;
                let h = height(&v);
                let rate = now.saturating_sub(h) as f64 / step as f64;
                if h < now && best.is_none_or(|(b, _, _)| rate > b) {
                    best = Some((rate, i, step));
                }
            }
        }
        let Some((_, i, step)) = best else { break };
        w[i] += step;
        spare -= step;
    }
    // Width moved between two columns, the move that shortens most first.
    loop {
        let now = height(&w);
        let mut best: Option<(usize, usize, usize, usize)> = None;
        for from in 0..n {
            for to in (0..n).filter(|&to| to != from) {
                for step in 1..=(w[from] - floors[from]).min(top(to) - w[to]) {
                    let mut v = w.clone();
                    v[from] -= step;
                    v[to] += step;
                    let h = height(&v);
                    if h < best.map_or(now, |b| b.0) {
                        best = Some((h, from, to, step));
                    }
                }
            }
        }
        let Some((_, from, to, step)) = best else {
            break;
        };
        w[from] -= step;
        w[to] += step;
    }
    w
}

/// Calls `f` with `w` for each way to widen the columns `cols[at..]` from
/// `floors` within `spare` in all (each at most `top`).
fn every_share(
    cols: &[usize],
    at: usize,
    spare: usize,
    w: &mut Vec<usize>,
    f: &mut dyn FnMut(&[usize]),
    top: &dyn Fn(usize) -> usize,
    floors: &[usize],
) {
    let Some(&i) = cols.get(at) else {
        f(w);
        return;
    };
    for extra in 0..=(top(i) - floors[i]).min(spare) {
        w[i] = floors[i] + extra;
        every_share(cols, at + 1, spare - extra, w, f, top, floors);
    }
    w[i] = floors[i];
}
