//! `cargo xtask ci`'s lab: started beside the other steps, waited for at
//! the end.

use crate::shell::{self, Result};
use std::process::Command;

/// The lab's `nice` increment beside the steps (see [`Lab::start`]).
const LAB_NICENESS: &str = "5";

/// The verification lab (`cargo xtask lab --no-host`), a child process
/// beside the other steps: its kernels download and its guests boot while
/// the host compiles and tests, so the machine's CPUs are busy where a
/// step alone leaves them idle (waiting on the network, on a test's
/// sleep, on one crate at a time). Its host column is left out: the
/// `test` step runs the same test binaries on the host. It writes its own
/// log, printed whole when it ends, so the steps' output stays readable.
pub(crate) struct Lab {
    child: std::process::Child,
    log: std::path::PathBuf,
}

impl Lab {
    pub(crate) fn start() -> Result<Lab> {
        shell::step("starting the lab (QEMU guests) beside the other steps");
        // apt and rustup are not for two at once: the lab's host tools
        // now, before the steps run theirs.
        crate::lab::install_host_tools()?;
        let dir = shell::root().join("target/ci");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = dir.join("lab.log");
        let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = file
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        // At a lower priority while the steps run (nice 5: a quarter of a
        // CPU the steps want too), back to the steps' own when they are
        // done ([`Lab::steps_done`]): the steps are one chain and the run
        // ends with its last one, while the lab's 20 guests and 8 builds
        // can fill any CPU the steps leave idle. At equal priority the two
        // halves slowed each other until the lab ended and the chain went
        // on alone on 1.1-1.7 of 2 CPUs (the summary's `busy`). A starved
        // guest only waits: under `-icount` its clock stops with it. Not
        // lower than 5: beside a CPU hog a guest still gets a seventh of a
        // CPU, far from its 600 s silence limit.
        let child = Command::new("nice")
            .args(["-n", LAB_NICENESS])
            .arg(exe)
            .args(["lab", "--no-host"])
            .current_dir(shell::root())
            .stdin(std::process::Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start the lab: {e}"))?;
        eprintln!(
            "the lab runs as pid {}, its log: {}",
            child.id(),
            log.display()
        );
        Ok(Lab { child, log })
    }

    /// The steps are done: the lab's threads and processes (QEMU, cargo
    /// and their children) go back to the steps' priority, so that beside
    /// other work on the machine the rest of the lab is not slowed by its
    /// `nice`. Lowering a niceness needs CAP_SYS_NICE: without it the lab
    /// goes on as it is, and the log says so.
    pub(crate) fn steps_done(&self) {
        let tids = tasks_under(self.child.id());
        if tids.is_empty() {
            return;
        }
        let mut renice = Command::new("renice");
        renice
            .args(["-n", "0", "-p"])
            .args(tids.iter().map(u32::to_string));
        match renice.output() {
            Ok(out) if out.status.success() => eprintln!(
                "the steps are done: the lab's {} threads are back at nice 0",
                tids.len()
            ),
            Ok(out) => eprintln!(
                "the lab stays at nice {LAB_NICENESS}: renice: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => eprintln!("the lab stays at nice {LAB_NICENESS}: renice: {e}"),
        }
    }

    /// Waits for the lab, prints its log and returns its verdict; the notes
    /// of a passing run (its `  note: ...` lines) go to the end.
    pub(crate) fn finish(mut self) -> Result {
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for the lab: {e}"))?;
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        eprintln!("{log}");
        if !status.success() {
            return Err(format!(
                "the lab failed ({status}): its log is printed above ({})",
                self.log.display()
            ));
        }
        let notes = log
            .lines()
            .filter_map(|l| l.strip_prefix("  note: "))
            .map(str::to_owned);
        crate::ci::NOTES
            .lock()
            .expect("no panic while holding it")
            .extend(notes);
        Ok(())
    }
}

/// The threads of process `root` and of every process below it, from
/// /proc (nice is per thread on Linux: `renice -p` of a process id
/// changes its main thread only).
fn tasks_under(root: u32) -> Vec<u32> {
    let parent = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
        let rest = &stat[stat.rfind(')')? + 1..];
        rest.split_whitespace().nth(1)?.parse().ok()
    };
    let pids: Vec<u32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let mut under = vec![root];
    // Parents come before their children in no particular order: add
    // until nothing new is found.
    loop {
        let before = under.len();
        for &pid in &pids {
            if !under.contains(&pid) && parent(pid).is_some_and(|p| under.contains(&p)) {
                under.push(pid);
            }
        }
        if under.len() == before {
            break;
        }
    }
    under
        .iter()
        .flat_map(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/task"))
                .map(|d| {
                    d.flatten()
                        .filter_map(|e| e.file_name().to_str()?.parse().ok())
                        .collect::<Vec<u32>>()
                })
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn tasks_under_a_process_include_its_threads_and_its_childrens() {
        use std::io::BufRead;
        // The shell says `started` after it forked its sleep.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & echo started; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "started");
        let tids = super::tasks_under(child.id());
        let _ = std::process::Command::new("kill")
            .args(tids.iter().map(u32::to_string))
            .status();
        let _ = child.wait();
        assert!(tids.contains(&child.id()), "{tids:?}");
        assert_eq!(tids.len(), 2, "the shell and its sleep: {tids:?}");
        // This process is not below the shell.
        assert!(!tids.contains(&std::process::id()), "{tids:?}");
    }
}
