//! The crate's reader on perf record's own files: seven layouts (one and
//! two events, fixed period and frequency, callchains, data addresses,
//! weights, the identifier) agree with perf script and perf's header and
//! buildid-list; `sample -i` on them (and on perf's pipe format) gives
//! perf report's shares; perf report of the example's file and of perf's
//! recording name the same functions, and perf reads every sample of
//! ours. (More layouts, field by field: `perf_data_layouts`.)

use crate::perf_data_fields::{compare, perf_record, Output};
use crate::perf_data_support::{cpu_line, within_half_a_point};
use crate::sample_support::{
    build_sample, hot, ok, one_busy_test_at_a_time, perf_report, rows, sample_binary, scratch,
    tools_here,
};
use perf_data_file::PerfData;
use std::path::Path;
use std::process::{Command, Stdio};

/// perf's own recordings of several layouts (one and two events, fixed
/// period and frequency, callchains, data addresses, weights, the
/// identifier), read by the crate: every perf script field of each
/// layout equals the crate's ([`compare`]), and the features equal what
/// `perf report --header-only` prints.
#[test]
fn the_crates_reader_on_perfs_files_agrees_with_perf_script() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-perfs");
    let exe = hot(&dir);
    let w = exe.to_str().unwrap();
    let layouts: [(&str, &[&str]); 7] = [
        ("fixed-period", &["-e", "cpu-clock", "-c", "250000"]),
        ("frequency", &["-e", "cpu-clock", "-F", "999"]),
        (
            "two-events",
            &["-e", "cpu-clock,task-clock", "-c", "500000"],
        ),
        (
            "callchain-fp",
            &["-e", "cpu-clock", "-c", "250000", "--call-graph", "fp"],
        ),
        (
            "data-addr-raw-time",
            &["-e", "cpu-clock", "-c", "250000", "-d", "-T"],
        ),
        ("weight", &["-e", "cpu-clock", "-c", "250000", "-W"]),
        (
            "sample-identifier",
            &["-e", "cpu-clock", "-c", "250000", "--sample-identifier"],
        ),
        // (System-wide with callchains agrees too when the machine is
        // quiet, but perf script's output for threads that come and go
        // during the recording, under the suite's own builds, is not
        // stable enough to compare record for record.)
    ];
    let _busy = one_busy_test_at_a_time();
    for (i, (name, args)) in layouts.iter().enumerate() {
        let args = [args, &["--sample-cpu", w, "100000000"][..]].concat();
        let Some(data) = perf_record(&dir, name, &args, Output::File) else {
            continue;
        };
        // Every perf script field of the layout, the attrs and the count
        // of each record type.
        let c = compare(&data, true, &[]);
        println!(
            "layout {name}: {} samples compared, {} records [perf record {}]",
            c.samples,
            c.records,
            args.join(" ")
        );
        assert!(c.samples > 50, "{name}: {c:?}");
        if i == 0 {
            perfs_header_agrees(&data, &PerfData::open(&data).unwrap());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// perf's header of its own file: the crate read the same values.
pub fn perfs_header_agrees(data: &Path, file: &PerfData) {
    let out = Command::new("perf")
        .args(["report", "--header-only", "-I", "-i"])
        .arg(data)
        .output()
        .unwrap();
    let text = ok(out, "perf report --header-only");
    let f = &file.features;
    let has = |s: String| assert!(text.contains(&s), "{s:?} not in\n{text}");
    has(format!("# hostname : {}\n", f.hostname.as_ref().unwrap()));
    has(format!(
        "# os release : {}\n",
        f.osrelease.as_ref().unwrap()
    ));
    has(format!(
        "# perf version : {}\n",
        f.version.as_ref().unwrap()
    ));
    has(format!("# arch : {}\n", f.arch.as_ref().unwrap()));
    let (avail, online) = f.nrcpus.unwrap();
    has(format!(
        "# nrcpus online : {online}\n# nrcpus avail : {avail}\n"
    ));
    has(format!("# cpudesc : {}\n", f.cpudesc.as_ref().unwrap()));
    has(format!("# cpuid : {}\n", f.cpuid.as_ref().unwrap()));
    has(format!("# total memory : {} kB\n", f.total_mem.unwrap()));
    has(format!(
        "# cmdline : {} \n",
        f.cmdline.as_ref().unwrap().join(" ")
    ));
    let desc = f.event_desc.as_ref().unwrap();
    assert_eq!(desc.len(), file.attrs.len());
    has(format!("# event : name = {}, ", desc[0].name));
    let topo = f.cpu_topology.as_ref().unwrap();
    for s in &topo.core_siblings {
        has(format!("# sibling sockets : {s}\n"));
    }
    for s in &topo.die_siblings {
        has(format!("# sibling dies    : {s}\n"));
    }
    for (i, c) in topo.cpus.iter().enumerate() {
        has(cpu_line(i, c, topo.die_ids.get(i)));
    }
    let (first, _) = f.sample_time.unwrap();
    has(format!(
        "# time of first sample : {}.{:06}\n",
        first / 1_000_000_000,
        first % 1_000_000_000 / 1000
    ));
    let listed = ok(
        Command::new("perf")
            .args(["buildid-list", "-i"])
            .arg(data)
            .output()
            .unwrap(),
        "perf buildid-list",
    );
    let Some(ids) = &f.build_ids else {
        // No BUILD_ID feature: perf says it is missing (the ids are in
        // MMAP2 records, --buildid-mmap), or (a pipe) lists no id at all.
        let missing = text
            .lines()
            .find_map(|l| l.strip_prefix("# missing features: "))
            .is_some_and(|m| m.split_whitespace().any(|x| x == "BUILD_ID"));
        let no_id = listed.lines().all(|l| l.starts_with(' '));
        assert!(missing || no_id, "no build ids read\n{text}\n{listed}");
        return;
    };
    for b in ids {
        assert!(
            listed.contains(&format!("{} {}", b.hex(), b.filename)),
            "{b:?}\n{listed}"
        );
    }
}

/// `sample -i` on perf record's own file gives perf report's shares.
#[test]
fn sample_i_on_perfs_file_gives_perf_reports_shares() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-i-perf");
    let exe = hot(&dir);
    build_sample();
    let data = dir.join("perf.data");
    {
        let _busy = one_busy_test_at_a_time();
        let st = Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-c", "250000", "-o"])
            .arg(&data)
            .arg(&exe)
            .arg("300000000")
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    }
    let perf = perf_report(&data, &["--sort", "dso,sym"]);
    let ours = ok(
        Command::new(sample_binary())
            .arg("-i")
            .arg(&data)
            .output()
            .unwrap(),
        "sample -i",
    );
    within_half_a_point(&ours, &perf, "sample -i vs perf report");
    let _ = std::fs::remove_dir_all(&dir);
}

/// perf record's pipe format (`perf record -o -`) read by `sample -i -`
/// from stdin: perf report's shares of the same stream.
#[test]
fn sample_i_reads_perfs_pipe_format_from_stdin() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-i-pipe");
    let exe = hot(&dir);
    build_sample();
    let data = dir.join("pipe.data");
    {
        let _busy = one_busy_test_at_a_time();
        let out = Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-c", "250000", "-o", "-"])
            .arg(&exe)
            .arg("200000000")
            .stderr(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::write(&data, &out.stdout).unwrap();
    }
    let file = PerfData::open(&data).unwrap();
    assert!(file.pipe && !file.attrs.is_empty());
    let perf = perf_report(&data, &["--sort", "dso,sym"]);
    let ours = ok(
        Command::new(sample_binary())
            .args(["-i", "-"])
            .stdin(std::fs::File::open(&data).unwrap())
            .output()
            .unwrap(),
        "sample -i -",
    );
    within_half_a_point(&ours, &perf, "sample -i - vs perf report");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The workload's symbols (object `hot`) in a perf report.
fn hot_symbols(report: &str) -> Vec<String> {
    rows(report)
        .into_iter()
        .filter(|r| r.0 == "hot")
        .map(|r| r.1)
        .collect()
}

/// perf report of the example's file and of perf record's own recording
/// of the same workload both name the workload's two hot functions, and
/// perf reads as many samples from our file (perf script) as the crate's
/// reader and the example's own report count. (hot_twice's share in the
/// two files, which moves with the load, is measured by `cargo run
/// --release -p bench --bin sample_vs_perf_shares`, BENCHMARKS.md
/// section 13.)
#[test]
fn perf_report_of_ours_and_of_perfs_recording_name_the_same_functions() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-names");
    let exe = hot(&dir);
    build_sample();
    let (a, b) = (dir.join("ours.data"), dir.join("perf.data"));
    let text = {
        let _busy = one_busy_test_at_a_time();
        let out = Command::new(sample_binary())
            .args(["-e", "cpu-clock", "-c", "250000", "-o"])
            .arg(&a)
            .arg(&exe)
            .arg("200000000")
            .output()
            .unwrap();
        let text = ok(out, "sample -o");
        let st = Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-c", "250000", "-o"])
            .arg(&b)
            .arg(&exe)
            .arg("200000000")
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        text
    };
    for (who, data) in [("ours", &a), ("perf's", &b)] {
        let names = hot_symbols(&perf_report(data, &["--sort", "dso,sym"]));
        println!("{who}: {names:?}");
        for f in ["hot_twice", "hot_once"] {
            assert!(
                names.iter().any(|n| n == f),
                "perf report of {who} file names {f}: {names:?}"
            );
        }
    }
    // A line per sample (whatever its pid: a task sampled as it exits,
    // after its pid was released, has pid -1).
    let perf_script = crate::sample_support::perf_on(&a, &["script", "-F", "event"])
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    let (crates, _) = crate::perf_data_support::crate_samples(&PerfData::open(&a).unwrap());
    let line = format!("# Event 'cpu-clock': {perf_script} samples,");
    assert_eq!(
        crates.len(),
        perf_script,
        "samples of our file: the crate's reader, perf script"
    );
    assert!(
        text.contains(&line),
        "the example's report counts perf script's samples ({line})\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
