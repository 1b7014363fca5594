/* The seqlock loop of perf_event_open(2) ("cap_user_rdpmc"), as a C
 * program would write it against <linux/perf_event.h>: the page through a
 * volatile pointer, compiler barriers around the section (libperf's
 * style), rdtsc / rdpmc on x86. The man page's text uses the deprecated
 * cap_usr_* names; the current header's cap_user_* bits are used here.
 * Compiled with -O2 by build.rs; the benchmark compares its instruction
 * count with perf-event-core's snapshot on the same page. */
#include <stdint.h>
#include <linux/perf_event.h>

#define barrier() __asm__ __volatile__("" ::: "memory")

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t rdpmc(uint32_t counter) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
    return ((uint64_t)hi << 32) | lo;
}
#else
static inline uint64_t rdtsc(void) { return 0; }
static inline uint64_t rdpmc(uint32_t counter) { (void)counter; return 0; }
#endif

struct manpage_result {
    uint64_t count, enabled, running, cyc, time_offset;
    uint32_t seq, idx, time_mult, time_shift;
};

__attribute__((noinline)) void bench_c_manpage_read(const struct perf_event_mmap_page *page,
                                                    struct manpage_result *out) {
    volatile const struct perf_event_mmap_page *pc = page;
    uint32_t seq, time_mult = 0, time_shift = 0, idx, width;
    uint64_t count, enabled, running, cyc = 0, time_offset = 0;
    do {
        seq = pc->lock;
        barrier();
        enabled = pc->time_enabled;
        running = pc->time_running;
        if (pc->cap_user_time && enabled != running) {
            cyc = rdtsc();
            time_offset = pc->time_offset;
            time_mult = pc->time_mult;
            time_shift = pc->time_shift;
        }
        idx = pc->index;
        count = pc->offset;
        if (pc->cap_user_rdpmc && idx) {
            int64_t pmc;
            width = pc->pmc_width;
            pmc = (int64_t)rdpmc(idx - 1);
            pmc <<= 64 - width;
            pmc >>= 64 - width;
            count += pmc;
        }
        barrier();
    } while (pc->lock != seq);
    out->seq = seq;
    out->count = count;
    out->enabled = enabled;
    out->running = running;
    out->cyc = cyc;
    out->time_offset = time_offset;
    out->time_mult = time_mult;
    out->time_shift = time_shift;
    out->idx = idx;
}
