//! `cargo xtask ci`'s lab: started beside the other steps, waited for at
//! the end.

use crate::shell::{self, Result};
use std::process::Command;

/// The lab's `nice` increment beside the steps (see [`Lab::start`]).
const LAB_NICENESS: &str = "10";

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
        // At a lower priority (nice 10: about a tenth of a CPU the steps
        // want too): the steps are one chain and the run ends with its
        // last one, while the lab's 20 guests and 8 builds can fill any
        // CPU the steps leave idle, and both CPUs once the steps are done.
        // At equal priority the two halves slowed each other until the
        // lab ended and the chain went on alone on 1.1-1.7 of 2 CPUs
        // (the summary's `busy`). A starved guest only waits: under
        // `-icount` its clock stops with it.
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
