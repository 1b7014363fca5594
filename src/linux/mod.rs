//! The OS boundary: thin wrappers over the system calls the crate makes,
//! exactly as the kernel defines each call.

#[cfg(feature = "std")]
pub mod rlimit;
