//! Every cell of user (root, uid 65534) x `perf_event_paranoid` (-1, 0, 1,
//! 2, and 3 where the kernel takes it) x target (a command, an own pid,
//! all CPUs) x event (cycles, instructions, task-clock, page-faults, a
//! tracepoint, `cycles:P`) x tool (`perf stat` / `stat`, `perf record` /
//! `sample`): the final attr each tool opened (its `-vv` block: type,
//! config, the exclude bits, precise_ip) is the same, or both refuse; the
//! names (`task-clock:u`, `cpu-clock:uppp`) and the exit status are the
//! same. Every cell that differs is listed.

use crate::lab_support;
use crate::paranoid_support::ParanoidLevel;
use crate::stat_support::stat_binary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const FIELDS: &[&str] = &[
    "type",
    "config",
    "exclude_user",
    "exclude_kernel",
    "exclude_hv",
    "exclude_guest",
    "exclude_host",
    "precise_ip",
];
const EVENTS: &[&str] = &[
    "cycles",
    "instructions",
    "task-clock",
    "page-faults",
    "syscalls:sys_enter_getppid",
    "cycles:P",
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum User {
    Root,
    Nobody,
}

fn command(user: User, program: &Path) -> Command {
    match user {
        User::Root => Command::new(program),
        User::Nobody => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
            c.arg(program);
            c
        }
    }
}

/// One tool's run of a cell: its final attr, whether it opened, the name
/// it gave the event, its exit status.
#[derive(Debug, PartialEq)]
struct Seen {
    attr: Option<BTreeMap<String, u64>>,
    opened: bool,
    name: Option<String>,
    status: Option<i32>,
}

/// The last attr block of a `-vv` output that is not perf record's
/// side-band dummy event, and whether an open of it succeeded.
fn final_attr(text: &str) -> (Option<BTreeMap<String, u64>>, bool) {
    let mut last: Option<BTreeMap<String, u64>> = None;
    let mut opened = false;
    let mut current: Option<BTreeMap<String, u64>> = None;
    let mut in_block = false;
    for line in text.lines() {
        if line == "perf_event_attr:" {
            current = Some(BTreeMap::new());
            in_block = true;
        } else if line.starts_with("-----") {
            if in_block {
                in_block = false;
                let attr = current.take().unwrap_or_default();
                let dummy = attr.get("type") == Some(&1) && attr.get("config") == Some(&9);
                if !dummy {
                    last = Some(attr);
                    opened = false;
                }
            }
        } else if in_block {
            let line = line.trim();
            if let Some(f) = FIELDS
                .iter()
                .find(|f| line.strip_prefix(**f).is_some_and(|r| r.starts_with(' ')))
            {
                let v = line[f.len()..].trim();
                let v = match v.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).unwrap_or(u64::MAX),
                    None => v.parse().unwrap_or(u64::MAX),
                };
                if let Some(c) = current.as_mut() {
                    c.insert((*f).to_owned(), v);
                }
            }
        } else if line.starts_with("sys_perf_event_open") && last.is_some() {
            let ok = line.contains("= opened")
                || line.contains("opened on")
                || line
                    .rsplit_once("= ")
                    .is_some_and(|(_, n)| n.trim().parse::<i32>().is_ok());
            opened |= ok && !line.contains("failed");
        }
    }
    (last, opened)
}

/// The name a stat table gives the event (`task-clock:u`), by its base.
fn stat_name(text: &str, event: &str) -> Option<String> {
    let base = event.split(':').next().unwrap_or(event);
    let base = if event.starts_with("syscalls:") {
        event
    } else {
        base
    };
    let table = text.split("Performance counter stats").nth(1)?;
    table
        .lines()
        .flat_map(|l| l.split_whitespace())
        .find(|w| w.starts_with(base))
        .map(str::to_owned)
}

/// The first event name of a perf.data file, read by perf.
fn file_name(file: &Path) -> Option<String> {
    let out = Command::new("perf")
        .args(["evlist", "-f", "-i"])
        .arg(file)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(|l| l.trim().to_owned())
}

fn seen(out: Output, name: Option<String>) -> Seen {
    let text = String::from_utf8_lossy(&out.stderr);
    let (attr, opened) = final_attr(&text);
    Seen {
        attr,
        opened,
        name,
        status: out.status.code(),
    }
}

#[derive(Clone, Copy, Debug)]
enum Target {
    Command,
    OwnPid,
    AllCpus,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tool {
    Stat,
    Record,
}

struct Cell<'a> {
    user: User,
    target: Target,
    event: &'a str,
    tool: Tool,
}

/// Every cell of `user` at the current paranoid `level`: how many ran, and
/// each that differs from perf's, described.
fn user_cells(user: User, level: i32, sample: &Path, dir: &Path) -> (usize, Vec<String>) {
    let mut cells = 0;
    let mut differ = Vec::new();
    let mut proc_ = own_process(user);
    for target in [Target::Command, Target::OwnPid, Target::AllCpus] {
        for event in EVENTS {
            for tool in [Tool::Stat, Tool::Record] {
                let cell = Cell {
                    user,
                    target,
                    event,
                    tool,
                };
                let pid = Some(proc_.id());
                let perf = run(&cell, true, sample, dir, pid);
                let ours = run(&cell, false, sample, dir, pid);
                cells += 1;
                let both_refuse = !perf.opened && !ours.opened && perf.status == ours.status;
                let same_attr = perf.attr == ours.attr || (both_refuse && perf.status != Some(0));
                let agree = same_attr
                    && perf.opened == ours.opened
                    && perf.status == ours.status
                    && (perf.name == ours.name || !perf.opened);
                if !agree {
                    differ.push(format!(
                        "{user:?} paranoid {level} {target:?} {event} {tool:?}:\n  perf {perf:?}\n  ours {ours:?}"
                    ));
                }
            }
        }
    }
    let _ = proc_.kill();
    let _ = proc_.wait();
    (cells, differ)
}

/// Runs one tool (perf or ours) for a cell.
fn run(cell: &Cell, perf: bool, sample: &Path, dir: &Path, pid: Option<u32>) -> Seen {
    let file = dir.join(format!(
        "{:?}-{}.data",
        cell.user,
        if perf { "perf" } else { "ours" }
    ));
    let _ = std::fs::remove_file(&file);
    let (program, mut args): (PathBuf, Vec<String>) = match (cell.tool, perf) {
        (Tool::Stat, true) => ("perf".into(), vec!["stat".into(), "-vv".into()]),
        (Tool::Stat, false) => (stat_binary(), vec!["-vv".into()]),
        (Tool::Record, true) => (
            "perf".into(),
            ["record", "-vv", "--no-bpf-event", "-o"]
                .iter()
                .map(|s| s.to_string())
                .chain([file.display().to_string()])
                .collect(),
        ),
        (Tool::Record, false) => (
            sample.to_path_buf(),
            vec!["-vv".into(), "-o".into(), file.display().to_string()],
        ),
    };
    args.extend(["-e".to_owned(), cell.event.to_owned()]);
    match (cell.target, pid) {
        (Target::Command, _) => args.extend(["--".into(), "true".into()]),
        (Target::AllCpus, _) => args.extend(["-a".into(), "--".into(), "true".into()]),
        (Target::OwnPid, Some(p)) => {
            args.extend(["-p".into(), p.to_string()]);
            if cell.tool == Tool::Record && !perf {
                args.extend(["-d".into(), "0.05".into()]);
            } else {
                args.extend(["--".into(), "sleep".into(), "0.05".into()]);
            }
        }
        (Target::OwnPid, None) => unreachable!(),
    }
    let program = if program == Path::new("perf") {
        which("perf")
    } else {
        program
    };
    let out = command(cell.user, &program)
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run the tool");
    let name = match cell.tool {
        Tool::Stat => stat_name(&String::from_utf8_lossy(&out.stderr), cell.event),
        Tool::Record => file_name(&file),
    };
    seen(out, name)
}

fn which(program: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(program))
                .find(|p| p.exists())
        })
        .unwrap_or_else(|| program.into())
}

/// The sample example, built once for this test binary's profile.
fn sample_binary() -> PathBuf {
    crate::stat_support::example_binary("perf-data-file", "sample", None, None)
}

/// What the host needs, or why the matrix is skipped.
fn unavailable() -> Option<String> {
    // The effective uid, from /proc.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        == Some("0");
    if !root {
        return Some("not root: cannot set perf_event_paranoid or drop to uid 65534".into());
    }
    for tool in ["perf", "setpriv"] {
        if which(tool) == Path::new(tool) {
            return Some(format!("{tool} is not installed"));
        }
    }
    None
}

/// A process of `user` to attach to (`-p`).
fn own_process(user: User) -> Child {
    command(user, &which("sleep"))
        // Killed when its user's cells are done; long enough for a slow machine.
        .arg("3600")
        .spawn()
        .expect("spawn sleep")
}

/// The README's first command (`stat -- ls -l /`) and `perf stat -- ls -l
/// /` as uid 65534: the same events, with the same names, counted or
/// `<not supported>` alike, the same status. Returns the events' lines.
fn readme_command_as_a_user(dir: &Path) -> Result<String, String> {
    let rows = |program: &Path, first: &[&str]| -> (Vec<(String, bool)>, Option<i32>) {
        let out = command(User::Nobody, program)
            .args(first)
            .args(["--", "ls", "-l", "/"])
            .current_dir(dir)
            .stdout(Stdio::null())
            .output()
            .expect("run stat");
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let table = text.split("Performance counter stats").nth(1).unwrap_or("");
        let events = table
            .lines()
            .skip(1) // the rest of "... stats for 'CMD':"
            .take_while(|l| !l.contains("seconds time elapsed"))
            .filter_map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let counted = !l.contains("<not supported>") && !l.contains("<not counted>");
                let name = match words.as_slice() {
                    [_, "msec", name, ..] => name,
                    ["<not", _, name, ..] => name,
                    [_, name, ..] => name,
                    _ => return None,
                };
                Some((name.to_string(), counted))
            })
            .collect();
        (events, out.status.code())
    };
    let (theirs, their_status) = rows(&which("perf"), &["stat"]);
    let (ours, our_status) = rows(&stat_binary(), &[]);
    if theirs != ours || their_status != our_status || ours.is_empty() {
        return Err(format!(
            "README command as uid 65534: perf {theirs:?} ({their_status:?})\n  ours {ours:?} ({our_status:?})"
        ));
    }
    Ok(ours
        .iter()
        .map(|(n, c)| format!("  {n}: {}", if *c { "counted" } else { "<not supported>" }))
        .collect::<Vec<_>>()
        .join("\n"))
}

#[test]
fn every_cell_opens_what_perf_opens_or_both_refuse() {
    if let Some(why) = unavailable() {
        lab_support::skip("needs root, perf and setpriv", &why);
        return;
    }
    let sample = sample_binary();
    let _ = stat_binary();
    let dir = std::env::temp_dir().join(format!("fallback-matrix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Command::new("chmod")
        .arg("1777")
        .arg(&dir)
        .status()
        .unwrap();
    let mut cells = 0;
    let mut differ = Vec::new();
    let levels = ParanoidLevel::each(|level| {
        // The two users' cells side by side, each user's one after another:
        // root's locked ring memory is not uid 65534's, whose rings share
        // one per-user mlock budget (two of its recordings at once could
        // exhaust it, and a refusal that perf's run did not meet would be
        // this test's, not the tools').
        let (sample, dir) = (&sample, &dir);
        std::thread::scope(|s| {
            let runs = [User::Root, User::Nobody]
                .map(|user| s.spawn(move || user_cells(user, level, sample, dir)));
            for run in runs {
                let (n, d) = run.join().expect("a user's cells");
                cells += n;
                differ.extend(d);
            }
        });
    });
    let readme = ParanoidLevel::set(2).map(|guard| {
        let r = readme_command_as_a_user(&dir);
        drop(guard);
        r
    });
    let _ = std::fs::remove_dir_all(&dir);
    match readme {
        Some(Err(why)) => differ.push(why),
        Some(Ok(lines)) => {
            println!("README's first command as uid 65534 at paranoid 2, as perf stat:\n{lines}")
        }
        None => println!("paranoid 2 could not be set: the README command was not compared"),
    }
    println!(
        "{cells} cells (paranoid levels {levels:?}): {} agree with perf 6.1, {} differ",
        cells - differ.len(),
        differ.len()
    );
    assert!(
        differ.is_empty(),
        "{} cells differ from perf 6.1:\n{}",
        differ.len(),
        differ.join("\n")
    );
}
