//! placeholder
pub fn main() -> crate::shell::Result { Ok(()) }
