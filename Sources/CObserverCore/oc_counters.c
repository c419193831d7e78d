/*
 * Per-thread counters (struct oc_thread_counters in oc_internal.h): each
 * thread counts its own adds, removals and retirements in a block of its
 * own; oc__counters_sum adds the blocks up for oc_stats.
 */
#include "oc_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/* The per-thread counter blocks (see struct oc_thread_counters). */
static struct oc_thread_counters *oc_counter_blocks;
__thread struct oc_thread_counters *oc__own_counters;
static pthread_once_t oc_counters_once = PTHREAD_ONCE_INIT;
static pthread_key_t oc_counters_key;

/*
 * Thread-exit destructor of the counter block: hands it back for adoption.
 * Release: the owner's last counts happen before a later adopter's.
 */
static void
oc_counters_detach(void *value)
{
	struct oc_thread_counters *counters = value;

	oc__own_counters = NULL;
	__atomic_store_n(&counters->in_use, false, __ATOMIC_RELEASE);
}

/* pthread_once routine: the key whose destructor hands a block back. */
static void
oc_counters_make_key(void)
{
	oc__check_call("pthread_key_create", pthread_key_create(&oc_counters_key, oc_counters_detach));
}

/*
 * oc__counters_attach: the calling thread's block, adopted from an exited
 * thread or made; registered for hand-back at thread exit. Aborts when no
 * block can be made (out of memory): counting cannot fail later.
 */
struct oc_thread_counters *
oc__counters_attach(void)
{
	struct oc_thread_counters *counters;
	struct oc_thread_counters *top;

	oc__check_call("pthread_once", pthread_once(&oc_counters_once, oc_counters_make_key));
	/* A block of an exited thread, taken by compare-exchange (acquire). */
	for (counters = __atomic_load_n(&oc_counter_blocks, __ATOMIC_ACQUIRE);
	    counters != NULL; counters = counters->next) {
		bool free_block = false;

		if (!__atomic_load_n(&counters->in_use, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&counters->in_use, &free_block, true, false,
		    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	if (counters == NULL) {
		counters = calloc(1, sizeof *counters);
		if (counters == NULL)
			oc__fatal("allocating thread counters", ENOMEM);
		counters->in_use = true;
		/* Release: the block's fields before it is reachable. */
		top = __atomic_load_n(&oc_counter_blocks, __ATOMIC_RELAXED);
		do {
			counters->next = top;
		} while (!__atomic_compare_exchange_n(&oc_counter_blocks, &top, counters, true,
		    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	}
	/* A thread that adopts starts its poll trigger from the block's count. */
	counters->retired_at_poll = counters->retired;
	oc__check_call("pthread_setspecific", pthread_setspecific(oc_counters_key, counters));
	oc__own_counters = counters;
	return counters;
}

/*
 * oc__counters_sum: every block's counts added up (wrapping), into `sum`'s
 * live, retired and retired_bytes. Any thread; relaxed loads of counts
 * their owners may be writing.
 */
void
oc__counters_sum(struct oc_thread_counters *sum)
{
	struct oc_thread_counters *block;

	sum->live = 0;
	sum->retired = 0;
	sum->retired_bytes = 0;
	/* Acquire: a pushed block's `next` was written before its push. */
	for (block = __atomic_load_n(&oc_counter_blocks, __ATOMIC_ACQUIRE); block != NULL;
	    block = block->next) {
		sum->live += __atomic_load_n(&block->live, __ATOMIC_RELAXED);
		sum->retired += __atomic_load_n(&block->retired, __ATOMIC_RELAXED);
		sum->retired_bytes += __atomic_load_n(&block->retired_bytes, __ATOMIC_RELAXED);
	}
}
