//! tracefs: where it is mounted and the ids of its tracepoints.
//!
//! A `PERF_TYPE_TRACEPOINT` event's `config` is the id in
//! `<tracefs>/events/<system>/<event>/id`. tracefs has its own mount point
//! at `/sys/kernel/tracing` since Linux 4.1; before that (and still, by
//! automount) it is `/sys/kernel/debug/tracing` inside debugfs. This module
//! finds it from `/proc/mounts` and never mounts anything.

use super::{read_text, Problem, SysfsError};
use std::fmt;
use std::path::{Path, PathBuf};

/// A tracefs mount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracefs {
    root: PathBuf,
}

/// Why a tracepoint id could not be had.
#[derive(Debug)]
#[non_exhaustive]
pub enum TracepointError {
    /// No tracefs in `/proc/mounts` nor at the usual places.
    NotMounted,
    /// A system or event name that cannot be a tracefs directory.
    BadName {
        /// The name.
        name: String,
    },
    /// The system directory does not exist.
    NoSystem {
        /// The tracefs `events` directory.
        events: PathBuf,
        /// The system asked for.
        system: String,
    },
    /// The system exists but has no such event.
    NoEvent {
        /// The path of the missing `id` file.
        path: PathBuf,
    },
    /// The `id` file could not be read or parsed.
    File(SysfsError),
}

impl fmt::Display for TracepointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TracepointError::NotMounted => f.write_str(
                "tracefs is not mounted (not in /proc/mounts, nothing at /sys/kernel/tracing or \
                 /sys/kernel/debug/tracing): as root, `mount -t tracefs nodev /sys/kernel/tracing`",
            ),
            TracepointError::BadName { name } => write!(
                f,
                "{name:?} is not a tracepoint system or event name (letters, digits, `_`, `-`, `.`)"
            ),
            TracepointError::NoSystem { events, system } => write!(
                f,
                "no tracepoint system `{system}`: {}/{system} does not exist (the kernel lacks \
                 the subsystem or its tracepoints; `ls {}` lists the systems)",
                events.display(),
                events.display()
            ),
            TracepointError::NoEvent { path } => write!(
                f,
                "no such tracepoint: {} does not exist (`ls` its system directory for the \
                 events; syscall tracepoints need CONFIG_FTRACE_SYSCALLS)",
                path.display()
            ),
            TracepointError::File(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TracepointError {}

/// Undoes the octal escapes of /proc/mounts (`\040` is a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                let v = (u32::from(d[0] - b'0') << 6)
                    | (u32::from(d[1] - b'0') << 3)
                    | u32::from(d[2] - b'0');
                out.push(v as u8);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

impl Tracefs {
    /// The tracefs at `root` (a directory with an `events/` subdirectory).
    pub fn at(root: &Path) -> Tracefs {
        Tracefs {
            root: root.to_path_buf(),
        }
    }

    /// Finds the mounted tracefs: a `tracefs` entry of `/proc/mounts`, else a
    /// `debugfs` entry's `tracing/` directory, else `/sys/kernel/tracing` or
    /// `/sys/kernel/debug/tracing` if they hold `events/`.
    pub fn find() -> Result<Tracefs, TracepointError> {
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
        Tracefs::find_in(&mounts)
            .or_else(|| {
                ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
                    .iter()
                    .map(Path::new)
                    .find(|p| p.join("events").is_dir())
                    .map(Tracefs::at)
            })
            .ok_or(TracepointError::NotMounted)
    }

    /// The tracefs named by a `/proc/mounts` text, if any holds `events/`.
    pub fn find_in(mounts: &str) -> Option<Tracefs> {
        let mut debugfs = None;
        for line in mounts.lines() {
            let mut fields = line.split_ascii_whitespace();
            let (Some(_), Some(dir), Some(kind)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let dir = PathBuf::from(unescape(dir));
            match kind {
                "tracefs" if dir.join("events").is_dir() => return Some(Tracefs { root: dir }),
                "debugfs" if debugfs.is_none() && dir.join("tracing/events").is_dir() => {
                    debugfs = Some(Tracefs {
                        root: dir.join("tracing"),
                    });
                }
                _ => {}
            }
        }
        debugfs
    }

    /// The mount point.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The id of tracepoint `system:event` (`syscalls:sys_enter_prctl`), the
    /// `config` of a `PERF_TYPE_TRACEPOINT` event.
    pub fn tracepoint_id(&self, system: &str, event: &str) -> Result<u64, TracepointError> {
        for name in [system, event] {
            if !valid_name(name) {
                return Err(TracepointError::BadName {
                    name: name.to_owned(),
                });
            }
        }
        let events = self.root.join("events");
        let path = events.join(system).join(event).join("id");
        match read_text(&path) {
            Ok(text) => text.trim().parse().map_err(|_| {
                TracepointError::File(SysfsError::new(
                    &path,
                    Problem::Number {
                        text: text.trim().to_owned(),
                    },
                ))
            }),
            Err(SysfsError {
                problem: Problem::Io(e),
                ..
            }) if e.kind() == std::io::ErrorKind::NotFound => {
                if events.join(system).is_dir() {
                    Err(TracepointError::NoEvent { path })
                } else {
                    Err(TracepointError::NoSystem {
                        events,
                        system: system.to_owned(),
                    })
                }
            }
            Err(e) => Err(TracepointError::File(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_lines_are_unescaped_and_names_checked() {
        assert_eq!(unescape(r"/mnt/a\040b\134c"), "/mnt/a b\\c");
        assert_eq!(unescape(r"\04"), r"\04");
        assert!(Tracefs::find_in("garbage\n\n a b").is_none());
        for bad in ["", ".", "..", "a/b", "sys enter", "*"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        let tf = Tracefs::at(Path::new("/nonexistent-tracefs"));
        assert!(matches!(
            tf.tracepoint_id("../etc", "passwd"),
            Err(TracepointError::BadName { .. })
        ));
        assert!(matches!(
            tf.tracepoint_id("sched", "sched_switch"),
            Err(TracepointError::NoSystem { .. })
        ));
    }
}
