//! The EXAMPLES section of perf_event_open(2): count the instructions of
//! one `printf`. Where the machine has no hardware PMU (most VMs), falls
//! back to the task-clock software event and says so.
//!
//! ```sh
//! cargo run --example printf
//! ```

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::open::{open, OpenFlags, Scope};

fn main() {
    // As the man page: disabled, user space only.
    let instructions = Attr::new(Event::Hardware(Hardware::Instructions))
        .disabled(true)
        .exclude_kernel(true)
        .exclude_hv(true);
    let (fd, what) = match open(&instructions, Scope::this_thread(), None, OpenFlags::new()) {
        Ok(fd) => (fd, "instructions"),
        Err(e) => {
            eprintln!("note: {e}");
            eprintln!("note: counting the task-clock software event (ns) instead");
            let clock = Attr::new(Event::Software(Software::TaskClock)).disabled(true);
            let fd =
                open(&clock, Scope::this_thread(), None, OpenFlags::new()).unwrap_or_else(|e| {
                    eprintln!("error: {e}");
                    std::process::exit(1)
                });
            (fd, "ns of task-clock")
        }
    };
    fd.reset(false).expect("PERF_EVENT_IOC_RESET");
    fd.enable(false).expect("PERF_EVENT_IOC_ENABLE");
    // SAFETY: printf with a NUL-terminated format and no arguments.
    unsafe { libc::printf(c"Measuring instruction count for this printf\n".as_ptr()) };
    fd.disable(false).expect("PERF_EVENT_IOC_DISABLE");
    // SAFETY: flushing C stdio so the line shows before ours.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let count = fd.read_counts().expect("read").value;
    println!("Used {count} {what}");
}
