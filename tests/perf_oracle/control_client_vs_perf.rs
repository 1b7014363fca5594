//! The control client (`perf_event_host::control`) against perf stat 6.1
//! and the stat example: every command sent through `Client` and answered,
//! `evlist`'s output read back, commands no tool acknowledges refused
//! before they are sent, the measured program's `Region` counted exactly,
//! and a tool that exits, hangs up or never answers reported as such
//! instead of hanging the client.
//!
//! Skipped, saying so, without perf or tracefs.

use crate::control_support::{csv_value, workload_argv, Driven, REGION_ROLE, STEP};
use crate::set_support;
use crate::stat_control_vs_perf::{argv, fifo_path, tools};
use perf_event_host::control::{Channel, Command, ControlError, EvlistDetail, Tool};
use std::time::Duration;

const EVENT: &str = "syscalls:sys_enter_getpid";

#[test]
fn the_client_sends_every_command_to_perf_stat_and_ours_alike() {
    let Some(tools) = tools() else { return };
    let workload = workload_argv(
        module_path!(),
        "the_client_sends_every_command_to_perf_stat_and_ours_alike",
    );
    let mut logs = Vec::new();
    for (label, tool) in &tools {
        // Two events: task-clock as well, so that `enable NAME` picks one.
        let mut tool = tool.clone();
        let e = tool.iter().position(|a| a == EVENT).unwrap();
        tool[e] = format!("task-clock,{EVENT}");
        let mut d = Driven::start(
            &argv(&tool),
            &workload,
            Channel::pipes().unwrap(),
            Tool::Stat,
        );
        let c = d.client();
        // Refused here, unsent: perf stat never acknowledges a snapshot;
        // a newline would end the command early.
        assert!(matches!(
            c.send(Command::Snapshot),
            Err(ControlError::Refused { .. })
        ));
        assert!(matches!(
            c.send(Command::Enable(Some("a\nb"))),
            Err(ControlError::Refused { .. })
        ));
        let long = "x".repeat(60);
        assert!(matches!(
            c.send(Command::Enable(Some(&long))),
            Err(ControlError::Refused { .. })
        ));
        c.send(Command::Ping).unwrap();
        c.send(Command::Enable(Some(EVENT))).unwrap();
        d.phase(11);
        d.client().send(Command::Disable(Some(EVENT))).unwrap();
        d.phase(13);
        d.client().send(Command::Enable(None)).unwrap();
        d.phase(17);
        d.client().send(Command::Stop).unwrap(); // perf stat acknowledges it and goes on
        d.phase(19);
        d.client().send(Command::Disable(None)).unwrap();
        for detail in [
            EvlistDetail::Names,
            EvlistDetail::Groups,
            EvlistDetail::Freq,
            EvlistDetail::Verbose,
        ] {
            d.client().send(Command::Evlist(detail)).unwrap();
        }
        d.phase(23);
        let (status, log) = d.end();
        println!("{label}: {log:?}");
        assert!(status.success(), "{label}: {status}");
        // 11 (named), 17 and 19 (all, `stop` changed nothing).
        assert_eq!(csv_value(&log, EVENT), "47", "{label}: {log:?}");
        // evlist, read back: names; groups (none: each its own); periods;
        // every attr field on one line after the name.
        let at = log.iter().rposition(|l| l == "Events disabled").unwrap();
        let tail = &log[at + 1..];
        let listed: Vec<&str> = tail.iter().map(String::as_str).collect();
        assert_eq!(
            listed[..6],
            [
                "task-clock",
                EVENT,
                "task-clock",
                EVENT,
                "task-clock: sample_period=0",
                &format!("{EVENT}: sample_period=0")
            ][..],
            "{label}"
        );
        for (line, name, config) in [
            (&listed[6], "task-clock", "config: 0x1"),
            (&listed[7], EVENT, "type: 2"),
        ] {
            assert!(
                line.starts_with(&format!("{name}: type: ")) && line.contains(config),
                "{label}: {line}"
            );
        }
        logs.push(log[..at + 1].to_vec());
    }
    // The messages up to the last `disable`, the same from both.
    assert_eq!(logs[0], logs[1], "perf's messages, then ours");
}

#[test]
fn a_region_marked_by_the_measured_program_counts_exactly() {
    let Some(tools) = tools() else { return };
    let test = "a_region_marked_by_the_measured_program_counts_exactly";
    for (label, tool) in &tools {
        for fifos in [false, true] {
            let mut channel = if fifos {
                Channel::fifos(&fifo_path("ctl"), &fifo_path("ack")).unwrap()
            } else {
                Channel::pipes().unwrap()
            };
            let env = channel.workload_env().unwrap();
            let mut cmd = Driven::command(
                &argv(tool),
                &channel.control_arg(),
                &workload_argv(module_path!(), test),
            );
            cmd.envs(env.iter().map(|(k, v)| (k, v)))
                .env(set_support::ROLE_VAR, REGION_ROLE);
            // The harness starts the tool; the program drives it.
            let d = Driven::start_with(cmd, channel, Tool::Stat);
            let (status, log) = d.end();
            println!("{label}, fifos {fifos}: {log:?}");
            assert!(status.success(), "{label}: {status}: {log:?}");
            assert_eq!(
                csv_value(&log, EVENT),
                "1007",
                "{label}, fifos {fifos}: {log:?}"
            );
        }
    }
}

#[test]
fn a_tool_that_exits_hangs_up_or_never_answers_is_an_error_not_a_hang() {
    crate::control_support::run_role();
    // A "tool" that reads one byte of its control pipe and exits 3, never
    // acknowledging: the client reports the exit and its status.
    let channel = Channel::pipes().unwrap();
    let arg = channel.control_arg();
    let (ctl, _ack) = arg.strip_prefix("fd:").unwrap().split_once(',').unwrap();
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", &format!("head -c 1 <&{ctl} >/dev/null; exit 3")]);
    let mut client = channel.spawn(&mut sh, Tool::Stat).unwrap();
    client.set_deadline(STEP);
    match client.enable() {
        Err(ControlError::Exited { status, .. }) => assert_eq!(status.code(), Some(3)),
        other => panic!("{other:?}"),
    }
    // Once a tool has gone, the next command is refused.
    assert!(matches!(client.enable(), Err(ControlError::Closed)));

    // A tool that never answers: the deadline ends the wait, and the
    // channel is closed after it.
    let channel = Channel::pipes().unwrap();
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", "exec sleep 30"]);
    let mut client = channel.spawn(&mut sh, Tool::Stat).unwrap();
    client.set_deadline(Duration::from_millis(100));
    let got = client.send(Command::Ping);
    assert!(matches!(got, Err(ControlError::Timeout { .. })), "{got:?}");
    assert!(matches!(
        client.send(Command::Ping),
        Err(ControlError::Closed)
    ));
    client.child().unwrap().kill().unwrap();
    client.finish().unwrap();

    // A tool that has exited: the write hangs up (EPIPE).
    let channel = Channel::pipes().unwrap();
    let mut t = std::process::Command::new("true");
    let mut client = channel.spawn(&mut t, Tool::Stat).unwrap();
    client.child().unwrap().wait().unwrap();
    let got = client.enable();
    assert!(matches!(got, Err(ControlError::HungUp { .. })), "{got:?}");
}
