//! [`KernelVersion`]: a Linux kernel version, as `uname -r` names it.

use core::fmt;

/// A Linux kernel version (`major.minor.patch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelVersion {
    /// Major number (2, 3, 4, 5, 6, 7, ...).
    pub major: u16,
    /// Minor number.
    pub minor: u16,
    /// Patch level (0 for "since X.Y").
    pub patch: u16,
}

impl KernelVersion {
    /// `major.minor.patch`.
    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        KernelVersion {
            major,
            minor,
            patch,
        }
    }

    /// The first kernel with `perf_event_open(2)`.
    pub const PERF_EVENT_OPEN: KernelVersion = KernelVersion::new(2, 6, 31);

    /// Parses the leading `X.Y[.Z]` of a release string such as
    /// `6.18.44-fc-v657` (what `uname -r` prints); `None` if it has none.
    pub const fn parse(release: &[u8]) -> Option<KernelVersion> {
        let mut parts = [0u16; 3];
        let (mut part, mut i, mut digits) = (0, 0, 0);
        while i < release.len() {
            let c = release[i];
            if c.is_ascii_digit() {
                let Some(v) = parts[part].checked_mul(10) else {
                    return None;
                };
                let Some(v) = v.checked_add((c - b'0') as u16) else {
                    return None;
                };
                parts[part] = v;
                digits += 1;
            } else if c == b'.' && digits > 0 && part < 2 {
                part += 1;
                digits = 0;
            } else {
                break;
            }
            i += 1;
        }
        if part == 0 || (digits == 0 && part == 1) {
            return None;
        }
        Some(KernelVersion::new(parts[0], parts[1], parts[2]))
    }

    /// Whether this kernel is at least `other`.
    pub const fn at_least(self, other: KernelVersion) -> bool {
        let (a, b) = (self, other);
        a.major > b.major
            || (a.major == b.major
                && (a.minor > b.minor || (a.minor == b.minor && a.patch >= b.patch)))
    }

    /// The newer of two versions.
    pub const fn max(self, other: KernelVersion) -> KernelVersion {
        if self.at_least(other) {
            self
        } else {
            other
        }
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.patch == 0 {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        }
    }
}
