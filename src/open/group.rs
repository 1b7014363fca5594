//! [`GroupOpen`]: the one way to open the members of a group (the
//! monitor's fixed array and perf-event-host's event sets both use it).

use super::{open, OpenError, OpenFlags, Scope};
use crate::abi::bitfield::attr_flags as flag;
use crate::attr::Attr;
use crate::fd::EventFd;

/// One group on one scope, opened member by member, leader first
/// (perf_event_open(2), `group_fd`, since Linux 2.6.31).
///
/// The leader is opened disabled with `group_fd` -1; each member is opened
/// enabled with the leader's fd as `group_fd`. A member counts only while
/// its leader does, so nothing counts until one `PERF_EVENT_IOC_ENABLE`
/// with `PERF_IOC_FLAG_GROUP` on the leader starts the whole group at once.
/// Every member gets the group's `read_format` bits (added to its own) and
/// its `inherit` bit. The caller keeps the fds, and decides which members
/// to skip or retry with another attr.
#[derive(Clone, Copy, Debug)]
pub struct GroupOpen {
    scope: Scope,
    read_format: u64,
    inherit: bool,
}

impl GroupOpen {
    /// A group on `scope` whose members get `read_format` bits and
    /// `inherit` as given.
    pub const fn new(scope: Scope, read_format: u64, inherit: bool) -> GroupOpen {
        GroupOpen {
            scope,
            read_format,
            inherit,
        }
    }

    /// Opens `attr` as the group's leader (`leader` `None`) or as a member
    /// of the group `leader` leads, with `flags` ([`OpenFlags::new`], or a
    /// fallback's without CLOEXEC).
    pub fn open(
        &self,
        attr: &Attr,
        leader: Option<&EventFd>,
        flags: OpenFlags,
    ) -> Result<EventFd, OpenError> {
        let attr = self.prepare(attr, leader.is_none());
        open(&attr, self.scope, leader, flags)
    }

    /// `attr` as the group opens it: its `read_format` with the group's
    /// bits added, `disabled` on the leader only, `inherit` as asked.
    const fn prepare(&self, attr: &Attr, leads: bool) -> Attr {
        attr.read_format_raw(attr.read_format_word() | self.read_format)
            .flag(flag::DISABLED, leads as u64)
            .flag(flag::INHERIT, self.inherit as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, Software};
    use crate::sys;

    #[test]
    fn the_leader_alone_is_disabled_and_every_member_gets_the_same_bits() {
        let id = sys::PERF_FORMAT_ID as u64;
        let group = sys::PERF_FORMAT_GROUP as u64;
        let attr = Attr::new(Event::Software(Software::TaskClock))
            .read_format_raw(id)
            .disabled(true);
        for inherit in [false, true] {
            let g = GroupOpen::new(Scope::this_thread(), group, inherit);
            let leader = g.prepare(&attr, true);
            let member = g.prepare(&attr.inherit(!inherit), false);
            assert_eq!(leader.get_flag(flag::DISABLED), 1);
            assert_eq!(member.get_flag(flag::DISABLED), 0);
            for a in [leader, member] {
                assert_eq!(a.read_format_word(), id | group, "bits added, not replaced");
                assert_eq!(a.get_flag(flag::INHERIT), inherit as u64);
            }
        }
    }
}
