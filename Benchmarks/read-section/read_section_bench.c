/*
 * read-section: the cost of the core's read section around a one-observer
 * send, beside liburcu's memb flavor (Debian liburcu-dev: its read side has
 * no fence because writers use membarrier), in one process on one thread.
 * Built and run by `make bench` (`make bench-quick`: short form) with the
 * system compiler at -O2; only this program links liburcu, never the
 * library.
 *
 * Implementations, each a loop of one-observer sends (the list holds one
 * context, a struct whose function pointer the send calls):
 *   bare loop         the send without any read section (the floor)
 *   ObserverSwift     oc_read_begin / oc_read_end around the send
 *   liburcu memb      urcu_memb_read_lock / urcu_memb_read_unlock around it
 *   raw call          the observer's function pointer called directly
 * Each round runs every implementation once (the order rotates per round);
 * the figure is the median over the rounds of nanoseconds per send, after
 * one warm-up round. Ratios are of medians from this run; each ratio's
 * per-round median (both loops of one round) is printed beside it.
 *
 * Goals: ObserverSwift / liburcu memb <= 1.15, and
 * ObserverSwift's one-observer send / raw call <= 1.3. The program prints
 * met or not met; its exit status is 0 unless it could not measure.
 *
 * With OBSERVER_CORE_MEMBARRIER=0 in the environment the core keeps the
 * fence in its read sections (the fallback where membarrier is missing);
 * the program then says so, and measures that.
 */
#define _GNU_SOURCE
#define _LGPL_SOURCE /* liburcu's inline read-side fast paths */
#include "CObserverCore.h"
#include "oc_testing.h"

#include <urcu/urcu-memb.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct observer {
	void (*call)(struct observer *observer, uint64_t value);
	uint64_t sum;
	uint64_t calls;
};

static __attribute__((noinline)) void
observe(struct observer *observer, uint64_t value)
{
	observer->sum += value;
	observer->calls++;
}

/* The raw call's target, reloaded each iteration as a list slot would be. */
static struct observer *raw_target;

static inline void
send_through_view(const oc_list_t *list, uint64_t value)
{
	oc_view_t view = oc_list_view(list);
	uint32_t index;

	for (index = 0; index < view.count; index++) {
		struct observer *observer = oc_view_context(view, index);

		if (observer != NULL)
			observer->call(observer, value);
	}
}

static __attribute__((noinline)) void
run_bare(const oc_list_t *list, uint64_t iterations)
{
	uint64_t i;

	for (i = 0; i < iterations; i++)
		send_through_view(list, i);
}

static __attribute__((noinline)) void
run_ours(const oc_list_t *list, uint64_t iterations)
{
	uint64_t i;

	for (i = 0; i < iterations; i++) {
		oc_reader_t *reader = oc_read_begin();

		send_through_view(list, i);
		oc_read_end(reader);
	}
}

static __attribute__((noinline)) void
run_memb(const oc_list_t *list, uint64_t iterations)
{
	uint64_t i;

	for (i = 0; i < iterations; i++) {
		urcu_memb_read_lock();
		send_through_view(list, i);
		urcu_memb_read_unlock();
	}
}

static __attribute__((noinline)) void
run_raw(const oc_list_t *list, uint64_t iterations)
{
	uint64_t i;

	(void)list;
	for (i = 0; i < iterations; i++) {
		struct observer *observer = __atomic_load_n(&raw_target, __ATOMIC_RELAXED);

		observer->call(observer, i);
	}
}

enum { BARE, OURS, MEMB, RAW, IMPLEMENTATIONS };

static const char *const names[IMPLEMENTATIONS] = {
	"bare loop (floor)", "ObserverSwift", "liburcu memb", "raw function-pointer call",
};

static void (*const runs[IMPLEMENTATIONS])(const oc_list_t *, uint64_t) = {
	run_bare, run_ours, run_memb, run_raw,
};

static double
now_ns(void)
{
	struct timespec time;

	clock_gettime(CLOCK_MONOTONIC, &time);
	return (double)time.tv_sec * 1e9 + (double)time.tv_nsec;
}

static int
compare_doubles(const void *left, const void *right)
{
	double a = *(const double *)left;
	double b = *(const double *)right;

	return (a > b) - (a < b);
}

static double
median(const double *values, size_t count)
{
	double *sorted = malloc(count * sizeof *sorted);
	double result;

	if (sorted == NULL) {
		perror("malloc");
		exit(2);
	}
	memcpy(sorted, values, count * sizeof *sorted);
	qsort(sorted, count, sizeof *sorted, compare_doubles);
	result = count % 2 == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
	free(sorted);
	return result;
}

static unsigned long
parse_count(const char *text, const char *what)
{
	char *end;
	unsigned long value = strtoul(text, &end, 10);

	if (*text == '\0' || *end != '\0' || value == 0) {
		fprintf(stderr, "read-section: %s must be a positive integer, got '%s'\n", what, text);
		exit(2);
	}
	return value;
}

static void
usage(void)
{
	fprintf(stderr, "usage: read-section-bench [--quick] [--rounds N] [--iterations N]\n");
	exit(2);
}

/* Compares the ratio as printed (two decimals): a ratio printed equal to its goal meets it. */
static void
verdict(const char *what, double ratio, double per_round, double goal)
{
	char printed[32];

	snprintf(printed, sizeof printed, "%.2f", ratio);
	printf("%-44s %5sx (per-round median %5.2fx)  goal <= %.2fx: %s\n", what, printed, per_round,
	    goal, strtod(printed, NULL) <= goal ? "met" : "NOT met");
}

int
main(int argc, char **argv)
{
	unsigned long rounds = 21;
	unsigned long iterations = 20000000;
	double *figures[IMPLEMENTATIONS];
	double *ours_to_memb;
	double *ours_to_raw;
	double medians[IMPLEMENTATIONS];
	struct observer observer = { observe, 0, 0 };
	oc_list_t *list;
	oc_handle_t handle;
	unsigned long round;
	int argi, implementation;

	for (argi = 1; argi < argc; argi++) {
		if (strcmp(argv[argi], "--quick") == 0) {
			rounds = 15;
			iterations = 2000000;
		} else if (strcmp(argv[argi], "--rounds") == 0 && argi + 1 < argc) {
			rounds = parse_count(argv[++argi], "--rounds");
		} else if (strcmp(argv[argi], "--iterations") == 0 && argi + 1 < argc) {
			iterations = parse_count(argv[++argi], "--iterations");
		} else {
			usage();
		}
	}

	list = oc_list_create(NULL);
	if (list == NULL || oc_list_add(list, &observer, &handle) != OC_OK) {
		fprintf(stderr, "read-section: cannot create the list\n");
		return 2;
	}
	raw_target = &observer;
	urcu_memb_register_thread();
	for (implementation = 0; implementation < IMPLEMENTATIONS; implementation++) {
		figures[implementation] = calloc(rounds, sizeof(double));
		if (figures[implementation] == NULL) {
			perror("calloc");
			return 2;
		}
	}
	ours_to_memb = calloc(rounds, sizeof(double));
	ours_to_raw = calloc(rounds, sizeof(double));
	if (ours_to_memb == NULL || ours_to_raw == NULL) {
		perror("calloc");
		return 2;
	}

	printf("read-section: one-observer send, %lu sends x %lu rounds, median ns per send "
	       "(release build, -O2; core read sections %s)\n",
	    iterations, rounds,
	    oc_testing_sections_use_membarrier() ? "without a fence: writers issue membarrier"
						 : "with a store-load fence (no membarrier)");
	/* Warm-up: every loop once, the core's reader registered. */
	for (implementation = 0; implementation < IMPLEMENTATIONS; implementation++)
		runs[implementation](list, iterations / 4 + 1);

	for (round = 0; round < rounds; round++) {
		int step;

		for (step = 0; step < IMPLEMENTATIONS; step++) {
			int which = (int)((round + (unsigned long)step) % IMPLEMENTATIONS);
			double start = now_ns();

			runs[which](list, iterations);
			figures[which][round] = (now_ns() - start) / (double)iterations;
		}
		ours_to_memb[round] = figures[OURS][round] / figures[MEMB][round];
		ours_to_raw[round] = figures[OURS][round] / figures[RAW][round];
	}

	for (implementation = 0; implementation < IMPLEMENTATIONS; implementation++) {
		medians[implementation] = median(figures[implementation], rounds);
		printf("  %-28s %6.2f ns\n", names[implementation], medians[implementation]);
	}
	printf("  read section alone (minus the floor): ObserverSwift %.2f ns, liburcu memb %.2f ns\n",
	    medians[OURS] - medians[BARE], medians[MEMB] - medians[BARE]);
	verdict("ObserverSwift / liburcu memb:", medians[OURS] / medians[MEMB],
	    median(ours_to_memb, rounds), 1.15);
	verdict("ObserverSwift send / raw function-pointer call:", medians[OURS] / medians[RAW],
	    median(ours_to_raw, rounds), 1.3);
	if (observer.calls != (uint64_t)IMPLEMENTATIONS * ((iterations / 4 + 1) + rounds * iterations)) {
		fprintf(stderr, "read-section: %llu deliveries counted, expected %llu\n",
		    (unsigned long long)observer.calls,
		    (unsigned long long)IMPLEMENTATIONS * ((iterations / 4 + 1) + rounds * iterations));
		return 1;
	}

	urcu_memb_unregister_thread();
	oc_list_destroy(list);
	oc_reclaim_barrier();
	for (implementation = 0; implementation < IMPLEMENTATIONS; implementation++)
		free(figures[implementation]);
	free(ours_to_memb);
	free(ours_to_raw);
	return 0;
}
