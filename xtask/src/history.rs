//! ABI history (placeholder until written below).
pub fn main(_check: bool) -> crate::shell::Result {
    Ok(())
}
