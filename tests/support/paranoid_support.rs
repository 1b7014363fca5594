//! `kernel.perf_event_paranoid` set for a while and restored: for the
//! tests that try every level (each in a test binary of its own, so no
//! other test opens events while the level changes).
#![allow(dead_code)] // each test binary uses part of it

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// The level set by [`ParanoidLevel::set`]; the old one is written back
/// when this is dropped.
pub struct ParanoidLevel(String);

impl ParanoidLevel {
    /// Sets `level`, or `None` when the file cannot be written or the
    /// kernel does not keep the value.
    pub fn set(level: i32) -> Option<ParanoidLevel> {
        let old = std::fs::read_to_string(PARANOID).ok()?;
        std::fs::write(PARANOID, level.to_string()).ok()?;
        let guard = ParanoidLevel(old);
        let now = std::fs::read_to_string(PARANOID).ok()?;
        (now.trim() == level.to_string()).then_some(guard)
    }
}

impl ParanoidLevel {
    /// Runs `f` at each level -1, 0, 1, 2, 3 the kernel takes (a level it
    /// does not take is left out, saying so), restoring the old level after
    /// each; returns the levels run.
    pub fn each(mut f: impl FnMut(i32)) -> Vec<i32> {
        let mut levels = Vec::new();
        for level in [-1, 0, 1, 2, 3] {
            let Some(guard) = ParanoidLevel::set(level) else {
                println!("perf_event_paranoid {level}: the kernel does not take it, left out");
                continue;
            };
            levels.push(level);
            f(level);
            drop(guard);
        }
        levels
    }
}

impl Drop for ParanoidLevel {
    fn drop(&mut self) {
        std::fs::write(PARANOID, self.0.trim()).expect("restore perf_event_paranoid");
    }
}
