//! `struct perf_event_attr` from its bytes as some machine stored them (a
//! perf.data attr section, a capture from another machine): every field at
//! its ABI offset, swapped when the bytes are in the other byte order. The
//! two bit-field words (the flags and `aux_action`) are numbered from the
//! other end on a big-endian machine, so a foreign word is also
//! bit-reversed, as perf's `perf_event__attr_swap` does.

use super::cursor::{u32_at, u64_at, ByteOrder};
use super::RecordError;
use crate::sys;
use core::mem::{offset_of, size_of};

/// Reads an attr of `bytes.len()` bytes (the attr's own `size`: shorter,
/// older attrs leave the later fields zero; at least
/// `PERF_ATTR_SIZE_VER0`, 64 bytes) stored in `order`.
pub fn attr_from_bytes(
    bytes: &[u8],
    order: ByteOrder,
) -> Result<sys::perf_event_attr, RecordError> {
    const VER0: usize = sys::PERF_ATTR_SIZE_VER0 as usize;
    if bytes.len() < VER0 {
        return Err(RecordError::Truncated {
            field: "attr",
            at: 0,
            len: bytes.len(),
        });
    }
    let swap = order.is_foreign();
    let n = bytes.len().min(size_of::<sys::perf_event_attr>());
    let b = &bytes[..n];
    // Fields past the end of an older attr read as 0.
    let u64f = |at: usize| u64_at(b, at, swap).unwrap_or(0);
    let u32f = |at: usize| u32_at(b, at, swap).unwrap_or(0);
    let u16f = |at: usize| {
        b.get(at..at + 2).map_or(0, |w| {
            let v = u16::from_ne_bytes([w[0], w[1]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        })
    };
    type A = sys::perf_event_attr;
    let mut flags = u64f(offset_of!(A, _bitfield_1));
    let mut aux_action = u32f(offset_of!(A, __bindgen_anon_5));
    if swap {
        flags = flags.reverse_bits();
        aux_action = aux_action.reverse_bits();
    }
    Ok(sys::perf_event_attr {
        type_: u32f(offset_of!(A, type_)),
        size: u32f(offset_of!(A, size)),
        config: u64f(offset_of!(A, config)),
        __bindgen_anon_1: sys::perf_event_attr__bindgen_ty_1 {
            sample_period: u64f(offset_of!(A, __bindgen_anon_1)),
        },
        sample_type: u64f(offset_of!(A, sample_type)),
        read_format: u64f(offset_of!(A, read_format)),
        _bitfield_1: sys::__BindgenBitfieldUnit::new(flags.to_ne_bytes()),
        __bindgen_anon_2: sys::perf_event_attr__bindgen_ty_2 {
            wakeup_events: u32f(offset_of!(A, __bindgen_anon_2)),
        },
        bp_type: u32f(offset_of!(A, bp_type)),
        __bindgen_anon_3: sys::perf_event_attr__bindgen_ty_3 {
            config1: u64f(offset_of!(A, __bindgen_anon_3)),
        },
        __bindgen_anon_4: sys::perf_event_attr__bindgen_ty_4 {
            config2: u64f(offset_of!(A, __bindgen_anon_4)),
        },
        branch_sample_type: u64f(offset_of!(A, branch_sample_type)),
        sample_regs_user: u64f(offset_of!(A, sample_regs_user)),
        sample_stack_user: u32f(offset_of!(A, sample_stack_user)),
        clockid: u32f(offset_of!(A, clockid)) as i32,
        sample_regs_intr: u64f(offset_of!(A, sample_regs_intr)),
        aux_watermark: u32f(offset_of!(A, aux_watermark)),
        sample_max_stack: u16f(offset_of!(A, sample_max_stack)),
        __reserved_2: u16f(offset_of!(A, __reserved_2)),
        aux_sample_size: u32f(offset_of!(A, aux_sample_size)),
        __bindgen_anon_5: sys::perf_event_attr__bindgen_ty_5 { aux_action },
        sig_data: u64f(offset_of!(A, sig_data)),
        config3: u64f(offset_of!(A, config3)),
        config4: u64f(offset_of!(A, config4)),
    })
}
