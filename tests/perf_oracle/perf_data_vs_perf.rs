//! The sample example's perf.data (`-o`, written by the crate's
//! `perf_data::Writer`) read by perf, and the crate's reader on it: perf
//! report gives the example's own per-symbol shares, perf script prints
//! every sample the crate wrote, `--header-only` shows each feature with
//! the values the crate read from the system, `perf buildid-list` lists
//! the build ids; pipe mode into `perf report -i -` (the command's
//! stdout sent to stderr, as perf record does); SIGINT and SIGTERM
//! leave a file perf reads; a SIGKILLed writer leaves one the crate's
//! reader recovers up to the last complete round; with `-a` the running
//! processes are synthesized so perf report gives the example's report.
//! (perf record's own files read by the crate: `perf_data_perfs_files`
//! and `perf_data_layouts`.)

use crate::perf_data_support::{
    cpu_line, crate_samples, record_hot, script_samples, shares, within_half_a_point,
};
use crate::sample_support::{
    build_sample, hot, ok, one_busy_test_at_a_time, perf_report, rows, sample_binary, scratch,
    tools_here,
};
use perf_data_file::{Features, PerfData};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn perf_report_of_our_file_gives_the_examples_shares() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-report");
    let data = dir.join("ours.data");
    let own = record_hot(&dir, &data, &[]);
    let perf = perf_report(&data, &["--sort", "dso,sym"]);
    let (ours, theirs) = (shares(&rows(&own)), shares(&rows(&perf)));
    println!("sample:\n{own}\nperf report -i ours:\n{perf}");
    assert!(ours
        .get(&("hot".into(), "hot_twice".into()))
        .is_some_and(|p| *p > 30.0));
    for key in ours.keys().chain(theirs.keys()) {
        let (a, b) = (
            ours.get(key).unwrap_or(&0.0),
            theirs.get(key).unwrap_or(&0.0),
        );
        assert!(
            (a - b).abs() <= 0.5,
            "{key:?}: sample {a}%, perf report {b}%"
        );
    }
    // And the example's own report of the file (-i) is its live report.
    let again = ok(
        Command::new(sample_binary())
            .arg("-i")
            .arg(&data)
            .output()
            .unwrap(),
        "sample -i",
    );
    let reread = shares(&rows(&again));
    for key in ours.keys().chain(reread.keys()) {
        let (a, b) = (
            ours.get(key).unwrap_or(&0.0),
            reread.get(key).unwrap_or(&0.0),
        );
        assert!((a - b).abs() <= 0.5, "{key:?}: live {a}%, -i {b}%");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_script_prints_every_sample_the_crate_wrote() {
    if !tools_here() {
        return;
    }
    // Without callchains (perf script prints each sample's ip), then with
    // (it prints the chain instead).
    for (name, extra) in [("pd-script", &[][..]), ("pd-script-g", &["-g"][..])] {
        script_agrees(name, extra);
    }
}

fn script_agrees(name: &str, extra: &[&str]) {
    let dir = scratch(name);
    let data = dir.join("ours.data");
    record_hot(&dir, &data, extra);
    let file = PerfData::open(&data).unwrap();
    assert!(!file.recovered);
    let (mut ours, rounds) = crate_samples(&file);
    let mut perf = script_samples(&data);
    assert!(rounds > 1, "FINISHED_ROUND records: {rounds}");
    assert!(ours.len() > 100, "{} samples", ours.len());
    ours.sort();
    perf.sort();
    assert_eq!(ours.len(), perf.len());
    for (a, b) in ours.iter().zip(&perf) {
        assert_eq!(a, b);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_header_only_shows_each_feature_with_the_systems_values() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-header");
    let data = dir.join("ours.data");
    record_hot(&dir, &data, &[]);
    let out = Command::new("perf")
        .args(["report", "--header-only", "-I", "-i"])
        .arg(&data)
        .output()
        .unwrap();
    let text = ok(out, "perf report --header-only");
    println!("{text}");
    let line = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("# {key}")))
            .unwrap_or_else(|| panic!("no '# {key}' line"))
            .trim_start()
            .trim_start_matches(':')
            .trim()
            .to_string()
    };
    let sys = Features::from_system();
    let file = PerfData::open(&data).unwrap().features;
    assert_eq!(line("hostname "), sys.hostname.unwrap());
    assert_eq!(line("os release "), sys.osrelease.unwrap());
    assert_eq!(line("perf version "), sys.version.unwrap());
    assert_eq!(line("arch "), sys.arch.unwrap());
    let (avail, online) = sys.nrcpus.unwrap();
    assert_eq!(line("nrcpus online "), online.to_string());
    assert_eq!(line("nrcpus avail "), avail.to_string());
    if let Some(d) = sys.cpudesc {
        assert_eq!(line("cpudesc "), d);
    }
    if let Some(c) = sys.cpuid {
        assert_eq!(line("cpuid "), c);
    }
    assert_eq!(
        line("total memory "),
        format!("{} kB", sys.total_mem.unwrap())
    );
    let cmdline = line("cmdline ");
    assert!(
        cmdline.contains(" -o ") && cmdline.contains("hot"),
        "{cmdline}"
    );
    assert_eq!(cmdline, file.cmdline.unwrap().join(" "));
    assert!(line("event ").contains("name = cpu-clock"), "event_desc");
    let topo = sys.cpu_topology.unwrap();
    for s in &topo.core_siblings {
        assert!(
            text.contains(&format!("# sibling sockets : {s}\n")),
            "sockets {s}"
        );
    }
    for s in &topo.thread_siblings {
        assert!(
            text.contains(&format!("# sibling threads : {s}\n")),
            "threads {s}"
        );
    }
    for s in &topo.die_siblings {
        assert!(
            text.contains(&format!("# sibling dies    : {s}\n")),
            "dies {s}"
        );
    }
    for (i, c) in topo.cpus.iter().enumerate() {
        let want = cpu_line(i, c, topo.die_ids.get(i));
        assert!(text.contains(&want), "{want}");
    }
    let (first, last) = file.sample_time.unwrap();
    let secs = |ns: u64| format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000);
    assert_eq!(line("time of first sample "), secs(first));
    assert_eq!(line("time of last sample "), secs(last));
    assert!(text.contains("# clockid: monotonic (1)"), "clock data");
    let res = file.clockid_res_ns.unwrap();
    assert_eq!(line("clockid frequency"), format!("{} MHz", 1000 / res));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perf_buildid_list_lists_the_build_ids() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-buildid");
    let data = dir.join("ours.data");
    record_hot(&dir, &data, &[]);
    let text = ok(
        Command::new("perf")
            .args(["buildid-list", "-i"])
            .arg(&data)
            .output()
            .unwrap(),
        "perf buildid-list",
    );
    let listed: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, f)| (id.to_string(), f.to_string()))
        .collect();
    let ours = PerfData::open(&data).unwrap().features.build_ids.unwrap();
    let mut want: Vec<(String, String)> =
        ours.iter().map(|b| (b.hex(), b.filename.clone())).collect();
    let mut got = listed.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    let exe = dir.join("hot");
    assert!(
        listed.iter().any(|(_, f)| Path::new(f) == exe),
        "the workload is listed: {text}"
    );
    // readelf agrees on the workload's id.
    if let Ok(o) = Command::new("readelf").arg("-n").arg(&exe).output() {
        let notes = String::from_utf8_lossy(&o.stdout);
        if let Some(id) = notes
            .lines()
            .find_map(|l| l.trim().strip_prefix("Build ID: "))
        {
            assert!(listed.iter().any(|(i, _)| i == id), "{id} in {text}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pipe_mode_into_perf_report() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-pipe");
    let exe = hot(&dir);
    build_sample();
    let _busy = one_busy_test_at_a_time();
    let mut ours = Command::new(sample_binary())
        .args(["-e", "cpu-clock", "-c", "250000", "-o", "-"])
        .arg(&exe)
        .arg("300000000")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let report = Command::new("perf")
        .args(["report", "--stdio", "--sort", "dso,sym", "-i", "-"])
        .stdin(ours.stdout.take().unwrap())
        .output()
        .unwrap();
    assert!(ours.wait().unwrap().success());
    let text = ok(report, "perf report -i -");
    let r = shares(&rows(&text));
    let (twice, once) = (
        r.get(&("hot".into(), "hot_twice".into()))
            .copied()
            .unwrap_or(0.0),
        r.get(&("hot".into(), "hot_once".into()))
            .copied()
            .unwrap_or(0.0),
    );
    assert!(twice > 40.0 && once > 20.0 && twice > once, "{text}");
    // The crate reads the stream too.
    let bytes = Command::new(sample_binary())
        .args(["-e", "cpu-clock", "-c", "250000", "-o", "-"])
        .arg(&exe)
        .arg("20000000")
        .output()
        .unwrap()
        .stdout;
    let file = PerfData::from_bytes(bytes).unwrap();
    assert!(file.pipe && !file.attrs.is_empty());
    assert!(file.features.hostname.is_some() && file.features.build_ids.is_some());
    let samples = file
        .records()
        .map(Result::unwrap)
        .filter(|(_, b)| u32::from_ne_bytes(b[..4].try_into().unwrap()) == 9)
        .count();
    assert!(samples > 10, "{samples}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sample -o - -- CMD | perf report -i -` where CMD prints to stdout: as
/// in `perf record -o -` (perf 6.1, the oracle here too), CMD's text goes
/// to the tool's stderr, not into the stream, so perf report reads every
/// sample (an "Hello" in the stream was read as a record header: "failed
/// to process type").
#[test]
fn sample_o_dash_sends_the_commands_stdout_to_stderr_as_perf_record() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-pipe-stdout");
    let exe = hot(&dir);
    build_sample();
    let _busy = one_busy_test_at_a_time();
    let mark = "workload-stdout-line";
    let cmd = format!("echo {mark}; exec {} 100000000", exe.display());
    let mut perf = Command::new("perf");
    perf.args(["record", "-q"]);
    for (tool, mut record) in [
        ("perf record", perf),
        ("sample", Command::new(sample_binary())),
    ] {
        let mut rec = record
            .args(["-e", "cpu-clock", "-c", "250000", "-o", "-", "--"])
            .args(["sh", "-c", &cmd])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let report = Command::new("perf")
            .args(["report", "--stdio", "--sort", "dso,sym", "-i", "-"])
            .stdin(rec.stdout.take().unwrap())
            .output()
            .unwrap();
        let rec = rec.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&rec.stderr);
        let report_err = String::from_utf8_lossy(&report.stderr).into_owned();
        let text = ok(report, "perf report -i -");
        println!("{tool} stderr:\n{err}\nperf report -i -:\n{text}{report_err}");
        assert!(!report_err.contains("failed to process"), "{report_err}");
        assert!(err.lines().any(|l| l == mark), "{tool}'s stderr: {err}");
        assert!(rec.status.success(), "{tool}: {:?}", rec.status);
        let r = shares(&rows(&text));
        let twice = r.get(&("hot".into(), "hot_twice".into()));
        assert!(twice.is_some_and(|p| *p > 30.0), "{tool}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The samples of the whole rounds a file being written holds so far.
fn file_samples(data: &Path) -> usize {
    let Ok(file) = PerfData::open(data) else {
        return 0;
    };
    file.records()
        .map_while(Result::ok)
        .filter(|(_, b)| b.len() >= 4 && u32::from_ne_bytes(b[..4].try_into().unwrap()) == 9)
        .count()
}

/// `sample -o FILE -p PID` of a long hot loop, sent `sig` once the file
/// holds more than 100 samples.
fn interrupted_recording(name: &str, sig: i32) -> (PathBuf, std::process::ExitStatus) {
    let dir = scratch(name);
    let exe = hot(&dir);
    build_sample();
    let _busy = one_busy_test_at_a_time();
    let mut work = Command::new(&exe).arg("30000000000").spawn().unwrap();
    let data = dir.join("ours.data");
    let child = Command::new(sample_binary())
        .args([
            "-e",
            "cpu-clock",
            "-c",
            "250000",
            "-p",
            &work.id().to_string(),
            "-o",
        ])
        .arg(&data)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Signalled once the file holds more than 100 samples (its first
    // rounds), not after a fixed time that a slow or loaded machine may
    // spend starting the tool; the deadline only guards against a hang.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while file_samples(&data) <= 100 {
        assert!(
            std::time::Instant::now() < deadline,
            "hung: no 100 samples in {data:?} in 120 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let mut child = child;
    let status = child.wait().unwrap();
    let _ = work.kill();
    let _ = work.wait();
    (data, status)
}

#[test]
fn sigint_and_sigterm_leave_a_file_perf_reads() {
    if !tools_here() {
        return;
    }
    for (name, sig) in [("pd-int", libc::SIGINT), ("pd-term", libc::SIGTERM)] {
        let (data, status) = interrupted_recording(name, sig);
        assert_eq!(status.signal(), Some(sig));
        let text = perf_report(&data, &["--sort", "dso,sym"]);
        let r = shares(&rows(&text));
        assert!(
            r.get(&("hot".into(), "hot_twice".into()))
                .is_some_and(|p| *p > 20.0),
            "{text}"
        );
        let file = PerfData::open(&data).unwrap();
        assert!(!file.recovered && file.features.build_ids.is_some());
        let _ = std::fs::remove_dir_all(data.parent().unwrap());
    }
}

#[test]
fn a_sigkilled_writer_is_recovered_up_to_its_last_round() {
    if !tools_here() {
        return;
    }
    let (data, status) = interrupted_recording("pd-kill", libc::SIGKILL);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    let file = PerfData::open(&data).unwrap();
    // No features: cut after the last whole round (the header's data
    // size, or further when later rounds were flushed before the kill).
    assert_eq!(file.header.features, [0; 4]);
    println!("recovered past the header's size: {}", file.recovered);
    let records: Vec<_> = file.records().map(Result::unwrap).collect();
    let kind = |b: &[u8]| u32::from_ne_bytes(b[..4].try_into().unwrap());
    assert_eq!(
        kind(records.last().unwrap().1),
        68,
        "ends with FINISHED_ROUND"
    );
    let samples = records.iter().filter(|(_, b)| kind(b) == 9).count();
    assert!(samples > 100, "{samples} samples recovered");
    for (_, b) in &records {
        file.parse(b).unwrap();
    }
    // perf reads it too, up to the data size of the header.
    let text = perf_report(&data, &["--sort", "dso,sym"]);
    assert!(text.contains("hot_twice"), "{text}");
    let _ = std::fs::remove_dir_all(data.parent().unwrap());
}

/// `-a -o`: the running processes synthesized as perf record does, so perf
/// report of the file gives the example's own system-wide report.
#[test]
fn a_system_wide_file_gives_the_examples_shares() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-a");
    let exe = hot(&dir);
    build_sample();
    let data = dir.join("all.data");
    let own = {
        let _busy = one_busy_test_at_a_time();
        let out = Command::new(sample_binary())
            .args(["-a", "-e", "cpu-clock", "-c", "250000", "-o"])
            .arg(&data)
            .arg("--")
            .arg(&exe)
            .arg("200000000")
            .output()
            .unwrap();
        ok(out, "sample -a -o")
    };
    let perf = perf_report(&data, &["--sort", "dso,sym"]);
    // The workload's rows: processes that come and go during the
    // recording (the test harness's own builds) are symbolized by each
    // tool in its own way.
    let hot_rows = |t: &str| {
        t.lines()
            .filter(|l| l.split_whitespace().nth(1) == Some("hot"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    within_half_a_point(
        &hot_rows(&own),
        &hot_rows(&perf),
        "sample -a vs perf report -i",
    );
    assert!(hot_rows(&perf).contains("hot_twice"), "{perf}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tracepoint recording: perf refuses a file with tracepoint events
/// without their formats (HEADER_TRACING_DATA, "broken or missing trace
/// data"); with them `perf script` prints every sample the crate wrote,
/// its fields decoded by name, and `perf report --stats` counts them. The
/// same in pipe mode (PERF_RECORD_HEADER_TRACING_DATA, the data after the
/// record), both ways: our stream read by perf, perf record's read by the
/// crate.
#[test]
fn a_tracepoint_recording_reads_in_perf_with_its_fields() {
    if !tools_here() {
        return;
    }
    let Ok(tracefs) = perf_event_host::sysfs::Tracefs::find() else {
        let why = "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)";
        crate::lab_support::not_applicable(crate::lab_support::Need::Tracefs, why);
        return;
    };
    if tracefs
        .tracepoint_id("syscalls", "sys_enter_execve")
        .is_err()
    {
        let why = "no syscalls:sys_enter_execve tracepoint (CONFIG_FTRACE_SYSCALLS)";
        crate::lab_support::not_applicable(crate::lab_support::Need::SyscallTracepoints, why);
        return;
    }
    let dir = scratch("pd-tracepoint");
    let data = dir.join("ours.data");
    build_sample();
    let event = ["-e", "syscalls:sys_enter_execve", "-c", "1", "-o"];
    let work = [
        "--",
        "sh",
        "-c",
        "for i in 1 2 3 4 5 6 7 8; do /bin/true; done",
    ];
    let run = |out: &str| {
        let o = Command::new(sample_binary())
            .args(event)
            .arg(out)
            .args(work)
            .output()
            .unwrap();
        assert!(o.status.success(), "sample -o {out}: {o:?}");
        o.stdout
    };
    run(data.to_str().unwrap());
    let file = PerfData::open(&data).unwrap();
    let samples = tracepoint_samples(&file);
    let script = crate::sample_support::perf_on(&data, &["script"]);
    script_has_fields(&script, samples);
    let stats = crate::sample_support::perf_on(&data, &["report", "--stats"]);
    let counted = stats
        .lines()
        .find(|l| l.trim_start().starts_with("SAMPLE events:"))
        .and_then(|l| l.split_whitespace().nth(2)?.parse::<usize>().ok());
    assert_eq!(counted, Some(samples), "perf report --stats:\n{stats}");
    // Our stream into perf script.
    let stream = run("-");
    let file = PerfData::from_bytes(stream.clone()).unwrap();
    let samples = tracepoint_samples(&file);
    script_has_fields(&piped(&["script", "-i", "-"], &stream), samples);
    // perf record's stream read by the crate.
    let theirs = Command::new("perf")
        .args([
            "record",
            "-e",
            "syscalls:sys_enter_execve",
            "-c",
            "1",
            "-o",
            "-",
        ])
        .args(&work[1..])
        .output()
        .unwrap();
    assert!(theirs.status.success(), "perf record -o -: {theirs:?}");
    let file = PerfData::from_bytes(theirs.stdout.clone()).unwrap();
    let samples = tracepoint_samples(&file);
    script_has_fields(&piped(&["script", "-i", "-"], &theirs.stdout), samples);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The samples of a recording the crate read, which carries the
/// tracepoints' formats.
fn tracepoint_samples(file: &PerfData) -> usize {
    assert!(file.features.tracing_data.is_some(), "no tracing data");
    let samples = file
        .records()
        .map_while(Result::ok)
        .filter(|(_, b)| {
            file.parse(b)
                .is_ok_and(|p| matches!(p.record, perf_event_core::record::Record::Sample(_)))
        })
        .count();
    assert!(samples >= 8, "{samples} samples of 8 execs and more");
    samples
}

/// `perf script` printed `samples` execve samples, each field by name.
fn script_has_fields(script: &str, samples: usize) {
    let lines: Vec<&str> = script
        .lines()
        .filter(|l| l.contains("syscalls:sys_enter_execve:"))
        .collect();
    assert_eq!(lines.len(), samples, "perf script:\n{script}");
    assert!(
        lines.iter().all(|l| l.contains("filename: 0x")),
        "fields decoded by name:\n{script}"
    );
}

/// `perf ARGS` with `input` on its stdin: its output, asserted successful.
fn piped(args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("perf")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feed = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    feed.join().unwrap().unwrap();
    ok(out, &format!("perf {args:?} -i -"))
}
