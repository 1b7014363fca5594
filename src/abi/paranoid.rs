//! The one table of `kernel.perf_event_paranoid` levels and what each
//! allows (kernel Documentation/admin-guide/sysctl/kernel.rst).

/// `kernel.perf_event_paranoid` (since Linux 2.6.32; `perf_counter_paranoid`
/// in 2.6.31), read by `linux::system::perf_event_paranoid` or `sysfs::Limits`
/// (feature `std`).
/// Its existence is the official sign that the kernel has
/// `perf_event_open` (perf_event_open(2)). CAP_PERFMON (Linux 5.8) or
/// CAP_SYS_ADMIN lifts every restriction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paranoid(pub i32);

impl Paranoid {
    /// What the level allows without CAP_PERFMON (kernel
    /// Documentation/admin-guide/sysctl/kernel.rst).
    pub const fn meaning(self) -> &'static str {
        match self.0 {
            i32::MIN..=-1 => {
                "no restrictions: any user may measure the kernel, whole CPUs and raw \
                 tracepoint data"
            }
            0 => {
                "kernel and CPU-wide measurement allowed; raw tracepoint samples and function \
                 tracing need CAP_PERFMON"
            }
            1 => {
                "user and kernel measurement of your own tasks; CPU-wide events (pid -1) need \
                 CAP_PERFMON"
            }
            2 => {
                "per-thread user-space measurement only: counting the kernel (leave \
                 exclude_kernel unset) and CPU-wide events need CAP_PERFMON (the default since \
                 Linux 4.6)"
            }
            _ => {
                "perf_event_open is closed to unprivileged users (a Debian/Ubuntu/Android patch \
                 level): everything needs CAP_PERFMON"
            }
        }
    }

    /// Whether an unprivileged caller may count the kernel.
    pub const fn allows_kernel(self) -> bool {
        self.0 < 2
    }

    /// Whether an unprivileged caller may open CPU-wide events (`pid == -1`).
    pub const fn allows_cpu_wide(self) -> bool {
        self.0 < 1
    }
}
