//! CPU time of the machine and of this process, for `cargo xtask ci`'s
//! summary.

/// CPU time so far, in clock ticks: the machine's (/proc/stat's first
/// line) busy and in all, and this process's with its waited-for children
/// (/proc/self/stat: utime, stime, cutime, cstime), which is what a step
/// spent itself: the lab, a child not waited for until the end, is not in
/// the other steps' share.
#[derive(Clone, Copy)]
pub(crate) struct CpuTime {
    busy: u64,
    all: u64,
    own: u64,
}

/// Clock ticks per second of /proc's times (USER_HZ, 100 on Linux).
const USER_HZ: f64 = 100.0;

impl CpuTime {
    pub(crate) fn now() -> CpuTime {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let ticks: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|t| t.parse().ok())
            .collect();
        let all = ticks.iter().take(8).sum();
        // idle and iowait
        let idle: u64 = ticks.iter().skip(3).take(2).sum();
        let own = std::fs::read_to_string("/proc/self/stat")
            .unwrap_or_default()
            .rsplit_once(')')
            .map_or(0, |(_, fields)| {
                // After the command's closing parenthesis: state is field 3,
                // utime..cstime are fields 14-17.
                fields
                    .split_whitespace()
                    .skip(11)
                    .take(4)
                    .filter_map(|t| t.parse::<u64>().ok())
                    .sum()
            });
        CpuTime {
            busy: all - idle,
            all,
            own,
        }
    }

    /// Since `self`: CPU seconds this process and its waited-for children
    /// spent.
    pub(crate) fn own_secs(self) -> f64 {
        CpuTime::now().own.saturating_sub(self.own) as f64 / USER_HZ
    }

    /// Since `self`: the CPUs busy on average, as `1.7/2`.
    pub(crate) fn busy(self) -> String {
        let now = CpuTime::now();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let all = now.all.saturating_sub(self.all);
        if all == 0 {
            return "?".to_owned();
        }
        let share = now.busy.saturating_sub(self.busy) as f64 / all as f64;
        format!("{:.1}/{cpus}", share * cpus as f64)
    }
}

#[cfg(test)]
mod tests {
    /// /proc/self/stat's fields are read where they are: spinning adds to
    /// this process's own CPU time, and a waited-for child's time counts.
    #[test]
    fn cpu_time_counts_this_process_and_its_children() {
        let before = super::CpuTime::now();
        let mut x = 0u64;
        for i in 0..200_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        assert!(before.own_secs() > 0.0, "200M additions took no CPU time");
        let child = super::CpuTime::now();
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        // The shell loop takes about 0.3 s; this thread only waits.
        assert!(
            child.own_secs() >= 0.05,
            "the child's CPU time is counted: {} s",
            child.own_secs()
        );
    }
}
