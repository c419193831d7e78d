/*
 * oc_core_test: the CObserverCore C API driven directly from C, for
 * `make valgrind` (memcheck: 0 errors, 0 definitely lost) and as a C
 * embedder's smoke test. Built by the system compiler with `pkg-config ck`.
 *
 * Every context is a malloc'd `struct probe`; the list's release callback
 * frees it, so memcheck sees a leak if a removed context is never released
 * and an invalid access if one is released while a reader can still see it
 * or released twice. Deliveries are counted exactly.
 */
#define _POSIX_C_SOURCE 200809L
#include "CObserverCore.h"
#include "oc_testing.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADDER_THREADS 4
#define ADDS_PER_THREAD 200
#define SENDER_THREADS 2
#define SENDS_PER_SENDER 2000

static int failures;

#define CHECK(condition)                                                       \
	do {                                                                   \
		if (!(condition)) {                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,  \
			    __LINE__, #condition);                             \
			failures++;                                            \
		}                                                              \
	} while (0)

struct probe {
	unsigned long calls;  /* atomic: senders on several threads */
	unsigned long id;
};

static unsigned long releases;  /* atomic */

static void
release_probe(void *context)
{
	struct probe *probe = context;

	/* A use-after-free or double release shows up in memcheck here. */
	probe->id = 0xdeadUL;
	free(probe);
	__atomic_fetch_add(&releases, 1, __ATOMIC_RELAXED);
}

static struct probe *
new_probe(unsigned long id)
{
	struct probe *probe = calloc(1, sizeof *probe);

	if (probe == NULL) {
		perror("calloc");
		exit(2);
	}
	probe->id = id;
	return probe;
}

/* A handle no add issued. */
static oc_handle_t
forged(uint64_t sequence, uint32_t index)
{
	oc_handle_t handle = { sequence, index };

	return handle;
}

/* One send: every visible context's counter, inside one read section. */
static unsigned long
send_once(oc_list_t *list)
{
	oc_reader_t *reader;
	oc_view_t view;
	unsigned long delivered = 0;
	uint32_t index;

	if (oc_list_is_empty(list))
		return 0;
	reader = oc_read_begin();
	view = oc_list_view(list);
	for (index = 0; index < view.count; index++) {
		struct probe *probe = oc_view_context(view, index);

		if (probe != NULL) {
			CHECK(probe->id != 0xdeadUL);
			__atomic_fetch_add(&probe->calls, 1, __ATOMIC_RELAXED);
			delivered++;
		}
	}
	oc_read_end(reader);
	return delivered;
}

struct adder_args {
	oc_list_t *list;
	unsigned long base;
	oc_handle_t handles[ADDS_PER_THREAD];
};

static void *
adder_main(void *argument)
{
	struct adder_args *args = argument;
	int i;

	for (i = 0; i < ADDS_PER_THREAD; i++) {
		oc_status_t status = oc_list_add(args->list,
		    new_probe(args->base + (unsigned long)i), &args->handles[i]);

		CHECK(status == OC_OK);
		/* Remove every other one at once: churn while others add. */
		if (i % 2 == 1)
			CHECK(oc_list_remove(args->list, args->handles[i]) == OC_OK);
		if (i % 50 == 0)
			send_once(args->list);
	}
	return NULL;
}

struct sender_args {
	oc_list_t *list;
	unsigned long delivered;
};

static void *
sender_main(void *argument)
{
	struct sender_args *args = argument;
	int i;

	for (i = 0; i < SENDS_PER_SENDER; i++)
		args->delivered += send_once(args->list);
	return NULL;
}

static void
test_concurrent_adds_sends_removes(void)
{
	oc_list_t *list = oc_list_create(release_probe);
	struct adder_args adders[ADDER_THREADS];
	struct sender_args senders[SENDER_THREADS];
	pthread_t threads[ADDER_THREADS + SENDER_THREADS];
	struct probe *stable = new_probe(1);
	oc_handle_t stable_handle;
	unsigned long expected_releases;
	int i, j;

	CHECK(list != NULL);
	CHECK(oc_list_add(list, stable, &stable_handle) == OC_OK);
	for (i = 0; i < ADDER_THREADS; i++) {
		adders[i].list = list;
		adders[i].base = 1000UL * (unsigned long)(i + 1);
		CHECK(pthread_create(&threads[i], NULL, adder_main, &adders[i]) == 0);
	}
	for (i = 0; i < SENDER_THREADS; i++) {
		senders[i].list = list;
		senders[i].delivered = 0;
		CHECK(pthread_create(&threads[ADDER_THREADS + i], NULL, sender_main,
		    &senders[i]) == 0);
	}
	for (i = 0; i < ADDER_THREADS + SENDER_THREADS; i++)
		pthread_join(threads[i], NULL);

	/* The stable context saw every send exactly once: the senders' and
	 * the adders' occasional ones (i = 0, 50, 100, 150). */
	CHECK(__atomic_load_n(&stable->calls, __ATOMIC_RELAXED) ==
	    (unsigned long)(SENDER_THREADS * SENDS_PER_SENDER +
	    ADDER_THREADS * ((ADDS_PER_THREAD + 49) / 50)));
	CHECK(oc_list_count(list) == 1 + ADDER_THREADS * ADDS_PER_THREAD / 2);

	/* Stale (already removed), foreign and never-issued handles. */
	for (i = 0; i < ADDER_THREADS; i++)
		for (j = 1; j < ADDS_PER_THREAD; j += 2)
			CHECK(oc_list_remove(list, adders[i].handles[j]) == OC_ENOENT);
	CHECK(oc_list_remove(list, oc_handle_none()) == OC_ENOENT);
	CHECK(oc_list_remove(list, forged(UINT64_MAX, UINT32_MAX)) == OC_ENOENT);

	/* remove_wait on the even ones of the first adder. */
	for (j = 0; j < ADDS_PER_THREAD; j += 2)
		CHECK(oc_list_remove_wait(list, adders[0].handles[j]) == OC_OK);
	CHECK(oc_list_count(list) == 1 + (ADDER_THREADS - 1) * ADDS_PER_THREAD / 2);

	/* clear removes the rest, the stable one included. */
	CHECK(oc_list_clear(list) == 1 + (ADDER_THREADS - 1) * ADDS_PER_THREAD / 2);
	CHECK(oc_list_count(list) == 0);
	CHECK(oc_list_is_empty(list));
	CHECK(oc_list_contains(list, stable_handle) == false);
	CHECK(oc_reclaim_barrier() == OC_OK);
	expected_releases = 1 + ADDER_THREADS * ADDS_PER_THREAD;
	CHECK(__atomic_load_n(&releases, __ATOMIC_RELAXED) == expected_releases);
	CHECK(oc_stats().pending_objects == 0);
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(oc_stats().pending_objects == 0);
	CHECK(oc_stats().pending_bytes == 0);
}

static void
test_exact_delivery_counts(void)
{
	oc_list_t *list = oc_list_create(release_probe);
	struct probe *probes[40];
	oc_handle_t handles[40];
	int i;

	releases = 0;
	for (i = 0; i < 40; i++) {
		probes[i] = new_probe((unsigned long)i + 1);
		CHECK(oc_list_add(list, probes[i], &handles[i]) == OC_OK);
	}
	CHECK(oc_list_capacity(list) >= 40);
	CHECK(send_once(list) == 40);
	for (i = 0; i < 40; i += 2)
		CHECK(oc_list_remove(list, handles[i]) == OC_OK);
	CHECK(send_once(list) == 20);
	for (i = 1; i < 40; i += 2)
		CHECK(probes[i]->calls == 2);
	/* A context removed from inside a section: the reader keeps its view. */
	{
		oc_reader_t *reader = oc_read_begin();
		oc_view_t view = oc_list_view(list);

		CHECK(oc_list_remove(list, handles[1]) == OC_OK);
		CHECK(oc_list_remove_wait(list, handles[3]) == OC_EINSECTION);
		CHECK(oc_synchronize() == OC_EINSECTION);
		CHECK(oc_reclaim_barrier() == OC_EINSECTION);
		/* Still readable memory (not released inside our section). */
		CHECK(probes[1]->id == 2);
		(void)view;
		oc_read_end(reader);
	}
	CHECK(send_once(list) == 18);
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(__atomic_load_n(&releases, __ATOMIC_RELAXED) == 40);
}

static bool
is_odd_probe(void *context, void *argument)
{
	(void)argument;
	return ((struct probe *)context)->id % 2 == 1;
}

static void
test_remove_if_and_try_remove(void)
{
	oc_list_t *list = oc_list_create(release_probe);
	oc_handle_t handle = oc_handle_none();
	int i;

	releases = 0;
	for (i = 0; i < 10; i++)
		CHECK(oc_list_add(list, new_probe((unsigned long)i), &handle) == OC_OK);
	CHECK(oc_list_remove_if(list, is_odd_probe, NULL) == 5);
	CHECK(oc_list_count(list) == 5);
	CHECK(oc_list_try_remove(list, handle) == OC_ENOENT); /* id 9: odd, gone */
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(releases == 10);
}

static void
test_bad_input(void)
{
	oc_handle_t handle = forged(42, 0);
	oc_list_t *first = oc_list_create(release_probe);
	oc_list_t *second = oc_list_create(NULL);
	struct probe *probe = new_probe(7);
	struct probe stack_probe = { 0, 8 };
	oc_handle_t foreign;

	CHECK(oc_list_add(NULL, probe, &handle) == OC_EINVAL);
	CHECK(oc_handle_is_none(handle));
	CHECK(oc_list_add(first, NULL, &handle) == OC_EINVAL);
	CHECK(oc_list_add(first, probe, NULL) == OC_EINVAL);
	CHECK(oc_list_remove(NULL, forged(1, 0)) == OC_EINVAL);
	CHECK(oc_list_try_remove(NULL, forged(1, 0)) == OC_EINVAL);
	CHECK(oc_list_remove_wait(NULL, forged(1, 0)) == OC_EINVAL);
	CHECK(oc_list_remove_if(NULL, is_odd_probe, NULL) == 0);
	CHECK(oc_list_clear(NULL) == 0);
	CHECK(oc_list_count(NULL) == 0);
	CHECK(oc_list_capacity(NULL) == 0);
	CHECK(!oc_list_contains(NULL, forged(1, 0)));
	oc_list_destroy(NULL);

	CHECK(oc_list_add(first, probe, &handle) == OC_OK);
	CHECK(oc_list_add(second, &stack_probe, &foreign) == OC_OK);
	CHECK(oc_list_remove(second, handle) == OC_ENOENT);
	CHECK(oc_list_remove(first, foreign) == OC_ENOENT);
	CHECK(oc_list_count(first) == 1 && oc_list_count(second) == 1);
	CHECK(strcmp(oc_status_string(OC_ENOENT), "stale, foreign or unknown handle") == 0);
	oc_list_destroy(first);
	oc_list_destroy(second); /* NULL release: the stack probe is not freed */
	CHECK(oc_reclaim_barrier() == OC_OK);
}

static void
test_allocation_failures(void)
{
	oc_list_t *list;
	oc_handle_t handles[17];
	struct probe *extra;
	uint64_t leaked = oc_stats().leaked_contexts;
	int i;

	releases = 0;
	oc_debug_fail_allocations(1);
	CHECK(oc_list_create(release_probe) == NULL);
	oc_debug_fail_allocations(2);
	CHECK(oc_list_create(release_probe) == NULL);
	oc_debug_fail_allocations(0);
	list = oc_list_create(release_probe);
	CHECK(list != NULL);
	for (i = 0; i < 16; i++)
		CHECK(oc_list_add(list, new_probe((unsigned long)i), &handles[i]) == OC_OK);
	extra = new_probe(99);
	oc_debug_fail_allocations(1);
	CHECK(oc_list_add(list, extra, &handles[16]) == OC_ENOMEM);
	CHECK(oc_handle_is_none(handles[16]));
	oc_debug_fail_allocations(0);
	CHECK(oc_list_count(list) == 16);
	CHECK(oc_list_add(list, extra, &handles[16]) == OC_OK);
	/* Retirement record allocation fails outside a section: released at
	 * once after a grace period, nothing leaked. */
	oc_debug_fail_allocations(1);
	CHECK(oc_list_remove(list, handles[16]) == OC_OK);
	oc_debug_fail_allocations(0);
	CHECK(releases == 1);
	CHECK(oc_stats().leaked_contexts == leaked);
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(releases == 17);
}

static void *
short_lived_sender(void *argument)
{
	send_once(argument);
	return NULL;
}

static void
test_thread_records_are_recycled(void)
{
	oc_list_t *list = oc_list_create(release_probe);
	struct probe *probe = new_probe(5);
	oc_handle_t handle;
	uint64_t records_before;
	int i;

	CHECK(oc_list_add(list, probe, &handle) == OC_OK);
	records_before = oc_stats().epoch_records;
	for (i = 0; i < 200; i++) {
		pthread_t thread;

		CHECK(pthread_create(&thread, NULL, short_lived_sender, list) == 0);
		pthread_join(thread, NULL);
	}
	CHECK(probe->calls == 200);
	CHECK(oc_stats().epoch_records <= records_before + 2);
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
}

int
main(void)
{
	test_concurrent_adds_sends_removes();
	test_exact_delivery_counts();
	test_remove_if_and_try_remove();
	test_bad_input();
	test_allocation_failures();
	test_thread_records_are_recycled();
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(oc_stats().pending_objects == 0);
	CHECK(oc_stats().live_contexts == 0);
	if (failures != 0) {
		fprintf(stderr, "oc_core_test: %d check(s) failed\n", failures);
		return 1;
	}
	printf("oc_core_test: all checks passed (records %llu, reclaimed %llu)\n",
	    (unsigned long long)oc_stats().epoch_records,
	    (unsigned long long)oc_stats().reclaimed_objects);
	return 0;
}
