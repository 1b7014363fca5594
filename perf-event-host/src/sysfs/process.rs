//! A process as procfs shows it: its threads (`/proc/PID/task`, since
//! Linux 2.6.0), each thread's name (`/proc/PID/task/TID/comm`, since
//! 2.6.33), its mappings (`/proc/PID/maps`), and the calling process's
//! open file descriptors (`/proc/self/fd`).

use super::{read_text, Problem, SysfsError};
use std::path::Path;

/// The thread ids of process `pid` now: the entries of `/proc/PID/task`,
/// in the kernel's order (ascending), entries that are no number left out.
/// Threads may start or exit right after. A process that does not exist
/// is an `Io` error of kind NotFound (ENOENT); an exited one whose entry
/// lingers (a zombie) has no threads.
pub fn tasks(pid: i32) -> Result<Vec<i32>, SysfsError> {
    let dir = format!("/proc/{pid}/task");
    let dir = Path::new(&dir);
    let io = |e| SysfsError::new(dir, Problem::Io(e));
    let mut tids = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        if let Some(tid) = entry
            .map_err(io)?
            .file_name()
            .to_str()
            .and_then(|s| s.parse().ok())
        {
            tids.push(tid);
        }
    }
    Ok(tids)
}

/// The name of thread `tid` of process `pid` (`comm`: the executable's
/// name, or what the thread set with `PR_SET_NAME`; at most 15 bytes),
/// without its newline.
pub fn comm(pid: i32, tid: i32) -> Result<String, SysfsError> {
    let path = format!("/proc/{pid}/task/{tid}/comm");
    read_text(Path::new(&path)).map(|t| t.trim_end_matches('\n').to_owned())
}

/// `/proc/PID/maps`: process `pid`'s mappings, one line each, `start-end
/// perms offset major:minor inode path` (addresses, offset and device in
/// hexadecimal; the path absent for anonymous memory).
pub fn maps(pid: i32) -> Result<String, SysfsError> {
    let path = format!("/proc/{pid}/maps");
    read_text(Path::new(&path))
}

/// File descriptors the calling process has open now: the entries of
/// `/proc/self/fd`, less the one used to list them; 0 when it cannot be
/// listed.
pub fn fds_in_use() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count().saturating_sub(1))
}
