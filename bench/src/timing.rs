//! Interleaved timing: every round runs each candidate once for the same
//! number of iterations, in turn, so drift (frequency, other load) hits
//! them alike; the median over rounds is reported.

use std::time::Instant;

/// A named candidate.
pub type Candidate<'a> = (&'a str, &'a mut dyn FnMut());

/// `rounds` rounds of `iterations` calls of each candidate; returns the
/// name and median nanoseconds per call of each.
pub fn compare(
    rounds: usize,
    iterations: u64,
    candidates: &mut [Candidate<'_>],
) -> Vec<(String, f64)> {
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); candidates.len()];
    // One untimed round warms caches and the branch predictors.
    for (_, run) in candidates.iter_mut() {
        for _ in 0..iterations / 10 {
            run();
        }
    }
    for _ in 0..rounds {
        for (i, (_, run)) in candidates.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..iterations {
                run();
            }
            samples[i].push(start.elapsed().as_nanos() as f64 / iterations as f64);
        }
    }
    candidates
        .iter()
        .zip(samples)
        .map(|((name, _), mut s)| {
            s.sort_by(f64::total_cmp);
            ((*name).to_owned(), s[s.len() / 2])
        })
        .collect()
}

/// Prints a Markdown table.
pub fn print(results: &[(String, f64)]) {
    println!("| what | ns per call |\n|---|---:|");
    for (name, ns) in results {
        println!("| {name} | {ns:.1} |");
    }
}
