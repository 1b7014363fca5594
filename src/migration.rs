//! Moving from `perf-event-open-sys` (5, 6, 7) or `perf-event-open-sys2`
//! (the perf-event2 fork, imported as `perf_event_open_sys`) to this crate,
//! and from perf-event2's counters, groups and samplers (the last section).
//!
//! The raw layer ([`crate::sys`] + [`crate::linux`]) has the shape of those
//! crates: the same bindgen names, a `perf_event_open` with the same
//! signature, one function per ioctl returning the kernel's `c_int`. Most
//! code ports with a dependency change and a few renames; the places
//! where the old crates were wrong (PERIOD by value, three to five
//! architectures) change on purpose. Every example below is compiled (and
//! run, on Linux) as a doctest.
//!
//! # The dependency
//!
//! ```toml
//! # before
//! perf-event-open-sys = "5"      # or "6", "7", or perf-event-open-sys2 = "5"
//! # after
//! perf-event-core = "0.1"
//! ```
//!
//! `use perf_event_open_sys as sys;` becomes `use perf_event_core::sys;` for
//! the types and constants, plus `perf_event_core::linux` for the calls.
//!
//! # Item by item
//!
//! | perf-event-open-sys / -sys2 | perf-event-core |
//! |---|---|
//! | `bindings::perf_event_attr` (and every `bindings::X`) | [`sys::perf_event_attr`](crate::sys::perf_event_attr) (`sys::X`, same names) |
//! | `perf_event_open(attr, pid, cpu, group_fd, flags)` | [`linux::perf_event_open`](crate::linux::perf_event_open), same signature and result |
//! | `ioctls::ENABLE(fd, c_uint)` | [`linux::ioctl::enable`](crate::linux::ioctl::enable)`(fd, c_uint)` |
//! | `ioctls::DISABLE(fd, c_uint)` | [`linux::ioctl::disable`](crate::linux::ioctl::disable)`(fd, c_uint)` |
//! | `ioctls::RESET(fd, c_uint)` | [`linux::ioctl::reset`](crate::linux::ioctl::reset)`(fd, c_uint)` |
//! | `ioctls::REFRESH(fd, c_int)` | [`linux::ioctl::refresh`](crate::linux::ioctl::refresh)`(fd, c_int)` |
//! | `ioctls::PERIOD(fd, u64)`: **by value, always EFAULT** | [`linux::ioctl::period`](crate::linux::ioctl::period)`(fd, *const u64)`: the kernel reads through a pointer |
//! | `ioctls::SET_OUTPUT(fd, c_int)` | [`linux::ioctl::set_output`](crate::linux::ioctl::set_output)`(fd, c_int)`; `-1` is sign-extended, so it detaches |
//! | `ioctls::SET_FILTER(fd, *mut c_char)` | [`linux::ioctl::set_filter`](crate::linux::ioctl::set_filter)`(fd, *const c_char)` |
//! | `ioctls::ID(fd, *mut u64)` | [`linux::ioctl::id`](crate::linux::ioctl::id)`(fd, *mut u64)` |
//! | `ioctls::SET_BPF(fd, u32)` | [`linux::ioctl::set_bpf`](crate::linux::ioctl::set_bpf)`(fd, c_int)` |
//! | `ioctls::PAUSE_OUTPUT(fd, u32)` | [`linux::ioctl::pause_output`](crate::linux::ioctl::pause_output)`(fd, c_uint)` |
//! | `ioctls::QUERY_BPF(fd, *mut perf_event_query_bpf)` | [`linux::ioctl::query_bpf`](crate::linux::ioctl::query_bpf), same argument |
//! | `ioctls::MODIFY_ATTRIBUTES(fd, *mut perf_event_attr)` | [`linux::ioctl::modify_attributes`](crate::linux::ioctl::modify_attributes), same argument |
//! | `attr.__bindgen_anon_1.sample_period = n` | `attr.set_sample_period(n)`; read: `attr.sample_period()` (no `unsafe`) |
//! | `__bindgen_anon_1.sample_freq` | `sample_freq()` / `set_sample_freq` |
//! | `__bindgen_anon_2.wakeup_events` / `wakeup_watermark` | `wakeup_events()` / `wakeup_watermark()` and `set_*` |
//! | `__bindgen_anon_3.bp_addr` / `kprobe_func` / `uprobe_path` / `config1` | `bp_addr()` / `kprobe_func()` / `uprobe_path()` / `config1()` and `set_*` |
//! | `__bindgen_anon_4.bp_len` / `kprobe_addr` / `probe_offset` / `config2` | `bp_len()` / `kprobe_addr()` / `probe_offset()` / `config2()` and `set_*` |
//! | `attr.set_disabled(1)`, `set_exclude_kernel(1)`, ... (bindgen bit fields) | unchanged: the same bindgen setters and getters |
//! | `__bindgen_anon_5.__bindgen_anon_1.set_aux_pause(1)` | `attr.set_aux_pause(1)` (`aux_start_paused`, `aux_resume` too) |
//! | `page.__bindgen_anon_1.__bindgen_anon_1.cap_user_rdpmc()` | `page.cap_user_rdpmc()` (all `cap_*`, `capabilities()`) |
//! | `std::io::Error::last_os_error()` after a `-1` | still works; or [`linux::errno::last`](crate::linux::errno::last) (also without std) |
//! | x86_64 / aarch64 / riscv64 only (sys2: + a few) | 16 architectures, ioctl numbers proven against the C compiler |
//!
//! The anonymous-union names `__bindgen_anon_N` depend on the order of
//! the anonymous members in the header and have moved between kernel
//! versions; the accessors keep the kernel's member names, so code using
//! them does not break when the bindings are regenerated.
//!
//! # Opening an event
//!
//! The same code as with perf-event-open-sys; only the paths change.
//!
//! ```
//! use perf_event_core::linux::{errno, perf_event_open};
//! use perf_event_core::sys;
//!
//! let mut attr = sys::perf_event_attr::default();
//! attr.size = core::mem::size_of::<sys::perf_event_attr>() as u32;
//! attr.type_ = sys::PERF_TYPE_SOFTWARE;
//! attr.config = sys::PERF_COUNT_SW_TASK_CLOCK as u64;
//! attr.set_disabled(1);
//! attr.set_exclude_kernel(1);
//! attr.set_exclude_hv(1);
//!
//! // SAFETY: `attr` is a whole perf_event_attr and `size` is its size.
//! let fd = unsafe { perf_event_open(&mut attr, 0, -1, -1, sys::PERF_FLAG_FD_CLOEXEC as _) };
//! if fd < 0 {
//!     // Same convention: -1 and errno.
//!     panic!("perf_event_open: errno {}", errno::last());
//! }
//! # // SAFETY: the fd was opened above and is closed once.
//! # unsafe { perf_event_core::linux::io::close(fd) };
//! ```
//!
//! # Union members and the sample period
//!
//! ```
//! use perf_event_core::sys;
//!
//! let mut attr = sys::perf_event_attr::default();
//! // Before: attr.__bindgen_anon_1.sample_period = 10_000;
//! attr.set_sample_period(10_000);
//! // Before: let p = unsafe { attr.__bindgen_anon_1.sample_period };
//! assert_eq!(attr.sample_period(), 10_000);
//!
//! // A breakpoint: bp_addr and config1 are one union, as in the header.
//! attr.set_bp_addr(0x1000);
//! attr.set_bp_len(sys::HW_BREAKPOINT_LEN_8 as u64);
//! assert_eq!(attr.config1(), 0x1000);
//!
//! // Debug shows every union as its members (bindgen derives no Debug here).
//! let shown = format!("{attr:?}");
//! assert!(shown.contains("sample_period: 10000"));
//! ```
//!
//! # The ioctls
//!
//! Each takes the argument the kernel reads. PERIOD is the one whose type
//! changes: perf-event-open-sys passes the `u64` by value, which the kernel
//! takes for an address (EFAULT).
//!
//! ```
//! use perf_event_core::linux::{errno, ioctl, perf_event_open};
//! use perf_event_core::sys;
//!
//! let mut attr = sys::perf_event_attr::default();
//! attr.size = core::mem::size_of::<sys::perf_event_attr>() as u32;
//! attr.type_ = sys::PERF_TYPE_SOFTWARE;
//! attr.config = sys::PERF_COUNT_SW_CPU_CLOCK as u64;
//! attr.set_sample_period(1_000_000);
//! attr.set_disabled(1);
//! attr.read_format = sys::PERF_FORMAT_ID as u64;
//! // SAFETY: a whole perf_event_attr.
//! let fd = unsafe { perf_event_open(&mut attr, 0, -1, -1, sys::PERF_FLAG_FD_CLOEXEC as _) };
//! assert!(fd >= 0, "errno {}", errno::last());
//!
//! // SAFETY (all calls below): `fd` is the perf event fd opened above and
//! // each pointer is to a live value of the type the kernel reads.
//! unsafe {
//!     // Before: ioctls::ENABLE(fd, 0)
//!     assert_eq!(ioctl::enable(fd, 0), 0);
//!     // Before: ioctls::PERIOD(fd, 2_000_000)  -- EFAULT
//!     let period: u64 = 2_000_000;
//!     assert_eq!(ioctl::period(fd, &period), 0);
//!     // Before: ioctls::ID(fd, &mut id)
//!     let mut id = 0u64;
//!     assert_eq!(ioctl::id(fd, &mut id), 0);
//!     assert_ne!(id, 0);
//!     // Before: ioctls::SET_OUTPUT(fd, -1) -- 0xffffffff, EBADF on some versions
//!     assert_eq!(ioctl::set_output(fd, -1), 0);
//!     assert_eq!(ioctl::disable(fd, 0), 0);
//!     perf_event_core::linux::io::close(fd);
//! }
//! ```
//!
//! # Bit fields by name
//!
//! bindgen's setters on `perf_event_attr` keep their names. The ones that
//! sat inside anonymous unions are now on the outer struct:
//!
//! ```
//! use perf_event_core::sys;
//!
//! let mut attr = sys::perf_event_attr::default();
//! attr.set_exclude_kernel(1); // unchanged
//! attr.set_freq(1); // unchanged
//! // Before: attr.__bindgen_anon_5.__bindgen_anon_1.set_aux_start_paused(1)
//! attr.set_aux_start_paused(1);
//! assert_eq!((attr.exclude_kernel(), attr.freq(), attr.aux_start_paused()), (1, 1, 1));
//!
//! let mut page = sys::perf_event_mmap_page::default();
//! // Before: page.__bindgen_anon_1.__bindgen_anon_1.set_cap_user_rdpmc(1)
//! page.set_cap_user_rdpmc(1);
//! assert_eq!(page.cap_user_rdpmc(), 1);
//! ```
//!
//! # Moving up to the typed layer, one fd at a time
//!
//! A raw fd becomes an [`EventFd`](crate::fd::EventFd) (explained errors,
//! exact-size reads, typed ioctls) without reopening it:
//!
//! ```
//! use perf_event_core::fd::EventFd;
//! use perf_event_core::linux::perf_event_open;
//! use perf_event_core::sys;
//!
//! let mut attr = sys::perf_event_attr::default();
//! attr.size = core::mem::size_of::<sys::perf_event_attr>() as u32;
//! attr.type_ = sys::PERF_TYPE_SOFTWARE;
//! attr.config = sys::PERF_COUNT_SW_TASK_CLOCK as u64;
//! attr.read_format = (sys::PERF_FORMAT_TOTAL_TIME_ENABLED
//!     | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;
//! // SAFETY: a whole perf_event_attr.
//! let raw = unsafe { perf_event_open(&mut attr, 0, -1, -1, sys::PERF_FLAG_FD_CLOEXEC as _) };
//! assert!(raw >= 0);
//! // SAFETY: `raw` is a perf event fd that nothing else closes.
//! let fd = unsafe { EventFd::from_raw(raw, attr.read_format) };
//! let counts = fd.read_counts().unwrap();
//! assert!(counts.enabled.is_some());
//! ```
//!
//! Or open typed from the start with [`open::open`](crate::open::open),
//! which sizes the attr for the running kernel and explains failures;
//! [`open::open_with_size`](crate::open::open_with_size) keeps an exact
//! `attr.size` for libraries that let their users choose it.
//!
//! # From perf-event2
//!
//! perf-event2 (`perf_event`) wraps the syscall in a builder, counters,
//! groups and samplers. The same things here, by layer (the std ones are
//! the perf-event-host package, beside this crate):
//!
//! | perf-event2 | perf-event-core (and perf-event-host) |
//! |---|---|
//! | `Builder::new(Hardware::INSTRUCTIONS)`, `Software::TASK_CLOCK` | [`Attr::new`](crate::attr::Attr::new)`(Event::Hardware(Hardware::Instructions))`, `Event::Software(Software::TaskClock)`: a `const` attr |
//! | `.enabled(false)` (the default) | `.disabled(true)` (the kernel's own flag) |
//! | `.observe_pid(pid)`, `.one_cpu(cpu)`, `.any_cpu()` | [`Scope::thread`](crate::open::Scope::thread)`(pid)`, `Scope::thread_on(pid, cpu)`, `Scope::all_tasks_on(cpu)` |
//! | `.read_format(ReadFormat::TOTAL_TIME_ENABLED \| ...)` | `.read_format(ReadFormat::TOTAL_TIME_ENABLED \| ...)` ([`read_format::ReadFormat`](crate::read_format::ReadFormat)) |
//! | `.build()` -> `Counter` | [`open::open`](crate::open::open)`(&attr, scope, None, OpenFlags::new())` -> [`EventFd`](crate::fd::EventFd), with an error that names the field, errno and limit |
//! | `counter.enable()`, `disable()`, `reset()` | `fd.enable(false)`, `disable(false)`, `reset(false)` (`true`: the whole group) |
//! | `counter.read()`, `read_full()` (value and times) | `fd.read_counts()`: [`Counts`](crate::read_format::Counts), value and times; `Counts::scaled` for a multiplexed count |
//! | `Group::new()`, `group.add(&builder)`, `group.read()` around a region | [`monitor::Monitor`](crate::monitor::Monitor)`::open([attr; N])`, `start` / `stop`: one group read per end, or none where the PMU allows user-space reads |
//! | groups per CPU and per thread, by hand | perf-event-host's `set::EventSet` (every CPU, every thread of a process, every core type, read together) |
//! | `counter.sampled(bytes)` -> `Sampler`, `next_record()`, `parse_record()` | [`RingBuffer::map`](crate::ring::RingBuffer::map)`(&fd, pages)`, `records()`, then a sample's ip / pid_tid / time through `SampleLayout::from_attr(&attr).prefix()` ([`record::SamplePrefix`](crate::record::SamplePrefix), on `RawRecord::bytes`), or the whole record with `RawRecord::parse(&layout, ..)` (see [`ring`](crate::ring#draining-a-ring)) |
//! | samplers on every CPU, by hand | perf-event-host's `ringset::RingSet` (one epoll wait, a time-ordered merge, loss per ring) |
//! | `Tracepoint::with_id(id)` (the id read by the caller) | `Event::Tracepoint(id)`; perf-event-host's `parse::parse("sched:sched_switch", ..)` finds the id |
//!
//! A counter around a region, both ways:
//!
//! ```ignore
//! // perf-event2
//! let mut counter = perf_event::Builder::new(perf_event::events::Software::TASK_CLOCK).build()?;
//! counter.enable()?;
//! work();
//! counter.disable()?;
//! println!("{} ns", counter.read()?);
//! ```
//!
//! ```
//! // perf-event-core
//! use perf_event_core::attr::Attr;
//! use perf_event_core::event::{Event, Software};
//! use perf_event_core::open::{open, OpenFlags, Scope};
//!
//! let attr = Attr::new(Event::Software(Software::TaskClock)).disabled(true);
//! let fd = open(&attr, Scope::this_thread(), None, OpenFlags::new())?;
//! fd.enable(false)?;
//! let sum: u64 = (0..100_000u64).map(core::hint::black_box).sum();
//! fd.disable(false)?;
//! println!("sum {sum}: {} ns", fd.read_counts()?.value);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
