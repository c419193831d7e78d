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
#if defined(__linux__)
#define _GNU_SOURCE
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include "CObserverCore.h"
#include "oc_testing.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

#if !OC_DEBUG_CHECKS
#error "oc_core_test checks the debug consistency checks: build it with -DOC_DEBUG_CHECKS=1"
#endif

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

static bool
equal_ints(const void *key_context, const void *probe_key)
{
	return *(const int *)key_context == *(const int *)probe_key;
}

/* Debug checks are fatal by default: these children must abort. */
static int
unbalanced_read_end_in_child(void *argument)
{
	(void)argument;
	oc_read_end(oc_reader_current());
	return 0;
}

static int
null_view_in_child(void *argument)
{
	oc_list_t *volatile null_list = NULL;
	oc_reader_t *reader = oc_read_begin();

	(void)argument;
	(void)oc_list_view(null_list);
	oc_read_end(reader);
	return 0;
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

/* One send over contexts nothing dereferences: how many it visits. */
static uint32_t
send_count(oc_list_t *list)
{
	oc_reader_t *reader;
	oc_view_t view;
	uint32_t visited = 0;
	uint32_t index;

	if (oc_list_is_empty(list))
		return 0;
	reader = oc_read_begin();
	view = oc_list_view(list);
	for (index = 0; index < view.count; index++) {
		if (oc_view_context(view, index) != NULL)
			visited++;
	}
	oc_read_end(reader);
	return visited;
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

/*
 * Runs `body` in a child process (fork) and returns how it ended: its exit
 * status (0..255), 1000 + the signal that killed it, or -1 when it did not
 * end within `seconds` (then it is killed). The child only runs C code and
 * leaves with _exit.
 */
#define CHILD_TIMED_OUT (-1)
#define CHILD_SIGNALLED(signal) (1000 + (signal))

static int
run_in_child(int (*body)(void *argument), void *argument, int seconds)
{
	pid_t child = fork();
	int status = 0;
	int waited_ms;

	if (child < 0) {
		perror("fork");
		exit(2);
	}
	if (child == 0)
		_exit(body(argument));
	for (waited_ms = 0; waited_ms < seconds * 1000; waited_ms += 10) {
		struct timespec pause = { 0, 10 * 1000 * 1000 };

		if (waitpid(child, &status, WNOHANG) == child) {
			if (WIFEXITED(status))
				return WEXITSTATUS(status);
			if (WIFSIGNALED(status))
				return CHILD_SIGNALLED(WTERMSIG(status));
			return -2;
		}
		nanosleep(&pause, NULL);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return CHILD_TIMED_OUT;
}

/*
 * Handles are never reissued: the sequence part is a full 64-bit counter.
 * A handle that kept only the low 40 bits would repeat for the add 2^40
 * adds after another one into the same slot (a stale handle would remove
 * the newcomer), and would be all zero (OC_HANDLE_NONE) for the add at slot
 * 0 whose sequence is a multiple of 2^40; these cases are checked here, and
 * at 2^48 and 2^56. The counter is fast-forwarded (it only moves forward,
 * so every live list keeps its ordering) to reach them without 2^40 adds.
 */
/*
 * The list's writer lock under contention: some threads count, inside
 * oc_list_remove_if's predicate (which runs under the lock), with a plain
 * non-atomic increment, while others churn add/remove pairs (and
 * try_remove) on the same list, so that the lock is taken, spun on and
 * parked on from several threads at once. Mutual exclusion holds exactly
 * when no increment is lost; every pair's removal must succeed, and every
 * removed context must be released once after a barrier.
 */
#define LOCK_COUNTERS 2
#define LOCK_CHURNERS 2
#define LOCK_ROUNDS 20000

struct lock_case {
	oc_list_t *list;
	struct probe *stable;
	unsigned long counted; /* plain: written only under the list's lock */
	unsigned long failed_removals; /* atomic */
};

static bool
count_stable(void *context, void *argument)
{
	struct lock_case *lock_case = argument;

	if (context == lock_case->stable) {
		/* A read, a pause, a write: without mutual exclusion two
		 * threads in here at once lose an increment. */
		unsigned long seen = lock_case->counted;
		volatile int pause;

		for (pause = 0; pause < 32; pause++) {
		}
		lock_case->counted = seen + 1;
	}
	return false;
}

static void *
lock_counter_main(void *argument)
{
	struct lock_case *lock_case = argument;
	int round;

	for (round = 0; round < LOCK_ROUNDS; round++)
		(void)oc_list_remove_if(lock_case->list, count_stable, lock_case);
	return NULL;
}

static void *
lock_churner_main(void *argument)
{
	struct lock_case *lock_case = argument;
	int round;

	for (round = 0; round < LOCK_ROUNDS; round++) {
		oc_handle_t handle;
		oc_status_t status;

		if (oc_list_add(lock_case->list, new_probe(6), &handle) != OC_OK) {
			__atomic_fetch_add(&lock_case->failed_removals, 1, __ATOMIC_RELAXED);
			continue;
		}
		/* Every other round tries without waiting first. */
		status = round % 2 == 0 ? oc_list_try_remove(lock_case->list, handle) : OC_EBUSY;
		if (status == OC_EBUSY)
			status = oc_list_remove(lock_case->list, handle);
		if (status != OC_OK)
			__atomic_fetch_add(&lock_case->failed_removals, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
test_contended_writer_lock(void)
{
	struct lock_case lock_case = { NULL, new_probe(5), 0, 0 };
	pthread_t threads[LOCK_COUNTERS + LOCK_CHURNERS];
	oc_handle_t stable_handle;
	unsigned long releases_before;
	int i;

	CHECK(oc_reclaim_barrier() == OC_OK);
	releases_before = __atomic_load_n(&releases, __ATOMIC_RELAXED);
	lock_case.list = oc_list_create(release_probe);
	CHECK(lock_case.list != NULL);
	CHECK(oc_list_add(lock_case.list, lock_case.stable, &stable_handle) == OC_OK);
	for (i = 0; i < LOCK_COUNTERS; i++)
		CHECK(pthread_create(&threads[i], NULL, lock_counter_main, &lock_case) == 0);
	for (i = 0; i < LOCK_CHURNERS; i++)
		CHECK(pthread_create(&threads[LOCK_COUNTERS + i], NULL, lock_churner_main,
		    &lock_case) == 0);
	for (i = 0; i < LOCK_COUNTERS + LOCK_CHURNERS; i++)
		CHECK(pthread_join(threads[i], NULL) == 0);
	CHECK(lock_case.counted == (unsigned long)LOCK_COUNTERS * LOCK_ROUNDS);
	CHECK(lock_case.failed_removals == 0);
	CHECK(oc_list_count(lock_case.list) == 1);
	CHECK(oc_list_remove(lock_case.list, stable_handle) == OC_OK);
	oc_list_destroy(lock_case.list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(__atomic_load_n(&releases, __ATOMIC_RELAXED) - releases_before ==
	    1 + (unsigned long)LOCK_CHURNERS * LOCK_ROUNDS);
	CHECK(oc_stats().pending_objects == 0);
}

/*
 * The keymap's writer lock under contention: writers add and remove
 * contexts under one key (kept present by a stable context), by
 * oc_keymap_remove and oc_keymap_try_remove, so that the map's lock is
 * taken, spun on and parked on from several threads at once. The key
 * comparison runs under that lock (oc_key_equal_fn's contract): it counts
 * its calls twice, with an atomic increment and with a plain read, pause
 * and write. Mutual exclusion holds exactly when the plain count loses no
 * increment; every removal must succeed and every removed context must be
 * released once after a barrier.
 */
#define KEYMAP_LOCK_WRITERS 4
#define KEYMAP_LOCK_ROUNDS 10000

struct keymap_lock_case {
	oc_keymap_t *map;
	unsigned long compared; /* plain: written only under the map's lock */
	unsigned long comparisons; /* atomic */
	unsigned long failed; /* atomic */
};

static struct keymap_lock_case *keymap_lock_current;

static bool
equal_ints_counted(const void *key_context, const void *probe_key)
{
	struct keymap_lock_case *lock_case = keymap_lock_current;
	unsigned long seen = lock_case->compared;
	volatile int pause;

	__atomic_fetch_add(&lock_case->comparisons, 1, __ATOMIC_RELAXED);
	for (pause = 0; pause < 32; pause++) {
	}
	lock_case->compared = seen + 1;
	return equal_ints(key_context, probe_key);
}

static void *
keymap_lock_writer_main(void *argument)
{
	struct keymap_lock_case *lock_case = argument;
	static int key = 7;
	int round;

	for (round = 0; round < KEYMAP_LOCK_ROUNDS; round++) {
		oc_handle_t handle;
		oc_status_t status;
		bool adopted = false;

		if (oc_keymap_add(lock_case->map, 7, &key, &key, new_probe(8), &handle,
		    &adopted) != OC_OK || adopted) {
			__atomic_fetch_add(&lock_case->failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		/* Every other round tries without waiting first. */
		status = round % 2 == 0 ? oc_keymap_try_remove(lock_case->map, 7, &key, handle) :
		    OC_EBUSY;
		if (status == OC_EBUSY)
			status = oc_keymap_remove(lock_case->map, 7, &key, handle);
		if (status != OC_OK)
			__atomic_fetch_add(&lock_case->failed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
test_contended_keymap_lock(void)
{
	struct keymap_lock_case lock_case = { NULL, 0, 0, 0 };
	pthread_t threads[KEYMAP_LOCK_WRITERS];
	static int stable_key = 7;
	oc_handle_t stable_handle;
	unsigned long releases_before;
	bool adopted = false;
	int i;

	CHECK(oc_reclaim_barrier() == OC_OK);
	releases_before = __atomic_load_n(&releases, __ATOMIC_RELAXED);
	keymap_lock_current = &lock_case;
	lock_case.map = oc_keymap_create(equal_ints_counted, NULL, release_probe);
	CHECK(lock_case.map != NULL);
	CHECK(oc_keymap_add(lock_case.map, 7, &stable_key, &stable_key, new_probe(9),
	    &stable_handle, &adopted) == OC_OK);
	CHECK(adopted);
	for (i = 0; i < KEYMAP_LOCK_WRITERS; i++)
		CHECK(pthread_create(&threads[i], NULL, keymap_lock_writer_main, &lock_case) == 0);
	for (i = 0; i < KEYMAP_LOCK_WRITERS; i++)
		CHECK(pthread_join(threads[i], NULL) == 0);
	CHECK(lock_case.failed == 0);
	/* Each add and each remove compares the key at least once. */
	CHECK(lock_case.comparisons >= 2ul * KEYMAP_LOCK_WRITERS * KEYMAP_LOCK_ROUNDS);
	if (lock_case.compared != lock_case.comparisons)
		fprintf(stderr, "keymap lock: %lu comparisons, %lu counted under the lock\n",
		    lock_case.comparisons, lock_case.compared);
	CHECK(lock_case.compared == lock_case.comparisons);
	CHECK(oc_keymap_count(lock_case.map, 7, &stable_key) == 1);
	CHECK(oc_keymap_remove(lock_case.map, 7, &stable_key, stable_handle) == OC_OK);
	oc_keymap_destroy(lock_case.map);
	CHECK(oc_reclaim_barrier() == OC_OK);
	keymap_lock_current = NULL;
	CHECK(__atomic_load_n(&releases, __ATOMIC_RELAXED) - releases_before ==
	    1 + (unsigned long)KEYMAP_LOCK_WRITERS * KEYMAP_LOCK_ROUNDS);
	CHECK(oc_stats().pending_objects == 0);
}

static void
test_handles_never_repeat(void)
{
	oc_list_t *list = oc_list_create(release_probe);
	oc_handle_t first, second, boundary;
	uint64_t next;
	int shift;

	releases = 0;
	CHECK(oc_list_add(list, new_probe(1), &first) == OC_OK);
	CHECK(first.index == 0 && first.sequence != 0);
	CHECK(oc_list_remove(list, first) == OC_OK);
	next = oc_testing_advance_sequence(first.sequence + (UINT64_C(1) << 40));
	CHECK(next == first.sequence + (UINT64_C(1) << 40));
	CHECK(oc_list_add(list, new_probe(2), &second) == OC_OK);
	CHECK(second.index == first.index);
	CHECK(!oc_handle_equal(second, first));
	CHECK(oc_list_remove(list, first) == OC_ENOENT);
	CHECK(oc_list_contains(list, second));
	CHECK(oc_list_remove(list, second) == OC_OK);

	/* Slot 0 at sequences that are multiples of 2^40, 2^48 and 2^56. */
	for (shift = 40; shift <= 56; shift += 8) {
		uint64_t multiple = ((oc_testing_advance_sequence(0) >> shift) + 1) << shift;

		CHECK(oc_testing_advance_sequence(multiple) == multiple);
		CHECK(oc_list_add(list, new_probe(3), &boundary) == OC_OK);
		CHECK(boundary.index == 0 && boundary.sequence == multiple);
		CHECK(!oc_handle_is_none(boundary));
		CHECK(oc_list_remove(list, boundary) == OC_OK);
	}
	/* The counter never moves back. */
	next = oc_testing_advance_sequence(0);
	CHECK(oc_testing_advance_sequence(1) == next);
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(releases == 5);
}

/* In a child: the last sequence numbers, then OC_EEXHAUSTED, nothing added. */
static int
exhaust_sequence_in_child(void *argument)
{
	oc_list_t *list = oc_list_create(NULL);
	struct probe probe = { 0, 1 };
	oc_handle_t last, refused = { 7, 7 };

	(void)argument;
	if (oc_testing_advance_sequence(UINT64_MAX - 1) != UINT64_MAX - 1)
		return 10;
	if (oc_list_add(list, &probe, &last) != OC_OK || last.sequence != UINT64_MAX - 1)
		return 11;
	if (oc_list_add(list, &probe, &refused) != OC_EEXHAUSTED || !oc_handle_is_none(refused))
		return 12;
	if (oc_list_add(list, &probe, &refused) != OC_EEXHAUSTED || oc_list_count(list) != 1)
		return 13;
	if (oc_list_remove(list, last) != OC_OK)
		return 14;
	if (oc_testing_advance_sequence(5) != OC__SEQUENCE_FREE)
		return 15;
	oc_list_destroy(list);
	return oc_reclaim_barrier() == OC_OK ? 0 : 16;
}

static void
test_sequence_exhaustion(void)
{
	CHECK(run_in_child(exhaust_sequence_in_child, NULL, 20) == 0);
}

/*
 * fork() while another thread is inside a read section: in the child that
 * thread does not exist, and grace periods must not wait for it.
 */
struct parked_reader {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool inside;
	bool leave;
};

static void *
parked_reader_main(void *argument)
{
	struct parked_reader *parked = argument;
	oc_reader_t *reader = oc_read_begin();

	pthread_mutex_lock(&parked->lock);
	parked->inside = true;
	pthread_cond_broadcast(&parked->changed);
	while (!parked->leave)
		pthread_cond_wait(&parked->changed, &parked->lock);
	pthread_mutex_unlock(&parked->lock);
	oc_read_end(reader);
	return NULL;
}

struct fork_case {
	oc_list_t *list;
	oc_handle_t handle;
};

static int
wait_for_readers_in_child(void *argument)
{
	struct fork_case *fork_case = argument;
	oc_list_t *fresh;
	oc_handle_t handle;
	struct probe probe = { 0, 9 };

	if (oc_stats().records_reset_after_fork < 1)
		return 20;
	if (oc_list_remove_wait(fork_case->list, fork_case->handle) != OC_OK)
		return 21;
	if (oc_synchronize() != OC_OK || oc_reclaim_barrier() != OC_OK)
		return 22;
	/* The child keeps working: a new list, a thread that reads. */
	fresh = oc_list_create(NULL);
	if (fresh == NULL || oc_list_add(fresh, &probe, &handle) != OC_OK)
		return 23;
	if (send_once(fresh) != 1 || oc_list_remove_wait(fresh, handle) != OC_OK)
		return 24;
	oc_list_destroy(fresh);
	oc_list_destroy(fork_case->list);
	return oc_reclaim_barrier() == OC_OK ? 0 : 25;
}

static void
test_fork_while_a_reader_is_inside(void)
{
	struct parked_reader parked = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
		false, false };
	struct fork_case fork_case;
	pthread_t thread;

	releases = 0;
	fork_case.list = oc_list_create(release_probe);
	CHECK(oc_list_add(fork_case.list, new_probe(4), &fork_case.handle) == OC_OK);
	CHECK(pthread_create(&thread, NULL, parked_reader_main, &parked) == 0);
	pthread_mutex_lock(&parked.lock);
	while (!parked.inside)
		pthread_cond_wait(&parked.changed, &parked.lock);
	pthread_mutex_unlock(&parked.lock);

	CHECK(run_in_child(wait_for_readers_in_child, &fork_case, 20) == 0);

	pthread_mutex_lock(&parked.lock);
	parked.leave = true;
	pthread_cond_broadcast(&parked.changed);
	pthread_mutex_unlock(&parked.lock);
	pthread_join(thread, NULL);
	CHECK(oc_stats().records_reset_after_fork == 0);
	oc_list_destroy(fork_case.list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(releases == 1);
}

/*
 * Misuse: an unbalanced oc_read_end is ignored and counted, never leaving
 * the thread "in a section"; debug checks report it (and the send-path
 * readers' NULL preconditions, a view outside a section) and abort by
 * default.
 */
static void
test_unbalanced_read_end_and_debug_checks(void)
{
	oc_list_t *list = oc_list_create(NULL);
	oc_keymap_t *map = oc_keymap_create(equal_ints, NULL, NULL);
	oc_list_t *volatile null_list = NULL;
	oc_keymap_t *volatile null_map = NULL;
	uint64_t unbalanced = oc_stats().unbalanced_read_ends;
	uint64_t failures = oc_testing_check_failures();
	int key = 1;
	oc_reader_t *reader;

	oc_testing_set_checks_fatal(false);
	reader = oc_reader_current();
	oc_read_end(reader);
	CHECK(!oc_in_read_section());
	CHECK(oc_synchronize() == OC_OK);
	reader = oc_read_begin();
	oc_read_begin_reader(reader);
	oc_read_end(reader);
	oc_read_end(reader);
	oc_read_end(reader);
	CHECK(!oc_in_read_section());
	CHECK(oc_synchronize() == OC_OK);
	CHECK(oc_stats().unbalanced_read_ends == unbalanced + 2);
	CHECK(oc_testing_check_failures() == failures + 2);

	CHECK(oc_list_is_empty(null_list));
	CHECK(oc_keymap_is_empty(null_map));
	reader = oc_read_begin();
	CHECK(oc_keymap_find(null_map, 1, &key) == NULL);
	CHECK(oc_keymap_find_hash(null_map, 1) == NULL);
	CHECK(oc_keymap_lookup(null_map, 1, &key) == NULL);
	oc_read_end(reader);
	CHECK(oc_testing_check_failures() == failures + 7);
	(void)oc_list_view(list);
	CHECK(oc_keymap_find(map, 1, &key) == NULL);
	CHECK(oc_testing_check_failures() == failures + 9);
	oc_testing_set_checks_fatal(true);

	CHECK(run_in_child(unbalanced_read_end_in_child, NULL, 20) == CHILD_SIGNALLED(SIGABRT));
	CHECK(run_in_child(null_view_in_child, NULL, 20) == CHILD_SIGNALLED(SIGABRT));
	oc_keymap_destroy(map);
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
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

/*
 * Fill one list to OC_LIST_MAX_SLOTS contexts (no release
 * function), remove the last and add it again, clear, destroy, barrier; in
 * a loop (OC_TEST_FULL_LIST_ROUNDS rounds, default 3). A slot array or list
 * that both a retirement and a free could reach is a double free under
 * ASan/memcheck; here the exact count of retired objects released also
 * shows any object retired twice or never. The contexts are tagged pointers
 * nothing dereferences (release NULL).
 */
static void *
tagged_context(uint32_t index)
{
	return (void *)(((uintptr_t)index + 1) * 16);
}

/* Resizes between OC_LIST_MIN_SLOTS and `slots`: halvings down to the minimum. */
static uint64_t
resizes_between_minimum_and(uint32_t slots)
{
	uint64_t resizes = 0;

	while (slots > OC_LIST_MIN_SLOTS) {
		slots /= 2;
		resizes++;
	}
	return resizes;
}

static unsigned long
full_list_rounds(void)
{
	const char *text = getenv("OC_TEST_FULL_LIST_ROUNDS");
	char *end;
	unsigned long rounds;

	if (text == NULL || *text == '\0')
		return 3;
	rounds = strtoul(text, &end, 10);
	if (*end != '\0' || rounds == 0 || rounds > 1000) {
		fprintf(stderr, "OC_TEST_FULL_LIST_ROUNDS: expected 1...1000, got '%s'\n", text);
		exit(2);
	}
	return rounds;
}

static void
test_full_list_clear_destroy_barrier(void)
{
	unsigned long rounds = full_list_rounds();
	unsigned long round;
	const uint32_t slots = OC_LIST_MAX_SLOTS;

	for (round = 0; round < rounds; round++) {
		oc_list_t *list;
		oc_handle_t handle;
		oc_handle_t last = oc_handle_none();
		uint64_t reclaimed_before;
		uint64_t expected;
		uint32_t index;
		bool all_added = true;

		CHECK(oc_reclaim_barrier() == OC_OK);
		CHECK(oc_stats().pending_objects == 0);
		reclaimed_before = oc_stats().reclaimed_objects;
		list = oc_list_create(NULL);
		CHECK(list != NULL);
		if (list == NULL)
			return;
		for (index = 0; index < slots && all_added; index++) {
			all_added = oc_list_add(list, tagged_context(index), &handle) == OC_OK;
			if (all_added && handle.index != index)
				all_added = false;
			last = handle;
		}
		CHECK(all_added);
		CHECK(oc_list_count(list) == slots);
		CHECK(oc_list_capacity(list) == slots);
		CHECK(oc_list_add(list, tagged_context(slots), &handle) == OC_EFULL);
		CHECK(send_count(list) == slots);

		/* The last out and in again: the same (highest) slot. */
		CHECK(oc_list_remove(list, last) == OC_OK);
		CHECK(oc_list_count(list) == slots - 1);
		CHECK(oc_list_add(list, tagged_context(slots - 1), &handle) == OC_OK);
		CHECK(handle.index == slots - 1);
		CHECK(oc_list_add(list, tagged_context(slots), &last) == OC_EFULL);
		CHECK(send_count(list) == slots);

		CHECK(oc_list_clear(list) == slots);
		CHECK(oc_list_count(list) == 0);
		CHECK(oc_list_capacity(list) == OC_LIST_MIN_SLOTS);
		CHECK(send_count(list) == 0);
		oc_list_destroy(list);
		CHECK(oc_reclaim_barrier() == OC_OK);

		/*
		 * Released exactly once each: every context (slots of them, plus
		 * the one removed and added again), each array the growth to
		 * `slots` allocated (the list's first array is part of the list's
		 * allocation, released with it), the one array the clear compacted
		 * into (a clear shrinks once, at its end, straight to the minimum)
		 * and the list itself.
		 */
		expected = (uint64_t)slots + 1 + resizes_between_minimum_and(slots) + 1 + 1;
		CHECK(oc_stats().pending_objects == 0);
		CHECK(oc_stats().reclaimed_objects - reclaimed_before == expected);
		if (oc_stats().reclaimed_objects - reclaimed_before != expected)
			fprintf(stderr, "full list round %lu: released %llu, expected %llu\n", round,
			    (unsigned long long)(oc_stats().reclaimed_objects - reclaimed_before),
			    (unsigned long long)expected);
	}
}

/*
 * How read sections are ordered. With
 * OBSERVER_CORE_MEMBARRIER=0 the core must keep the fence; otherwise, on a
 * Linux kernel that offers the private expedited membarrier (asked here
 * directly), it must use it. Either way membarriers are issued per scan:
 * none for sends while nothing is pending; for subscribe/cancel churn at
 * most one per OC_SCAN_INTERVAL_NS plus one per OC_SCAN_RETIRED_OBJECTS_ALONE
 * retirements (no other thread reads here; or OC_SCAN_RETIRED_BYTES bytes),
 * and at least one per that many + OC_WRITER_POLL_THRESHOLD; one per barrier and
 * per synchronize (ReadSideOrderingTests checks each trigger alone).
 */
static bool
fallback_forced(void)
{
	const char *setting = getenv("OBSERVER_CORE_MEMBARRIER");

	return setting != NULL && strcmp(setting, "0") == 0;
}

static bool
kernel_offers_membarrier(void)
{
#if defined(__linux__)
	long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);

	return commands >= 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0;
#else
	return false;
#endif
}

/* Two windows of the object limit: at least two scans by that trigger. */
#define CHURN_PAIRS ((int)(2 * (OC_SCAN_RETIRED_OBJECTS + OC_WRITER_POLL_THRESHOLD)))

static void
test_read_side_mode_and_membarrier_count(void)
{
	bool membarrier = oc_testing_sections_use_membarrier();
	oc_list_t *list;
	oc_handle_t handle;
	struct timespec start, end;
	uint64_t before, elapsed_ns;
	int i;

	releases = 0;
	list = oc_list_create(release_probe);
	CHECK(membarrier == (!fallback_forced() && kernel_offers_membarrier()));
	printf("oc_core_test: read sections %s\n",
	    membarrier ? "without a fence (writers issue membarrier)" : "with a store-load fence");
	/* The fork tests' children must not print it again. */
	fflush(stdout);
	CHECK(list != NULL);
	CHECK(oc_reclaim_barrier() == OC_OK);

	/* Sends: never a membarrier, also while objects wait for reclamation. */
	CHECK(oc_list_add(list, new_probe(1), &handle) == OC_OK);
	CHECK(oc_list_remove(list, handle) == OC_OK);
	CHECK(oc_list_add(list, new_probe(2), &handle) == OC_OK);
	before = oc_testing_membarriers();
	for (i = 0; i < 100000; i++)
		CHECK(send_once(list) == 1);
	CHECK(oc_testing_membarriers() - before <= 1);

	/* CHURN_PAIRS subscribe/cancel pairs, as many retirements (56 bytes
	 * each, under OC_SCAN_RETIRED_BYTES): scans per interval and per
	 * OC_SCAN_RETIRED_OBJECTS, at least one per that many plus a poll's. */
	before = oc_testing_membarriers();
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < CHURN_PAIRS; i++) {
		oc_handle_t churned;

		CHECK(oc_list_add(list, new_probe(3), &churned) == OC_OK);
		CHECK(oc_list_remove(list, churned) == OC_OK);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	elapsed_ns = (uint64_t)(end.tv_sec - start.tv_sec) * 1000000000u +
	    (uint64_t)end.tv_nsec - (uint64_t)start.tv_nsec;
	if (membarrier) {
		/* No other thread reads: the object limit is the "alone" one. */
		CHECK(oc_testing_membarriers() - before >=
		    CHURN_PAIRS / (OC_SCAN_RETIRED_OBJECTS_ALONE + OC_WRITER_POLL_THRESHOLD));
		CHECK(oc_testing_membarriers() - before <=
		    elapsed_ns / OC_SCAN_INTERVAL_NS + 1 + CHURN_PAIRS / OC_SCAN_RETIRED_OBJECTS_ALONE + 1 + 1);
	} else {
		CHECK(oc_testing_membarriers() == before);
	}

	/* A barrier and a synchronize: one each. */
	before = oc_testing_membarriers();
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(oc_synchronize() == OC_OK);
	CHECK(oc_testing_membarriers() - before == (membarrier ? 2 : 0));
	oc_list_destroy(list);
	CHECK(oc_reclaim_barrier() == OC_OK);
	/* Every probe released exactly once (the tests after count from 0). */
	CHECK(__atomic_load_n(&releases, __ATOMIC_RELAXED) == 2 + CHURN_PAIRS);
	releases = 0;
}

/*
 * Runs this program again with OBSERVER_CORE_MEMBARRIER=0 (fenced read
 * sections, the fallback where membarrier is missing) and one full-list
 * round; true when that run passed. Only from a run that did not force it.
 */
static bool
passes_with_fallback_forced(const char *program)
{
	pid_t child;
	int status = 0;

	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child < 0) {
		perror("fork");
		return false;
	}
	if (child == 0) {
		setenv("OBSERVER_CORE_MEMBARRIER", "0", 1);
		setenv("OC_TEST_FULL_LIST_ROUNDS", "1", 1);
		execl(program, program, (char *)NULL);
		perror("execl");
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * oc_retire: an object retired while another thread is inside a read
 * section is released only after that section ends; the record lives in
 * the object (no allocation, so injected allocation failures do not
 * matter); the release may free the memory holding the record.
 */
struct retired_object {
	uint64_t record[OC_RETIREMENT_BYTES / sizeof(uint64_t)];
	int value;
};

static unsigned long retired_releases;  /* atomic */
static pthread_mutex_t reader_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reader_changed = PTHREAD_COND_INITIALIZER;
static int reader_inside;               /* guarded by reader_lock */
static int reader_may_leave;            /* guarded by reader_lock */

/* Sets *flag and wakes the threads waiting for it. */
static void
set_reader_flag(int *flag)
{
	pthread_mutex_lock(&reader_lock);
	*flag = 1;
	pthread_cond_broadcast(&reader_changed);
	pthread_mutex_unlock(&reader_lock);
}

/* Waits until *flag is set, 10 s at most; returns whether it was. */
static int
wait_for_reader_flag(int *flag)
{
	struct timespec deadline;
	int set;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	pthread_mutex_lock(&reader_lock);
	while (!*flag
	    && pthread_cond_timedwait(&reader_changed, &reader_lock, &deadline) == 0)
		;
	set = *flag;
	pthread_mutex_unlock(&reader_lock);
	return set;
}

static void
release_retired_object(void *context)
{
	struct retired_object *object = context;

	CHECK(object->value == 7);
	free(object);
	__atomic_fetch_add(&retired_releases, 1, __ATOMIC_SEQ_CST);
}

static void *
parked_reader(void *unused)
{
	oc_reader_t *reader = oc_read_begin();

	(void)unused;
	set_reader_flag(&reader_inside);
	CHECK(wait_for_reader_flag(&reader_may_leave));
	oc_read_end(reader);
	return NULL;
}

static void
test_retire_in_place(void)
{
	pthread_t reader;
	struct retired_object *object = malloc(sizeof *object);
	uint64_t pending = oc_stats().pending_objects;
	int polls;

	CHECK(object != NULL);
	object->value = 7;
	retired_releases = 0;
	reader_inside = 0;
	reader_may_leave = 0;
	CHECK(pthread_create(&reader, NULL, parked_reader, NULL) == 0);
	CHECK(wait_for_reader_flag(&reader_inside));
	oc_debug_fail_allocations(1000);
	oc_retire(object->record, release_retired_object, object, sizeof *object);
	oc_debug_fail_allocations(0);
	CHECK(oc_stats().pending_objects == pending + 1);
	for (polls = 0; polls < 100; polls++)
		oc_reclaim_poll();
	CHECK(__atomic_load_n(&retired_releases, __ATOMIC_SEQ_CST) == 0);
	set_reader_flag(&reader_may_leave);
	CHECK(pthread_join(reader, NULL) == 0);
	CHECK(oc_reclaim_barrier() == OC_OK);
	CHECK(retired_releases == 1);
}

int
main(int argc, char **argv)
{
	(void)argc;
	test_read_side_mode_and_membarrier_count();
	test_concurrent_adds_sends_removes();
	test_contended_writer_lock();
	test_contended_keymap_lock();
	test_exact_delivery_counts();
	test_remove_if_and_try_remove();
	test_bad_input();
	test_allocation_failures();
	test_thread_records_are_recycled();
	test_full_list_clear_destroy_barrier();
	test_handles_never_repeat();
	test_sequence_exhaustion();
	test_fork_while_a_reader_is_inside();
	test_unbalanced_read_end_and_debug_checks();
	test_retire_in_place();
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
	if (!fallback_forced()) {
		if (!passes_with_fallback_forced(argv[0])) {
			fprintf(stderr, "oc_core_test: the run with OBSERVER_CORE_MEMBARRIER=0 failed\n");
			return 1;
		}
		printf("oc_core_test: all checks passed again with OBSERVER_CORE_MEMBARRIER=0\n");
	}
	return 0;
}
