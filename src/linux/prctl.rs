//! The two perf `prctl(2)` calls: enable or disable every event the calling
//! thread created (perf_event_open(2), "perf_event related prctl
//! operations", since Linux 2.6.31). Each returns prctl's result unchanged:
//! `0`, or `-1` with the cause in [`errno::last`](super::errno::last).

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::types::c_int;
use crate::sys;

/// `prctl(PR_TASK_PERF_EVENTS_ENABLE)`.
#[inline]
pub fn task_perf_events_enable() -> c_int {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(sys::PR_TASK_PERF_EVENTS_ENABLE as c_int, 0, 0, 0, 0) }
}

/// `prctl(PR_TASK_PERF_EVENTS_DISABLE)`.
#[inline]
pub fn task_perf_events_disable() -> c_int {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(sys::PR_TASK_PERF_EVENTS_DISABLE as c_int, 0, 0, 0, 0) }
}
