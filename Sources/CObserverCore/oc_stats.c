/*
 * Statistics (oc_stats in include/oc_list.h): the process-wide counts the
 * other files add to (declared in oc_internal.h), and the per-thread
 * counters' sums. Relaxed atomics unless said otherwise: they order
 * nothing, they only count.
 */
#include "oc_internal.h"

/*
 * Released objects and their bytes: added once per released batch
 * (oc_release_ready in oc_epoch.c). Release, pairing with oc_stats' acquire
 * loads: a stats reader that sees a release also sees the retiring
 * thread's count of it (its per-thread count was stored before the object
 * was pushed with release, taken with acquire and released), so pending
 * never reads negative.
 */
uint64_t oc__stat_reclaimed;
uint64_t oc__stat_reclaimed_bytes;
/* Epoch records allocated, and records reset in a fork child. */
uint64_t oc__stat_records;
uint64_t oc__stat_records_reset_after_fork;
static uint64_t oc_stat_leaked;
static uint64_t oc_stat_unbalanced_read_ends;

/* oc__read_end_unbalanced: counts an oc_read_end with no section open. */
void
oc__read_end_unbalanced(struct oc_thread *thread)
{
	(void)thread;
	__atomic_fetch_add(&oc_stat_unbalanced_read_ends, 1, __ATOMIC_RELAXED);
}

/* oc__count_leaked_context: counts a context leaked on purpose. */
void
oc__count_leaked_context(void)
{
	__atomic_fetch_add(&oc_stat_leaked, 1, __ATOMIC_RELAXED);
}

/*
 * oc_stats: a snapshot of the counts; any thread, never blocks. Counts
 * taken while others change them may be a few apart from one another.
 */
oc_stats_t
oc_stats(void)
{
	oc_stats_t stats;
	struct oc_thread_counters sum;
	/* Acquire, before the per-thread counts (see oc__stat_reclaimed). */
	uint64_t reclaimed = __atomic_load_n(&oc__stat_reclaimed, __ATOMIC_ACQUIRE);
	uint64_t reclaimed_bytes = __atomic_load_n(&oc__stat_reclaimed_bytes, __ATOMIC_ACQUIRE);

	oc__counters_sum(&sum);
	/*
	 * A removal counted on one thread and its add on another may be read
	 * in either order while they run: a negative sum reads as 0.
	 */
	stats.live_contexts = (int64_t)sum.live < 0 ? 0 : sum.live;
	stats.pending_objects = sum.retired >= reclaimed ? sum.retired - reclaimed : 0;
	stats.pending_bytes = sum.retired_bytes >= reclaimed_bytes ?
	    sum.retired_bytes - reclaimed_bytes : 0;
	stats.reclaimed_objects = reclaimed;
	stats.epoch_records = __atomic_load_n(&oc__stat_records, __ATOMIC_RELAXED);
	stats.leaked_contexts = __atomic_load_n(&oc_stat_leaked, __ATOMIC_RELAXED);
	stats.unbalanced_read_ends = __atomic_load_n(&oc_stat_unbalanced_read_ends,
	    __ATOMIC_RELAXED);
	stats.records_reset_after_fork = __atomic_load_n(&oc__stat_records_reset_after_fork,
	    __ATOMIC_RELAXED);
	return stats;
}
