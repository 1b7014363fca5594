//! Arbitrary ring contents through the ring set's walker, id/time peek and
//! time-ordered merge: no panic, no out-of-bounds read, every record out
//! exactly once, in time order when the merge's rule allows it.
#![no_main]

#[path = "../../tests/source_tree/fuzz_corpus/ringset_check.rs"]
mod ringset_check;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ringset_check::check(data);
});
