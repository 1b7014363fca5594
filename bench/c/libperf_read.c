/*
 * libperf's counter read, perf_evsel__read (which takes the user-space path
 * itself when the event's page allows it), measured the way
 * tests/userpage/read_cost.rs measures the crate's CounterReader::read:
 * a user-readable cycles event of this thread read READS times, the batch
 * bracketed by read(2) of a second event counting this thread's
 * instructions in user and kernel mode. Then the page is unmapped and the
 * same event read again through perf_evsel__read, now read(2): the value
 * must not go back (both paths read the same counter).
 *
 * Built by `cargo xtask lab` against libperf from the Debian kernel source
 * package, statically, for the lab's aarch64 and riscv64 guests. Usage:
 * libperf-read CONFIG1. Prints one line:
 *   LIBPERF-READ per_read=<user path> syscall_per_read=<read(2)> user_value=<v> syscall_value=<v>
 * Exit status 2 when an event does not open or map.
 */
#include <perf/core.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* As COST_READS in tests/userpage/read_cost.rs. */
#define READS 10000

static uint64_t read_plain(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* Guest instructions (user and kernel) per perf_evsel__read, and the last value read. */
static double per_read(struct perf_evsel *evsel, int meter, uint64_t *last)
{
	struct perf_counts_values counts = { 0 };
	uint64_t before, after, sink = 0;
	int i;

	before = read_plain(meter);
	for (i = 0; i < READS; i++) {
		perf_evsel__read(evsel, 0, 0, &counts);
		sink += counts.val;
	}
	after = read_plain(meter);
	__asm__ volatile("" : : "r"(sink));
	*last = counts.val;
	return (double)(after - before) / READS;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr, meter_attr;
	struct perf_thread_map *threads;
	struct perf_evsel *evsel;
	uint64_t user_value, syscall_value;
	double user, syscall_cost;
	int meter;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	/* arm64: bit 0 a 64-bit counter, bit 1 user-space access. */
	attr.config1 = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

	memset(&meter_attr, 0, sizeof(meter_attr));
	meter_attr.size = sizeof(meter_attr);
	meter_attr.type = PERF_TYPE_HARDWARE;
	meter_attr.config = PERF_COUNT_HW_INSTRUCTIONS;

	libperf_init(NULL);
	threads = perf_thread_map__new_dummy();
	if (!threads)
		return 1;
	perf_thread_map__set_pid(threads, 0, 0);
	evsel = perf_evsel__new(&attr);
	if (!evsel || perf_evsel__open(evsel, NULL, threads) < 0) {
		fprintf(stderr, "libperf-read: cycles do not open\n");
		return 2;
	}
	if (perf_evsel__mmap(evsel, 0) < 0) {
		fprintf(stderr, "libperf-read: the event's page does not map\n");
		return 2;
	}
	meter = (int)syscall(SYS_perf_event_open, &meter_attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (meter < 0) {
		fprintf(stderr, "libperf-read: instructions do not open\n");
		return 2;
	}
	/* Warm, then measure: the user-space path, then read(2) once unmapped. */
	per_read(evsel, meter, &user_value);
	user = per_read(evsel, meter, &user_value);
	perf_evsel__munmap(evsel);
	per_read(evsel, meter, &syscall_value);
	syscall_cost = per_read(evsel, meter, &syscall_value);
	printf("LIBPERF-READ per_read=%.1f syscall_per_read=%.1f user_value=%llu syscall_value=%llu\n",
	       user, syscall_cost, (unsigned long long)user_value,
	       (unsigned long long)syscall_value);
	close(meter);
	perf_evsel__close(evsel);
	perf_evsel__delete(evsel);
	perf_thread_map__put(threads);
	return 0;
}
