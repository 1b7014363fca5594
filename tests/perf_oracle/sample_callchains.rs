//! `sample -g --folded FILE -- ./hot` against `perf record -g -- ./hot` +
//! `perf script`: the folded stacks are flame-graph input (`comm;caller;
//! ...;callee count`, the command's name first, every sample once), and
//! each hot function of the workload is reached by the same call path in
//! our stacks as in perf's callchains of its own recording. The shares of
//! the functions (each one's "Children" total against perf report's) are
//! measured by `cargo run --release -p bench --bin sample_vs_perf_shares`
//! (BENCHMARKS.md section 13), not asserted: they move with the load.

use crate::sample_support::{
    build_sample, hot, ok, one_busy_test_at_a_time, perf_on, sample, scratch, tools_here,
};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

const PERIOD: &str = "50000";
const N: &str = "100000000";

/// Folded stacks (`comm;root;...;leaf`) and their sample counts.
type Stacks = BTreeMap<String, u64>;

/// perf script's callchains of `data` (a block per sample: the command's
/// name, then `ip symbol` lines from the leaf), folded as ours are.
fn perf_folded(data: &std::path::Path) -> Stacks {
    let text = perf_on(data, &["script", "-F", "comm,ip,sym"]);
    let mut stacks = Stacks::new();
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut lines = block.lines();
        let comm = lines.next().unwrap().trim().replace(' ', "_");
        let mut frames: Vec<String> = lines
            .filter_map(|l| {
                let (_ip, sym) = l.trim().split_once(' ')?;
                Some(sym.trim().to_string())
            })
            .collect();
        frames.push(comm);
        frames.reverse();
        *stacks.entry(frames.join(";")).or_default() += 1;
    }
    stacks
}

/// The call paths to `f` (each stack holding it, cut after it) with at
/// least 1 % of the samples that hold it: a sample taken in a function's
/// first instructions, before its frame is set up, misses its caller in
/// both tools alike, and such rare paths are left out.
fn paths_to(stacks: &Stacks, f: &str) -> BTreeSet<String> {
    let mut paths: BTreeMap<String, u64> = BTreeMap::new();
    for (stack, n) in stacks {
        let frames: Vec<&str> = stack.split(';').collect();
        if let Some(i) = frames.iter().skip(1).position(|x| *x == f) {
            *paths.entry(frames[..i + 2].join(";")).or_default() += n;
        }
    }
    let all: u64 = paths.values().sum();
    paths
        .into_iter()
        .filter(|(_, n)| *n * 100 >= all)
        .map(|(p, _)| p)
        .collect()
}

#[test]
fn folded_stacks_reach_the_hot_functions_by_perfs_call_paths() {
    if !tools_here() {
        return;
    }
    let dir = scratch("callchains");
    let exe = hot(&dir);
    build_sample();
    let folded = dir.join("out.folded");
    let data = dir.join("g.data");
    let report = {
        let _busy = one_busy_test_at_a_time();
        let rec = Command::new("perf")
            .args(["record", "-q", "-g", "-e", "cpu-clock", "-c", PERIOD, "-o"])
            .arg(&data)
            .arg("--")
            .arg(&exe)
            .arg(N)
            .output()
            .unwrap();
        if !rec.status.success() {
            crate::lab_support::skip("needs perf", "perf record -g cannot sample here");
            return;
        }
        let out = sample()
            .args(["-g", &format!("-c{PERIOD}"), "-ecpu-clock", "--folded"])
            .arg(&folded)
            .arg("--")
            .arg(&exe)
            .arg(N)
            .output()
            .unwrap();
        ok(out, "sample -g --folded")
    };
    assert!(report.contains("# Children      Self"), "{report}");
    let text = std::fs::read_to_string(&folded).unwrap();
    let mut ours = Stacks::new();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').expect("`stack count`");
        assert!(
            stack.starts_with("hot;"),
            "every stack starts with the command's name: {line}"
        );
        *ours.entry(stack.to_string()).or_default() += n.parse::<u64>().expect("a count");
    }
    // Every sample once: `# Event 'cpu-clock': N samples, 0 lost`.
    let samples = format!(
        "# Event 'cpu-clock': {} samples,",
        ours.values().sum::<u64>()
    );
    assert!(
        report.contains(&samples),
        "the folded counts add up to the report's samples ({samples})\n{report}"
    );
    let perf = perf_folded(&data);
    // `work` is not on the paths: the frame walk of both tools goes from
    // the leaf to `main` (work's return address is skipped alike).
    for f in ["hot_twice", "hot_once"] {
        let (p, o) = (paths_to(&perf, f), paths_to(&ours, f));
        println!("{f}: perf {p:?}, sample {o:?}");
        assert!(
            !p.is_empty() && p.iter().all(|x| x.contains(";main;")),
            "{f}: perf's paths {p:?}"
        );
        assert_eq!(o, p, "{f}: the call paths of our folded stacks, of perf's");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
