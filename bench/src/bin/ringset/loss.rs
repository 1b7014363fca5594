//! Part 3 of the `ringset` bench: records lost under a storm on every CPU
//! with small rings, read concurrently, by perf-event-core's ring set and
//! by perf-event2's samplers; received + lost == generated for both.

use super::write::{perf_data_path, perf_data_writer, write_ours};
use super::{drain_ours, median, ours, pe2};
use perf_bench::storm::{cpus, pin, Storm};
use perf_data_file::{Features, Writer};
use perf_event_core::open::Scope;
use perf_event_host::ringset::RingSet;

const STORM_N: u32 = 200_000;

/// One loss scenario: where the storm runs, `k` rings (each its own event
/// on the same tracepoint) per storm thread, `pages` data pages per ring.
#[derive(Clone, Debug)]
struct StormCfg {
    cpus: Vec<usize>,
    k: usize,
    pages: usize,
}

/// One storm read by perf-event-core's ring set, `k` rings (each its own
/// event on the same tracepoint) per storm thread: (received, lost).
fn storm_ours(id: u64, cfg: &StormCfg) -> (u64, u64) {
    let mut storm = Storm::new(STORM_N, &cfg.cpus, libc::PR_GET_DUMPABLE);
    let tids = storm.tids.clone();
    let k = cfg.k;
    let scope = |i: usize| Scope::thread_on(tids[i / k].1, tids[i / k].0 as u32);
    let mut set = ours(id, tids.len() * k, scope, cfg.pages);
    for e in 0..set.entries() {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    let mut got = 0;
    storm.start();
    while storm.running() {
        got += drain_ours(&mut set).0;
    }
    got += drain_ours(&mut set).0;
    storm.last();
    got += drain_ours(&mut set).0;
    let l = set.total_losses();
    assert_eq!((l.overruns, l.corrupt), (0, 0));
    (got, l.lost)
}

/// The same storm read by the ring set and written to a perf.data file
/// (one round per pass, as perf record), or with `to_file` false the same
/// writer into `io::sink()` (its own work without the file system's):
/// (received, lost).
fn storm_write(id: u64, cfg: &StormCfg, to_file: bool) -> (u64, u64) {
    let mut storm = Storm::new(STORM_N, &cfg.cpus, libc::PR_GET_DUMPABLE);
    let tids = storm.tids.clone();
    let k = cfg.k;
    let scope = |i: usize| Scope::thread_on(tids[i / k].1, tids[i / k].0 as u32);
    let mut set = ours(id, tids.len() * k, scope, cfg.pages);
    let path = perf_data_path("storm");
    let mut file = to_file.then(|| perf_data_writer(&path, id, &set));
    let mut sink = (!to_file)
        .then(|| Writer::pipe(std::io::sink(), Vec::new(), Features::default()).expect("a sink"));
    for e in 0..set.entries() {
        set.fd(e).unwrap().enable(false).unwrap();
    }
    let mut pass = |set: &mut RingSet| match (&mut file, &mut sink) {
        (Some(w), _) => write_ours(set, w),
        (_, Some(w)) => write_ours(set, w),
        _ => unreachable!("one of the two"),
    };
    let mut got = 0;
    storm.start();
    while storm.running() {
        got += pass(&mut set);
    }
    got += pass(&mut set);
    storm.last();
    got += pass(&mut set);
    if let Some(w) = file {
        w.finish().unwrap();
    }
    let _ = std::fs::remove_file(&path);
    let l = set.total_losses();
    assert_eq!((l.overruns, l.corrupt), (0, 0));
    (got, l.lost)
}

/// The same storm read by perf-event2's samplers: (received, lost).
fn storm_pe2(id: u64, cfg: &StormCfg) -> (u64, u64) {
    let mut storm = Storm::new(STORM_N, &cfg.cpus, libc::PR_GET_DUMPABLE);
    let tids = storm.tids.clone();
    let k = cfg.k;
    let mut s = pe2(
        id,
        tids.len() * k,
        |i| Some((tids[i / k].0, tids[i / k].1)),
        cfg.pages,
    );
    for x in s.iter_mut() {
        x.enable().unwrap();
    }
    let (mut got, mut lost) = (0, 0);
    let mut step = |s: &mut [perf_event::Sampler]| {
        for x in s.iter_mut() {
            while let Some(rec) = x.next_record() {
                match rec.parse_record() {
                    Ok(perf_event::data::Record::Sample(_)) => got += 1,
                    Ok(perf_event::data::Record::Lost(l)) => lost += l.lost,
                    _ => {}
                }
            }
        }
    };
    storm.start();
    while storm.running() {
        step(&mut s);
    }
    step(&mut s);
    storm.last();
    step(&mut s);
    (got, lost)
}

pub fn loss_bench(id: u64, only: Option<usize>) {
    const RUNS: usize = 11;
    pin(0);
    let all = cpus();
    // The reader alone on CPU 0 and the storm on the others (on a 1-CPU
    // machine they share it); then a storm on every CPU, the reader's too.
    let others = if all.len() > 1 {
        all[1..].to_vec()
    } else {
        all.clone()
    };
    let cfgs = [
        (
            "reader alone on CPU 0",
            StormCfg {
                cpus: others.clone(),
                k: 1,
                pages: 8,
            },
        ),
        (
            "reader alone on CPU 0",
            StormCfg {
                cpus: others,
                k: 8,
                pages: 2,
            },
        ),
        (
            "every CPU storms, the reader's too",
            StormCfg {
                cpus: all.clone(),
                k: 1,
                pages: 64,
            },
        ),
        (
            "every CPU storms, the reader's too",
            StormCfg {
                cpus: all,
                k: 4,
                pages: 64,
            },
        ),
    ];
    println!(
        "\n## lost under a storm: {STORM_N} prctls per storm thread, each sampled by K events \
         (one ring each), read concurrently by one thread pinned to CPU 0, {RUNS} runs of each \
         reader, alternating\n"
    );
    println!(
        "| storm | storm CPUs | K | pages per ring | generated | perf-event-core lost per run \
         | median | perf-event-core + perf.data writer lost per run | median \
         | perf-event-core + the writer into io::sink() lost per run | median \
         | perf-event2 lost per run | median |"
    );
    println!("|---|---|---:|---:|---:|---|---:|---|---:|---|---:|---|---:|");
    for (i, (what, cfg)) in cfgs.iter().enumerate() {
        if only.is_some_and(|o| o != i + 1) {
            continue;
        }
        let generated = (cfg.cpus.len() * cfg.k) as u64 * (u64::from(STORM_N) + 1);
        let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for run in 0..RUNS {
            for k in 0..4 {
                let reader = (run + k) % 4;
                let (got, lost) = match reader {
                    0 => storm_ours(id, cfg),
                    1 => storm_write(id, cfg, true),
                    2 => storm_write(id, cfg, false),
                    _ => storm_pe2(id, cfg),
                };
                assert_eq!(got + lost, generated, "received + lost == generated");
                [&mut a, &mut c, &mut d, &mut b][reader].push(lost);
            }
        }
        let med = |v: &[u64]| median(&mut v.iter().map(|&x| x as f64).collect::<Vec<_>>());
        println!(
            "| {what} | {:?} | {} | {} | {generated} | {a:?} | {} | {c:?} | {} | {d:?} | {} \
             | {b:?} | {} |",
            cfg.cpus,
            cfg.k,
            cfg.pages,
            med(&a),
            med(&c),
            med(&d),
            med(&b)
        );
    }
    println!("\n(received + lost == generated asserted in every run, for every reader)");
}
