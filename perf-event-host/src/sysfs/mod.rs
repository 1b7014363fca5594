//! Discovery (std): PMUs from sysfs, their format bit ranges and event
//! aliases, tracefs tracepoint ids, kprobe / uprobe events, and the
//! system's perf limits; the machine's CPUs and topology; and what else the
//! packages read from sysfs and procfs: a process's threads, names and
//! mappings, the open fds, the CPUs' description, memory, host name, and
//! the kernel's notes and symbols. Every read of `/sys` and `/proc` in the
//! packages above the core is here (`tests/source_tree/layers.rs` checks
//! it); the core reads only the perf sysctls (`linux::system`).
//!
//! Since Linux 2.6.38 every PMU has a directory under
//! `/sys/bus/event_source/devices/` whose `type` file holds the number for
//! `perf_event_attr.type`; since Linux 3.4 its `format/` files say which bits
//! of `config`..`config4` each named term occupies and its `events/` files
//! name predefined events in those terms (perf_event_open(2), "Sysfs").
//! Dynamic PMUs (kprobe, uprobe, msr, uncore, arm_spe, ...) are only usable
//! this way.
//!
//! ```no_run
//! use perf_event_host::sysfs::Pmus;
//! use perf_event_core::attr::Attr;
//!
//! let pmus = Pmus::read()?;
//! let msr = pmus.get("msr").expect("x86 has an msr PMU");
//! let tsc = msr.alias_event("tsc")?; // events/tsc: "event=0x00"
//! let attr = Attr::new(tsc);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Reading a PMU allocates its names and file texts once; parsing and
//! encoding terms borrow from them. Errors name the file, the text and the
//! byte position, and say what to do.

mod alias;
mod cpus;
mod encode;
mod format;
mod limits;
mod pmu;
mod probe;
mod process;
mod system;
mod terms;
mod topology;
mod tracefs;
mod tracefs_format;

pub use alias::{Alias, Scale};
pub use cpus::CpuList;
pub use encode::{EncodeError, EncodeProblem, Encoder};
pub use format::{ConfigWord, ConfigWords, Format, FormatProblem, FormatSyntaxError};
pub use limits::{Limits, NmiWatchdog, UserAccess};
pub use pmu::{Pmu, Pmus};
pub use probe::{Probe, ProbeEvent};
pub use process::{comm, fds_in_use, maps, tasks};
pub use system::{cpuinfo, hostname, kallsyms_address, kernel_notes, meminfo, midr_el1};
pub(crate) use terms::parse_number;
pub use terms::{Term, TermLexer, TermProblem, TermSyntaxError, TermValue};
pub use topology::{has_acpi_nfit, smt_active, CpuPlace, Siblings, Topology, SYSFS};
pub use tracefs::{Tracefs, TracepointError};
pub use tracefs_format::{
    FieldKind, TraceArray, TraceDecodeError, TraceField, TraceFormat, TraceFormatError, TraceValue,
};

use std::fmt;
use std::path::{Path, PathBuf};

/// A sysfs, procfs or tracefs file that could not be read or understood.
#[derive(Debug)]
pub struct SysfsError {
    /// The file (or directory).
    pub path: PathBuf,
    /// What went wrong with it.
    pub problem: Problem,
}

/// What went wrong with a file.
#[derive(Debug)]
#[non_exhaustive]
pub enum Problem {
    /// Reading failed.
    Io(std::io::Error),
    /// The file name or contents are not UTF-8.
    NotUtf8,
    /// A number was expected.
    Number {
        /// The text found (trimmed).
        text: String,
    },
    /// A malformed `format/*` file.
    Format {
        /// The text found.
        text: String,
        /// Where and what.
        error: FormatSyntaxError,
    },
    /// A malformed `events/*` file.
    Terms {
        /// The text found.
        text: String,
        /// Where and what.
        error: TermSyntaxError,
    },
    /// A malformed `events/*.scale` file.
    Scale {
        /// The text found.
        text: String,
    },
    /// A malformed CPU list (`cpumask`, `cpus`).
    CpuList {
        /// The text found.
        text: String,
        /// Byte offset of the problem.
        position: usize,
    },
    /// `events/<name>.scale` / `.unit` / `.per-pkg` / `.snapshot` without
    /// `events/<name>`.
    Orphan,
}

impl SysfsError {
    pub(crate) fn new(path: &Path, problem: Problem) -> SysfsError {
        SysfsError {
            path: path.to_path_buf(),
            problem,
        }
    }
}

impl fmt::Display for SysfsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.problem {
            Problem::Io(e) if e.kind() == std::io::ErrorKind::NotFound => write!(
                f,
                "{path}: does not exist ({e}); list /sys/bus/event_source/devices for the PMUs \
                 of this machine"
            ),
            Problem::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied => write!(
                f,
                "{path}: {e}; run as root or give the file read permission"
            ),
            Problem::Io(e) => write!(f, "{path}: {e}"),
            Problem::NotUtf8 => write!(f, "{path}: the name or contents are not UTF-8"),
            Problem::Number { text } => {
                write!(f, "{path}: expected a decimal number, found {text:?}")
            }
            Problem::Format { text, error } => write!(
                f,
                "{path}: malformed format spec {text:?} {error}; a format file holds \
                 `configN:` and bit ranges, e.g. `config:0-7,32-35`"
            ),
            Problem::Terms { text, error } => write!(
                f,
                "{path}: malformed event terms {text:?} {error}; an events file holds \
                 `term=value` pairs separated by commas, e.g. `event=0x3c,umask=0x00,inv`"
            ),
            Problem::Scale { text } => write!(
                f,
                "{path}: expected a finite decimal scale factor such as 2.3283064365386962890625e-10, \
                 found {text:?}"
            ),
            Problem::CpuList { text, position } => write!(
                f,
                "{path}: malformed CPU list {text:?} at byte {position}; expected numbers and \
                 ranges separated by commas, e.g. `0-3,8`"
            ),
            Problem::Orphan => write!(
                f,
                "{path}: an event attribute file without its event file beside it"
            ),
        }
    }
}

impl std::error::Error for SysfsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.problem {
            Problem::Io(e) => Some(e),
            Problem::Format { error, .. } => Some(error),
            Problem::Terms { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Reads a small text file.
pub(crate) fn read_text(path: &Path) -> Result<String, SysfsError> {
    let bytes = std::fs::read(path).map_err(|e| SysfsError::new(path, Problem::Io(e)))?;
    String::from_utf8(bytes).map_err(|_| SysfsError::new(path, Problem::NotUtf8))
}

/// Reads a file that is absent on some kernels: `Ok(None)` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, SysfsError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| SysfsError::new(path, Problem::NotUtf8)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SysfsError::new(path, Problem::Io(e))),
    }
}

/// Parses a file holding one decimal number (optionally negative).
pub(crate) fn parse_int<T: core::str::FromStr>(path: &Path, text: &str) -> Result<T, SysfsError> {
    let trimmed = text.trim();
    trimmed.parse().map_err(|_| {
        SysfsError::new(
            path,
            Problem::Number {
                text: trimmed.to_owned(),
            },
        )
    })
}

/// Reads an optional file holding one number.
pub(crate) fn read_optional_int<T: core::str::FromStr>(
    path: &Path,
) -> Result<Option<T>, SysfsError> {
    read_optional(path)?
        .map(|text| parse_int(path, &text))
        .transpose()
}

/// The entries of a directory as UTF-8 names, sorted; `Ok(empty)` when the
/// directory does not exist.
pub(crate) fn dir_names(dir: &Path) -> Result<Vec<String>, SysfsError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(SysfsError::new(dir, Problem::Io(e))),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| SysfsError::new(dir, Problem::Io(e)))?;
        let name = entry
            .file_name()
            .into_string()
            .map_err(|_| SysfsError::new(&entry.path(), Problem::NotUtf8))?;
        names.push(name);
    }
    names.sort_unstable();
    Ok(names)
}
