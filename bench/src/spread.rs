//! Min / median / max of a series of runs, as BENCHMARKS.md reports them.

/// (min, median, max) of `v` (the upper median for an even count); `v`
/// must not be empty.
pub fn min_median_max(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2], s[s.len() - 1])
}
