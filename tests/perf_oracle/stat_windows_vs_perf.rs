//! The stat example's counting windows, intervals, signals and refusals
//! against perf 6.1 on this machine: `-a`/`-C`/`-A`/`-p` with a command
//! (elapsed within 5 ms of perf's, task-clock within 5 %), `-I 100`
//! (the same interval stamps within 5 ms), Ctrl-C with no command, a
//! closed pipe under `-I`, refused option combinations (the same status),
//! and `-A` / `--per-thread` line order and columns.
//!
//! Timing: medians of runs interleaved example / perf, so both see the
//! same load on a busy 2-core machine. Skipped, saying so, without perf.

use crate::stat_support::{csv_lines, fields, stat_binary};
use crate::stat_vs_perf::perf;

use std::io::BufRead;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// One timing test at a time (the binary-wide lock): they measure windows
/// on a shared machine.
use crate::one_busy_test_at_a_time as serial;

/// `tool stat ARGS` (tool: perf's path, or the example when `None`).
fn tool(perf: Option<&str>) -> Command {
    match perf {
        Some(p) => {
            let mut c = Command::new(p);
            c.arg("stat");
            c
        }
        None => Command::new(stat_binary()),
    }
}

/// (elapsed s, task-clock ms) from a table report.
fn elapsed_and_task_clock(text: &str) -> (f64, f64) {
    let elapsed = text
        .lines()
        .find(|l| l.ends_with("seconds time elapsed"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no elapsed line in {text}"));
    let clock: f64 = text
        .lines()
        .filter(|l| l.contains(" msec task-clock"))
        .map(|l| {
            let before = l.split(" msec").next().unwrap();
            before
                .split_whitespace()
                .last()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    (elapsed, clock)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A busy process to attach to (`-p`): a shell spinning until killed.
struct Spinner(Child);

impl Spinner {
    fn start() -> Spinner {
        Spinner(
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `args -- sleep 0.3` 9 times per tool, interleaved; asserts the
/// median elapsed within 5 ms and the median task-clock within 5 %.
fn window_matches_perf(args: &[&str]) {
    let Some(perf) = perf() else { return };
    let _serial = serial();
    let mut ours = (Vec::new(), Vec::new());
    let mut theirs = (Vec::new(), Vec::new());
    for _ in 0..9 {
        for (who, into) in [(None, &mut ours), (Some(perf.as_str()), &mut theirs)] {
            let out = tool(who)
                .args(args)
                .args(["-e", "task-clock", "--", "sleep", "0.3"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{who:?} {args:?}: {text}");
            let (e, c) = elapsed_and_task_clock(&text);
            into.0.push(e);
            into.1.push(c);
        }
    }
    let (our_e, perf_e) = (median(ours.0.clone()), median(theirs.0.clone()));
    let (our_c, perf_c) = (median(ours.1.clone()), median(theirs.1.clone()));
    eprintln!(
        "{args:?}: elapsed {our_e:.4} s vs perf {perf_e:.4} s; task-clock {our_c:.2} ms vs perf {perf_c:.2} ms"
    );
    assert!(
        (our_e - perf_e).abs() <= 0.005,
        "{args:?}: elapsed {our_e} s vs perf's {perf_e} s ({ours:?} vs {theirs:?})"
    );
    let ratio = our_c / perf_c;
    assert!(
        (0.95..=1.05).contains(&ratio),
        "{args:?}: task-clock {our_c} ms vs perf's {perf_c} ms ({ours:?} vs {theirs:?})"
    );
}

#[test]
fn all_cpus_window_matches_perf() {
    window_matches_perf(&["-a"]);
}

#[test]
fn cpu_list_window_matches_perf() {
    window_matches_perf(&["-C", "0"]);
}

#[test]
fn no_aggr_window_matches_perf() {
    window_matches_perf(&["-a", "-A"]);
}

#[test]
fn attached_pid_window_matches_perf() {
    let spinner = Spinner::start();
    let pid = spinner.0.id().to_string();
    window_matches_perf(&["-p", &pid]);
}

/// The interval stamps (first CSV field) of `-I 100 -- sleep 0.25`.
fn stamps(perf: Option<&str>) -> Vec<f64> {
    let out = tool(perf)
        .args([
            "-I",
            "100",
            "-x,",
            "-e",
            "task-clock",
            "--",
            "sleep",
            "0.25",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{perf:?}: {text}");
    csv_lines(&text)
        .iter()
        .map(|l| fields(l, ',')[0].trim().parse().unwrap())
        .collect()
}

#[test]
fn interval_stamps_match_perf() {
    let Some(perf) = perf() else { return };
    let _serial = serial();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        ours.push(stamps(None));
        theirs.push(stamps(Some(&perf)));
    }
    let n = theirs[0].len();
    assert!(
        ours.iter().chain(&theirs).all(|s| s.len() == n),
        "interval counts differ: {ours:?} vs {theirs:?}"
    );
    for i in 0..n {
        let o = median(ours.iter().map(|s| s[i]).collect());
        let p = median(theirs.iter().map(|s| s[i]).collect());
        eprintln!("interval {i}: {o:.4} s vs perf {p:.4} s");
        assert!(
            (o - p).abs() <= 0.005,
            "interval {i}: {o} s vs perf's {p} s ({ours:?} vs {theirs:?})"
        );
    }
}

/// Starts `tool stat ARGS` in its own process group, stderr piped.
fn spawn(perf: Option<&str>, args: &[&str]) -> Child {
    tool(perf)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

fn ctrl_c_status(perf: Option<&str>) -> (ExitStatus, String) {
    let child = spawn(perf, &["-a", "-e", "task-clock"]);
    std::thread::sleep(Duration::from_millis(400));
    kill(child.id(), libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ctrl_c_with_no_command_dies_of_sigint_as_perf() {
    let Some(perf) = perf() else { return };
    let (ours, text) = ctrl_c_status(None);
    let (theirs, _) = ctrl_c_status(Some(&perf));
    assert_eq!(theirs.signal(), Some(libc::SIGINT));
    assert_eq!(ours.signal(), theirs.signal(), "{ours:?}: {text}");
    assert!(
        text.contains(" msec task-clock"),
        "counts printed first: {text}"
    );
}

fn closed_pipe_status(perf: Option<&str>) -> ExitStatus {
    let mut child = spawn(perf, &["-I", "100", "-e", "task-clock", "--", "sleep", "2"]);
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    for _ in 0..3 {
        line.clear();
        err.read_line(&mut line).unwrap();
    }
    drop(err); // as `| head -3` does
    child.wait().unwrap()
}

#[test]
fn closed_pipe_under_interval_dies_of_sigpipe_as_perf() {
    let Some(perf) = perf() else { return };
    let theirs = closed_pipe_status(Some(&perf));
    let ours = closed_pipe_status(None);
    assert_eq!(theirs.signal(), Some(libc::SIGPIPE));
    assert_eq!(ours.signal(), theirs.signal(), "{ours:?}");
}

#[test]
fn refused_combinations_exit_as_perf() {
    let Some(perf) = perf() else { return };
    for args in [
        &["-A", "-e", "task-clock", "--", "true"][..],
        &["--per-thread", "-e", "task-clock", "--", "true"][..],
        &["-I", "100", "--timeout", "300", "-a", "-e", "task-clock"][..],
    ] {
        let theirs = tool(Some(&perf)).args(args).output().unwrap();
        let ours = tool(None).args(args).output().unwrap();
        assert_eq!(theirs.status.code(), Some(234), "{args:?}");
        assert_eq!(ours.status.code(), theirs.status.code(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&theirs.stderr),
            "{args:?}"
        );
    }
}

/// (prefix, unit, event) of each CSV line: the order and the columns.
fn layout(perf: Option<&str>, args: &[&str]) -> Vec<(String, String, String, usize)> {
    let out = tool(perf).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{perf:?} {args:?}: {text}");
    csv_lines(&text)
        .iter()
        .map(|l| {
            let f = fields(l, ',');
            (f[0].clone(), f[2].clone(), f[3].clone(), f.len())
        })
        .collect()
}

#[test]
fn no_aggr_line_order_matches_perf() {
    let Some(perf) = perf() else { return };
    let args = [
        "-a",
        "-A",
        "-x,",
        "-e",
        "task-clock,cs",
        "--",
        "sleep",
        "0.1",
    ];
    assert_eq!(layout(None, &args), layout(Some(&perf), &args));
}

#[test]
fn per_thread_line_order_matches_perf() {
    let Some(perf) = perf() else { return };
    // One spinning thread and one sleeping one: the order by count is
    // the same in both runs.
    let spinner = Spinner::start();
    let idle = Command::new("sleep").arg("5").spawn().unwrap();
    let pids = format!("{},{}", idle.id(), spinner.0.id());
    let args = [
        "--per-thread",
        "-p",
        &pids,
        "-x,",
        "-e",
        "task-clock",
        "--",
        "sleep",
        "0.2",
    ];
    let ours = layout(None, &args);
    let theirs = layout(Some(&perf), &args);
    let mut idle = idle;
    let _ = idle.kill();
    let _ = idle.wait();
    assert_eq!(ours, theirs);
}

#[test]
fn wildcard_tracepoints_expand_in_perfs_order() {
    let Some(perf) = perf() else { return };
    if !crate::stat_support::tracefs_usable() {
        crate::lab_support::skip(
            "needs tracefs",
            "tracefs is not mounted or not readable here",
        );
        return;
    }
    let names = |perf: Option<&str>| -> Vec<String> {
        let out = tool(perf)
            .args([
                "-x,",
                "-e",
                "sched:sched_process_*,syscalls:sys_enter_exec*",
                "true",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        csv_lines(&text)
            .iter()
            .map(|l| fields(l, ',')[2].clone())
            .collect()
    };
    let theirs = names(Some(&perf));
    assert!(theirs.len() >= 4, "{theirs:?}");
    assert_eq!(names(None), theirs);
}

/// (key, CPUs, unit, event, columns) of each CSV line of a topology mode.
fn topology_layout(
    perf: Option<&str>,
    args: &[&str],
) -> Vec<(String, String, String, String, usize)> {
    let out = tool(perf).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{perf:?} {args:?}: {text}");
    csv_lines(&text)
        .iter()
        .map(|l| {
            let f = fields(l, ',');
            (
                f[0].clone(),
                f[1].clone(),
                f[3].clone(),
                f[4].clone(),
                f.len(),
            )
        })
        .collect()
}

#[test]
fn per_core_socket_die_node_order_and_columns_match_perf() {
    let Some(perf) = perf() else { return };
    for mode in ["--per-core", "--per-socket", "--per-die", "--per-node"] {
        let args = [
            mode,
            "-a",
            "-x,",
            "-e",
            "task-clock,cs",
            "--",
            "sleep",
            "0.1",
        ];
        assert_eq!(
            topology_layout(None, &args),
            topology_layout(Some(&perf), &args),
            "{mode}"
        );
        // The table: the key and CPU-count columns as perf prints them.
        let prefix = |who: Option<&str>| -> Vec<String> {
            let out = tool(who)
                .args([mode, "-a", "-e", "task-clock", "--", "sleep", "0.1"])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.contains("task-clock"))
                .map(|l| {
                    l[..l.find(" msec").unwrap()]
                        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
                        .to_owned()
                })
                .collect()
        };
        assert_eq!(prefix(None), prefix(Some(&perf)), "{mode}");
    }
}
