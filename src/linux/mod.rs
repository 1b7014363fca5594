//! The OS boundary: thin wrappers over the system calls the crate makes,
//! exactly as the kernel defines them.

pub mod epoll;
