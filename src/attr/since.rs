//! Which kernel an attr needs: the newest field, flag or format bit in use.

use super::Attr;
use crate::abi::since::{AUX_ACTION_SINCE, FIELDS, FLAGS, READ_FORMAT, SAMPLE_TYPE};
use crate::abi::KernelVersion;
use core::fmt;

/// A feature in use and the first kernel that has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The first kernel that accepts the feature.
    pub version: KernelVersion,
    /// The field, flag or bit (`config4`, `sigtrap`, `PERF_FORMAT_LOST`).
    pub what: &'static str,
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (Linux {})", self.what, self.version)
    }
}

impl Attr {
    /// Calls `each` for every field, flag and format bit this attr uses.
    pub fn for_each_requirement(&self, mut each: impl FnMut(Requirement)) {
        let bytes = self.bytes();
        for field in FIELDS {
            let used = bytes[field.offset..field.offset + field.len]
                .iter()
                .any(|b| *b != 0);
            if used && field.name != "size" {
                each(Requirement {
                    version: field.since,
                    what: field.name,
                });
            }
        }
        for f in FLAGS {
            if self.get_flag(f.flag) != 0 {
                each(Requirement {
                    version: f.since,
                    what: f.flag.name,
                });
            }
        }
        if self.get_aux_action() != 0 {
            each(Requirement {
                version: AUX_ACTION_SINCE,
                what: "aux_action",
            });
        }
        for (table, word) in [
            (SAMPLE_TYPE, self.raw.sample_type),
            (READ_FORMAT, self.raw.read_format),
        ] {
            for (bit, name, since) in table {
                if word & bit != 0 {
                    each(Requirement {
                        version: *since,
                        what: name,
                    });
                }
            }
        }
    }

    /// The newest kernel feature this attr uses (`perf_event_open` itself,
    /// Linux 2.6.31, when nothing newer is set).
    pub fn min_kernel(&self) -> Requirement {
        let mut newest = Requirement {
            version: KernelVersion::PERF_EVENT_OPEN,
            what: "perf_event_open",
        };
        self.for_each_requirement(|r| {
            if !newest.version.at_least(r.version) {
                newest = r;
            }
        });
        newest
    }

    /// The newest feature in use that `kernel` does not have, if any.
    pub fn newer_than(&self, kernel: KernelVersion) -> Option<Requirement> {
        let mut found: Option<Requirement> = None;
        self.for_each_requirement(|r| {
            if !kernel.at_least(r.version) && found.is_none_or(|f| !f.version.at_least(r.version)) {
                found = Some(r);
            }
        });
        found
    }
}
