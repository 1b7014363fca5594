//! The sample example's behaviour as a command, against perf 6.1's: Ctrl-C
//! during `-p PID` ends the recording, prints the report of what was
//! recorded and dies of SIGINT (perf record keeps its data and does the
//! same); a command that cannot be executed gets perf record's message and
//! exit status 255; a Rust function and a C++ method are named as perf
//! report names them (demangled; Rust without the hash, C++ without the
//! parameters).

use crate::sample_support::{
    build_sample, hot, ok, perf_report, rows, sample, sample_binary, scratch, tools_here,
};
use crate::stat_support::wait_until_in_poll;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// CPU time (clock ticks, `utime + stime` of /proc/PID/stat) the workload
/// runs while a tool records it before the Ctrl-C: half a second at 100
/// ticks per second, about 2,000 cpu-clock samples at perf's default 4 kHz.
const RECORDED_TICKS: u64 = 50;

/// The CPU time `pid` has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name's `)`: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Runs `cmd` (perf record or the sample example), waits until it records
/// (asleep in its poll with its events open) and the workload `work` has
/// run for [`RECORDED_TICKS`] more, checks that the tool is still
/// recording, sends it SIGINT and returns its output. Order, not time: the
/// signal comes after the tool is ready and the workload has been sampled,
/// however slow the machine (a fixed 2 s once came before perf record had
/// set up under a loaded machine, which left an empty file).
fn interrupted(mut cmd: Command, work: u32) -> std::process::Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_in_poll(child.id());
    let from = cpu_ticks(work);
    let hung = Instant::now() + Duration::from_secs(120);
    while cpu_ticks(work) < from + RECORDED_TICKS {
        assert!(Instant::now() < hung, "hung: workload {work} got no CPU");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the tool ended by itself while the workload ran"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().unwrap()
}

#[test]
fn ctrl_c_during_p_prints_the_report_as_perf_keeps_its_data() {
    if !tools_here() {
        return;
    }
    let dir = scratch("ctrl-c");
    let exe = hot(&dir);
    build_sample();
    let mut work = Command::new(&exe).arg("30000000000").spawn().unwrap();
    let pid = work.id().to_string();

    let data = dir.join("p.data");
    let mut perf = Command::new("perf");
    perf.args(["record", "-q", "-e", "cpu-clock", "-p", &pid, "-o"])
        .arg(&data);
    let perf = interrupted(perf, work.id());
    let mut ours = Command::new(sample_binary());
    ours.args(["-e", "cpu-clock", "-p", &pid]);
    let ours = interrupted(ours, work.id());
    let _ = work.kill();
    let _ = work.wait();

    let text = String::from_utf8_lossy(&ours.stdout);
    println!("perf: {:?}\nsample: {:?}\n{text}", perf.status, ours.status);
    assert_eq!(
        perf.status.signal(),
        Some(libc::SIGINT),
        "perf record dies of SIGINT"
    );
    assert_eq!(ours.status.signal(), Some(libc::SIGINT), "{text}");
    let perf_rows = rows(&perf_report(&data, &["--sort", "dso,sym"]));
    for r in [&perf_rows, &rows(&text)] {
        assert!(
            r.iter()
                .any(|r| r.0 == "hot" && r.1 == "hot_twice" && r.2 > 20.0),
            "hot_twice in both reports: {r:?}\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-a` with no command records until Ctrl-C, as `perf record -a` does:
/// still recording after the workload ran for [`RECORDED_TICKS`], then the
/// report of what was recorded and death by SIGINT.
#[test]
fn all_cpus_without_a_command_records_until_ctrl_c_as_perf() {
    if !tools_here() {
        return;
    }
    let _busy = crate::one_busy_test_at_a_time();
    let dir = scratch("ctrl-c-a");
    let exe = hot(&dir);
    build_sample();
    let mut work = Command::new(&exe).arg("30000000000").spawn().unwrap();
    let data = dir.join("a.data");
    let mut perf = Command::new("perf");
    perf.args(["record", "-q", "-a", "-e", "cpu-clock", "-o"])
        .arg(&data);
    let perf = interrupted(perf, work.id());
    let mut ours = Command::new(sample_binary());
    ours.args(["-a", "-e", "cpu-clock"]);
    let ours = interrupted(ours, work.id());
    let _ = work.kill();
    let _ = work.wait();

    let text = String::from_utf8_lossy(&ours.stdout);
    assert_eq!(perf.status.signal(), Some(libc::SIGINT), "perf record -a");
    assert_eq!(ours.status.signal(), Some(libc::SIGINT), "{text}");
    // The hot loop is in the report: how large its share of the machine's
    // samples is depends on what else ran (the suite's builds, the lab
    // guests' load), not on the tool.
    assert!(
        rows(&text).iter().any(|r| r.0 == "hot"),
        "the hot loop was recorded until Ctrl-C:\n{text}"
    );
    assert!(!rows(&perf_report(&data, &["--sort", "dso,sym"])).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_command_gets_perfs_message_and_status() {
    if !tools_here() {
        return;
    }
    let dir = scratch("missing");
    build_sample();
    let missing = "no-such-command-for-sample";
    for events in [&["-e", "cpu-clock"][..], &["-e", "task-clock"], &[]] {
        let perf = Command::new("perf")
            .arg("record")
            .args(events)
            .arg("-o")
            .arg(dir.join("m.data"))
            .args(["--", missing])
            .output()
            .unwrap();
        let ours = sample()
            .args(events)
            .args(["--", missing])
            .output()
            .unwrap();
        let line = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .find(|l| l.starts_with("Failed to collect"))
                .map(str::to_string)
        };
        println!(
            "{events:?}: perf {:?}, sample {:?}",
            line(&perf),
            line(&ours)
        );
        assert!(line(&perf).is_some(), "perf 6.1's message: {perf:?}");
        assert_eq!(line(&ours), line(&perf), "{events:?}");
        assert_eq!(ours.status.code(), Some(255));
        assert_eq!(perf.status.code(), Some(255));
        assert!(ours.stdout.is_empty(), "no report");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An event's own `period=` / `freq=` term wins over `-c` and `-F`, as in
/// perf record 6.1 (`evsel__apply_config_terms`: a user's config term is
/// not weak), and `-c` sets the period of an event without one: the
/// sample period (or frequency) both open, from `-vv`.
#[test]
fn an_events_own_rate_wins_over_c_and_f_as_in_perf_record() {
    if !tools_here() {
        return;
    }
    let dir = scratch("rates");
    build_sample();
    let rate = |o: &std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.contains("{ sample_period, sample_freq }") || l.starts_with("  freq "))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    for args in [
        &["-c", "1000", "-e", "cpu-clock/period=777/"][..],
        &["-c", "1000", "-e", "cpu-clock"],
        &["-c", "1000", "-e", "cpu-clock/freq=99/"],
        &["-F", "99", "-e", "cpu-clock/period=777/"],
    ] {
        let perf = Command::new("perf")
            .args(["record", "-vv", "-o"])
            .arg(dir.join("r.data"))
            .args(args)
            .arg("true")
            .output()
            .unwrap();
        let ours = Command::new(sample_binary())
            .arg("-vv")
            .args(args)
            .arg("true")
            .output()
            .unwrap();
        println!("{args:?}: perf {:?}, sample {:?}", rate(&perf), rate(&ours));
        assert!(
            !rate(&perf).is_empty(),
            "perf -vv printed the attr: {perf:?}"
        );
        assert_eq!(rate(&ours), rate(&perf), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const RUST_WORKLOAD: &str = r#"
mod work {
    #[inline(never)]
    pub fn spin_loop(n: u64) -> u64 {
        let mut x = 1u64;
        for i in 0..n { x = x.wrapping_mul(6364136223846793005).wrapping_add(i); }
        x
    }
}
fn main() {
    let n = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000_000u64);
    println!("{}", work::spin_loop(std::hint::black_box(n)));
}
"#;

/// perf report and the example both name the hottest row `dso` `name`.
fn both_name(dir: &std::path::Path, exe: &std::path::Path, dso: &str, name: &str) {
    let n = "200000000";
    let data = dir.join("r.data");
    let rec = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-o"])
        .arg(&data)
        .arg("--")
        .arg(exe)
        .arg(n)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{rec:?}");
    let perf = rows(&perf_report(&data, &["--sort", "dso,sym"]));
    let out = sample()
        .args(["-e", "cpu-clock", "--"])
        .arg(exe)
        .arg(n)
        .output()
        .unwrap();
    let ours = rows(&ok(out, "sample"));
    for (who, r) in [("perf", &perf), ("sample", &ours)] {
        assert!(
            r.iter().any(|r| r.0 == dso && r.1 == name && r.2 > 50.0),
            "{who} names {name}: {r:?}"
        );
    }
}

const CPP_WORKLOAD: &str = r#"
#include <cstdint>
#include <cstdlib>
namespace ns {
template <typename T> struct Box {
    __attribute__((noinline)) T spin(T n) {
        T x = 1;
        for (T i = 0; i < n; i++) x = x * 6364136223846793005ULL + i;
        return x;
    }
};
}
int main(int argc, char **argv) {
    ns::Box<uint64_t> b;
    volatile uint64_t r = b.spin(argc > 1 ? strtoull(argv[1], 0, 10) : 100000000ULL);
    return r == 0;
}
"#;

#[test]
fn a_cpp_method_is_demangled_as_perf_report_names_it() {
    if !tools_here() {
        return;
    }
    let dir = scratch("cpp");
    let src = dir.join("box.cc");
    let exe = dir.join("box");
    std::fs::write(&src, CPP_WORKLOAD).unwrap();
    let built = Command::new("c++")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        crate::lab_support::skip("needs c++", "no C++ compiler (c++) for the workload");
        return;
    }
    // perf 6.1 prints C++ names without their parameters (with them only
    // under -v).
    both_name(&dir, &exe, "box", "ns::Box<unsigned long>::spin");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rust_function_is_demangled_as_perf_report_names_it() {
    if !tools_here() {
        return;
    }
    let dir = scratch("rust");
    let src = dir.join("spin.rs");
    let exe = dir.join("spin");
    std::fs::write(&src, RUST_WORKLOAD).unwrap();
    let built = Command::new("rustc")
        .args(["-O", "-o"])
        .arg(&exe)
        .arg(&src)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        crate::lab_support::skip("needs rustc", "rustc cannot build the Rust workload");
        return;
    }
    both_name(&dir, &exe, "spin", "spin::work::spin_loop");
    let _ = std::fs::remove_dir_all(&dir);
}
