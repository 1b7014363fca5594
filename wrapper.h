/*
 * The one list of what bindgen reads for `perf_event_core::sys`.
 *
 * Read by `cargo xtask bindgen` (vendored src/sys/<arch>.rs, pinned header
 * set) and by build.rs with feature `bindgen` (the target's installed headers).
 * Both drive bindgen through bindgen_options.rs; change what is generated here
 * or there, never in the generated files.
 *
 * Only UAPI headers are included and clang runs with -nostdinc, so every
 * value below is what this architecture's own headers say.
 */

#include <linux/perf_event.h>
#include <linux/hw_breakpoint.h>
#include <linux/prctl.h>
#include <asm/unistd.h>

/* sparc64 has no perf register ABI (no asm/perf_regs.h). */
#if __has_include(<asm/perf_regs.h>)
#include <asm/perf_regs.h>
#endif

/*
 * The ioctl numbers are function-like macros (_IO/_IOR/_IOW/_IOWR), which
 * bindgen does not expand. Declaring them as constants makes clang evaluate
 * each one with this architecture's own _IOC encoding (direction bits, size
 * field width, pointer size). bindgen_options.rs renames
 * perf_event_core_ioc_X back to PERF_EVENT_IOC_X. Each is guarded so that
 * older installed headers (feature `bindgen`) still parse.
 */
#define PERF_EVENT_CORE_IOC(name) \
	static const unsigned int perf_event_core_ioc_##name = PERF_EVENT_IOC_##name;

#ifdef PERF_EVENT_IOC_ENABLE
PERF_EVENT_CORE_IOC(ENABLE)
#endif
#ifdef PERF_EVENT_IOC_DISABLE
PERF_EVENT_CORE_IOC(DISABLE)
#endif
#ifdef PERF_EVENT_IOC_REFRESH
PERF_EVENT_CORE_IOC(REFRESH)
#endif
#ifdef PERF_EVENT_IOC_RESET
PERF_EVENT_CORE_IOC(RESET)
#endif
#ifdef PERF_EVENT_IOC_PERIOD
PERF_EVENT_CORE_IOC(PERIOD)
#endif
#ifdef PERF_EVENT_IOC_SET_OUTPUT
PERF_EVENT_CORE_IOC(SET_OUTPUT)
#endif
#ifdef PERF_EVENT_IOC_SET_FILTER
PERF_EVENT_CORE_IOC(SET_FILTER)
#endif
#ifdef PERF_EVENT_IOC_ID
PERF_EVENT_CORE_IOC(ID)
#endif
#ifdef PERF_EVENT_IOC_SET_BPF
PERF_EVENT_CORE_IOC(SET_BPF)
#endif
#ifdef PERF_EVENT_IOC_PAUSE_OUTPUT
PERF_EVENT_CORE_IOC(PAUSE_OUTPUT)
#endif
#ifdef PERF_EVENT_IOC_QUERY_BPF
PERF_EVENT_CORE_IOC(QUERY_BPF)
#endif
#ifdef PERF_EVENT_IOC_MODIFY_ATTRIBUTES
PERF_EVENT_CORE_IOC(MODIFY_ATTRIBUTES)
#endif

/*
 * The syscall number is an expression on some architectures
 * (mips: __NR_Linux + 292), so it is also evaluated by clang.
 */
static const long perf_event_core_nr_perf_event_open = __NR_perf_event_open;
