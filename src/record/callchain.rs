//! PERF_SAMPLE_CALLCHAIN split at its PERF_CONTEXT_* markers: the kernel
//! writes a marker before each run of addresses (kernel, user, hypervisor,
//! guest kernel / user), so the chain is a sequence of segments
//! (`enum perf_callchain_context` in perf_event.h).

use super::cursor::U64s;
use crate::sys;

/// Which context a run of callchain addresses belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Context {
    /// Addresses before any marker (not written by Linux; kept, not dropped).
    Unmarked,
    /// PERF_CONTEXT_HV.
    Hypervisor,
    /// PERF_CONTEXT_KERNEL.
    Kernel,
    /// PERF_CONTEXT_USER.
    User,
    /// PERF_CONTEXT_USER_DEFERRED (since Linux 6.19): the user part follows
    /// in a PERF_RECORD_CALLCHAIN_DEFERRED record; the next value is its cookie.
    UserDeferred,
    /// PERF_CONTEXT_GUEST.
    Guest,
    /// PERF_CONTEXT_GUEST_KERNEL.
    GuestKernel,
    /// PERF_CONTEXT_GUEST_USER.
    GuestUser,
    /// A value at or above PERF_CONTEXT_MAX that this crate does not know.
    Other(u64),
}

impl Context {
    /// The context a marker value starts, or `None` for an address.
    #[allow(clippy::unnecessary_cast)] // the enum's C type differs per architecture
    pub const fn from_marker(v: u64) -> Option<Context> {
        if v < sys::PERF_CONTEXT_MAX as u64 {
            return None;
        }
        Some(match v as sys::perf_callchain_context {
            sys::PERF_CONTEXT_HV => Context::Hypervisor,
            sys::PERF_CONTEXT_KERNEL => Context::Kernel,
            sys::PERF_CONTEXT_USER => Context::User,
            sys::PERF_CONTEXT_USER_DEFERRED => Context::UserDeferred,
            sys::PERF_CONTEXT_GUEST => Context::Guest,
            sys::PERF_CONTEXT_GUEST_KERNEL => Context::GuestKernel,
            sys::PERF_CONTEXT_GUEST_USER => Context::GuestUser,
            _ => Context::Other(v),
        })
    }

    /// Whether the addresses are in a guest.
    pub const fn is_guest(self) -> bool {
        matches!(
            self,
            Context::Guest | Context::GuestKernel | Context::GuestUser
        )
    }
}

/// A callchain, iterated as `(context, addresses)` segments in record order.
/// Every value of the chain is either a marker or in exactly one segment;
/// segments may be empty (a marker followed directly by another).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Callchain<'a> {
    ips: U64s<'a>,
}

impl<'a> Callchain<'a> {
    /// Wraps the values of [`super::Sample::callchain`].
    pub const fn new(ips: U64s<'a>) -> Self {
        Callchain { ips }
    }

    /// The segments in order.
    pub fn segments(&self) -> Segments<'a> {
        Segments {
            ips: self.ips,
            pos: 0,
        }
    }

    /// The addresses of every segment of context `ctx`, in order.
    pub fn addresses(&self, ctx: Context) -> impl Iterator<Item = u64> + 'a {
        self.segments()
            .filter(move |(c, _)| *c == ctx)
            .flat_map(|(_, ips)| ips.iter())
    }
}

/// Iterator over [`Callchain`] segments.
#[derive(Clone, Debug)]
pub struct Segments<'a> {
    ips: U64s<'a>,
    pos: usize,
}

impl<'a> Iterator for Segments<'a> {
    type Item = (Context, U64s<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let n = self.ips.len();
        if self.pos >= n {
            return None;
        }
        let first = self.ips.get(self.pos)?;
        let (ctx, start) = match Context::from_marker(first) {
            Some(c) => (c, self.pos + 1),
            None => (Context::Unmarked, self.pos),
        };
        let mut end = start;
        while end < n && self.ips.get(end).and_then(Context::from_marker).is_none() {
            end += 1;
        }
        self.pos = end;
        Some((ctx, self.ips.slice(start, end)))
    }
}
