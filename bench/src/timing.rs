//! Interleaved timing: every round runs each candidate for the same number
//! of iterations, starting with a different candidate each round, so drift
//! (frequency, other load, a noisy VM) hits them alike. Reported: the median
//! time per call over rounds, and the median over rounds of each
//! candidate's time divided by the first candidate's time in the same
//! round (a paired ratio, much steadier than a ratio of medians).

use std::time::Instant;

/// A named candidate.
pub type Candidate<'a> = (&'a str, &'a mut dyn FnMut());

/// One candidate's result.
pub struct Result {
    /// Its name.
    pub name: String,
    /// Median nanoseconds per call.
    pub ns: f64,
    /// Median over rounds of (this / first candidate), same round.
    pub ratio_to_first: f64,
    /// Nanoseconds per call in each round, in round order (for ratios
    /// paired with another candidate than the first).
    pub rounds: Vec<f64>,
}

/// `rounds` rounds of `iterations` calls of each candidate.
pub fn compare(rounds: usize, iterations: u64, candidates: &mut [Candidate<'_>]) -> Vec<Result> {
    let n = candidates.len();
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); n];
    // One untimed pass warms caches and the branch predictors.
    for (_, run) in candidates.iter_mut() {
        for _ in 0..iterations / 10 {
            run();
        }
    }
    for round in 0..rounds {
        for k in 0..n {
            let i = (round + k) % n;
            let run = &mut candidates[i].1;
            let start = Instant::now();
            for _ in 0..iterations {
                run();
            }
            samples[i].push(start.elapsed().as_nanos() as f64 / iterations as f64);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (0..n)
        .map(|i| Result {
            name: candidates[i].0.to_owned(),
            ns: median(samples[i].clone()),
            ratio_to_first: median(
                samples[i]
                    .iter()
                    .zip(&samples[0])
                    .map(|(x, base)| x / base)
                    .collect(),
            ),
            rounds: samples[i].clone(),
        })
        .collect()
}

/// Min, median and max over rounds of `f(a, b)`, `a` and `b` the same
/// round's times of two candidates.
pub fn paired(a: &Result, b: &Result, f: impl Fn(f64, f64) -> f64) -> [f64; 3] {
    let mut v: Vec<f64> = a
        .rounds
        .iter()
        .zip(&b.rounds)
        .map(|(x, y)| f(*x, *y))
        .collect();
    v.sort_by(f64::total_cmp);
    [v[0], v[v.len() / 2], v[v.len() - 1]]
}

/// Prints a Markdown table.
pub fn print(results: &[Result]) {
    println!(
        "| what | ns per call | vs {} (paired) |\n|---|---:|---:|",
        results[0].name
    );
    for r in results {
        println!(
            "| {} | {:.1} | {:+.2} % |",
            r.name,
            r.ns,
            (r.ratio_to_first - 1.0) * 100.0
        );
    }
}
