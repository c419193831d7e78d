/*
 * The reclamation domain: one ck_epoch for the whole process, one epoch
 * record per reading thread (thread-local, recycled at thread exit), and the
 * retire/poll/barrier machinery that releases memory after grace periods.
 *
 * Why one domain: a record per (thread, list) would multiply records by the
 * number of lists (a keyed source may hold a million), and ck_epoch's grace
 * period detection scans every record.
 *
 * Retirement is split in two so that no reader ever blocks on reclamation:
 *   - oc__retire pushes onto `incoming`, a lock-free multi-producer stack
 *     (C11 atomics, so ThreadSanitizer sees the hand-off). Writers call it,
 *     also from inside observer callbacks (inside read sections).
 *   - Whoever holds `reclaim_lock` (pollers take it with trylock, the barrier
 *     and oc_synchronize block on it) moves `incoming` onto the reclaim record with
 *     ck_epoch_call and lets ck_epoch decide what is ready. Ready objects are
 *     collected under the lock and released after it is dropped, because a
 *     release may run a Swift deinit that calls back into the core.
 * The barrier and oc_synchronize hold `reclaim_lock` while they wait for a
 * grace period: no thread inside a read section ever blocks on that lock, so
 * they cannot wait for their own readers.
 *
 * ck_epoch_call is made only by the holder of `reclaim_lock`, on a record
 * that is never unregistered: ck_epoch_unregister drops a record's pending
 * callbacks (Concurrency Kit 0.7.1), so nothing is ever deferred onto a
 * thread's record.
 *
 * fork(): a pthread_atfork child handler (oc_atfork_child) unregisters the
 * records of every thread but the forking one, so that a section another
 * thread was in at the fork does not block grace periods in the child.
 *
 * membarrier (Linux, oc_membarrier.c): when sections are unfenced, every
 * holder of `reclaim_lock` issues one after handing retirements to ck_epoch
 * and before ck_epoch scans the records (oc__membarrier_before_scan): once
 * per scan or grace-period wait, never per send or per retirement. Polls scan
 * only when the scan policy says so (oc_scan_due_locked: an interval since
 * the latest scan, or enough retired since it), because each membarrier
 * interrupts the senders' CPUs; a poll that does not scan hands its
 * retirements to ck_epoch and releases what is already ready. Every scan
 * that can advance the epoch or release anything runs under `reclaim_lock`
 * (oc_synchronize takes it too), so each such scan follows a membarrier
 * issued after every retirement already handed to ck_epoch; the argument is
 * in oc_epoch.h (oc__section_enter) and the MemoryOrdering article.
 */
#include "oc_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__thread struct oc_thread *oc__current_thread;

/*
 * Objects the calling thread has retired. oc_reclaim_barrier compares it
 * before and after releasing: a released context may hold the last
 * reference to another list, whose destruction retires more on this thread.
 */
static __thread uint64_t oc_retired_on_thread;

/*
 * ThreadSanitizer annotations (compiled only under TSan; see the comment at
 * OC__TSAN_ANNOTATIONS in oc_epoch.h). The real happens-before edges
 * live in Concurrency Kit's inline assembly and libck.so, which TSan cannot
 * see; these calls restate them on addresses TSan tracks:
 *
 *  - Grace period: a reader's section exit releases `oc_tsan_grace_period`
 *    (oc__tsan_reader_exit, before ck_epoch_end). After ck_epoch_poll or
 *    ck_epoch_synchronize_wait has observed every record quiescent, the
 *    reclaimer acquires it, so the reader's accesses to a box or slot array
 *    happen before its release. (TSan's clock is coarser than the real edge:
 *    it also orders exits of sections that ended after the scan; those
 *    sections started after the retirement and cannot see what is freed.)
 *  - Record recycling: an exiting thread's last use of its oc_thread
 *    happens before ck_epoch_unregister publishes the record as free, which
 *    happens before ck_epoch_recycle hands it to a new thread.
 */
#if defined(OC__TSAN_ANNOTATIONS)
static char oc_tsan_grace_period;
#endif

/*
 * oc__tsan_reader_exit: called by oc_read_end in TSan builds just before the
 * section ends; a no-op otherwise (kept so that any mix of instrumented and
 * uninstrumented objects links). Any thread, inside a section.
 */
void
oc__tsan_reader_exit(void)
{
#if defined(OC__TSAN_ANNOTATIONS)
	OC_TSAN_RELEASE(&oc_tsan_grace_period);
#endif
}

/* After a grace period: see the annotation comment above. */
static inline void
oc_tsan_grace_period_ended(void)
{
#if defined(OC__TSAN_ANNOTATIONS)
	OC_TSAN_ACQUIRE(&oc_tsan_grace_period);
#endif
}

static ck_epoch_t oc_epoch;
static pthread_once_t oc_once = PTHREAD_ONCE_INIT;
static pthread_key_t oc_thread_key;

/*
 * Serializes ck_epoch_call / poll / reclaim on the reclaim record and every
 * grace-period wait: every scan of the epoch records that can advance the
 * epoch happens under it.
 */
static pthread_mutex_t oc_reclaim_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under oc_reclaim_lock. */
static struct oc_thread *oc_reclaim_thread;
static struct oc_retired *oc_ready;
/*
 * The scan policy's state (see oc_scan_due_locked), under oc_reclaim_lock:
 * when the latest scan ran (CLOCK_MONOTONIC, ns), and the objects and core
 * bytes handed to ck_epoch since it. The limits are OC_SCAN_* unless a test
 * changed them (oc_testing_set_scan_policy, also under the lock).
 */
static uint64_t oc_last_scan_ns;
static uint64_t oc_deferred_objects_since_scan;
static uint64_t oc_deferred_bytes_since_scan;
static uint64_t oc_scan_interval_ns = OC_SCAN_INTERVAL_NS;
static uint64_t oc_scan_retired_objects = OC_SCAN_RETIRED_OBJECTS;
static uint64_t oc_scan_retired_objects_alone = OC_SCAN_RETIRED_OBJECTS_ALONE;
/* Whether a poll since the latest scan saw another thread in a section. */
static bool oc_other_reader_seen_since_scan;
static uint64_t oc_scan_retired_bytes = OC_SCAN_RETIRED_BYTES;

/*
 * Lock-free stack of retired objects not yet handed to ck_epoch. Push:
 * compare-exchange with release, so the object's fields written before the
 * push are visible to the thread that takes the stack. Take: exchange with
 * acquire (pairs with those releases). Only whole-stack takes happen, so
 * there is no ABA problem. On x86 every locked read-modify-write is a full
 * barrier, so the orderings cost nothing extra; on ARM they are the
 * release/acquire forms of the exchange (`casl`/`swpa` or ldaxr/stlxr
 * loops), required there: a relaxed push could publish an object before
 * its `release` and `bytes` fields are written.
 */
static struct oc_retired *oc_incoming;

/*
 * Objects handed to ck_epoch (or ready) and not yet taken for release:
 * written only under oc_reclaim_lock (relaxed stores), loaded relaxed by
 * oc_reclaim_poll_up_to to return early when nothing is pending.
 */
static uint64_t oc_held_objects;
/* Writer polls so far; relaxed: senders only compare it with what they saw. */
static uint64_t oc_writer_poll_count;

/* ck_epoch's `state` of a registered record, read after registering one. */
static unsigned int oc_record_state_used;

/* The epoch record that `entry`, a link of the domain's record stack, is in. */
static inline ck_epoch_record_t *
oc_record_of_entry(ck_stack_entry_t *entry)
{
	return (ck_epoch_record_t *)(void *)((char *)entry - offsetof(ck_epoch_record_t,
	    record_next));
}

static inline void oc_ensure_initialized(void);

/*
 * A zeroed, cache-line-aligned epoch record for a thread; aborts when none
 * can be allocated (the thread cannot send without one).
 */
static struct oc_thread *
oc_thread_allocate(void)
{
	void *memory = NULL;

	oc__check_call("allocating an epoch record",
	    posix_memalign(&memory, CK_MD_CACHELINE, sizeof(struct oc_thread)));
	memset(memory, 0, sizeof(struct oc_thread));
	__atomic_fetch_add(&oc__stat_records, 1, __ATOMIC_RELAXED);
	return memory;
}

/* Thread-exit destructor: the record goes back to ck_epoch for recycling. */
static void
oc_thread_detach(void *value)
{
	struct oc_thread *thread = value;

	oc__current_thread = NULL;
	OC_TSAN_RELEASE(thread);
	ck_epoch_unregister(&thread->record);
}

bool
oc_testing_sections_use_membarrier(void)
{
	oc_ensure_initialized();
#if OC__MEMBARRIER_POSSIBLE
	return __atomic_load_n(&oc__membarrier_active, __ATOMIC_RELAXED);
#else
	return false;
#endif
}

oc_scan_policy_t
oc_testing_set_scan_policy(oc_scan_policy_t policy)
{
	oc_scan_policy_t previous;

	oc_ensure_initialized();
	pthread_mutex_lock(&oc_reclaim_lock);
	previous.interval_ns = oc_scan_interval_ns;
	previous.retired_objects = oc_scan_retired_objects;
	previous.retired_objects_alone = oc_scan_retired_objects_alone;
	previous.retired_bytes = oc_scan_retired_bytes;
	oc_scan_interval_ns = policy.interval_ns;
	oc_scan_retired_objects = policy.retired_objects;
	oc_scan_retired_objects_alone = policy.retired_objects_alone;
	oc_scan_retired_bytes = policy.retired_bytes;
	pthread_mutex_unlock(&oc_reclaim_lock);
	return previous;
}

/*
 * In the child of fork(), where only the forking thread exists: every
 * other thread's record is unregistered (it may be marked active forever
 * otherwise, and no destructor will ever recycle it), and the core's locks,
 * which a thread that does not exist here may have held, are reinitialized.
 * What such a thread was doing under oc_reclaim_lock is lost: at worst some
 * retired objects are never released in the child (a leak, never a release
 * too early). Nothing is deferred onto thread records, so unregistering
 * drops no callback. Runs single-threaded; plain memory writes only.
 */
static void
oc_atfork_child(void)
{
	ck_stack_entry_t *cursor;

	pthread_mutex_init(&oc_reclaim_lock, NULL);
	oc__membarrier_after_fork();
	CK_STACK_FOREACH(&oc_epoch.records, cursor) {
		ck_epoch_record_t *record = oc_record_of_entry(cursor);
		struct oc_thread *thread = (struct oc_thread *)(void *)record;

		if (thread == oc_reclaim_thread || thread == oc__current_thread)
			continue;
		if (record->state != oc_record_state_used)
			continue;
		ck_epoch_unregister(record);
		oc__stat_records_reset_after_fork++;
	}
}

/*
 * pthread_once routine: membarrier registration, the global epoch, the
 * thread key whose destructor unregisters an exited thread's record, the
 * reclaimer's record, and the fork handler.
 */
static void
oc_initialize(void)
{
	oc__membarrier_initialize();
	ck_epoch_init(&oc_epoch);
	oc__check_call("pthread_key_create", pthread_key_create(&oc_thread_key, oc_thread_detach));
	oc_reclaim_thread = oc_thread_allocate();
	ck_epoch_register(&oc_epoch, &oc_reclaim_thread->record, NULL);
	oc_record_state_used = oc_reclaim_thread->record.state;
	oc__check_call("pthread_atfork", pthread_atfork(NULL, NULL, oc_atfork_child));
}

/* Runs oc_initialize once per process, before any record is made. */
static inline void
oc_ensure_initialized(void)
{
	oc__check_call("pthread_once", pthread_once(&oc_once, oc_initialize));
}

struct oc_thread *
oc__thread_attach(void)
{
	struct oc_thread *thread;
	ck_epoch_record_t *recycled;

	oc_ensure_initialized();
	/* A record unregistered by an exited thread; its oc_thread is ours. */
	recycled = ck_epoch_recycle(&oc_epoch, NULL);
	if (recycled != NULL) {
		thread = (struct oc_thread *)(void *)recycled;
		OC_TSAN_ACQUIRE(thread);
	} else {
		thread = oc_thread_allocate();
		ck_epoch_register(&oc_epoch, &thread->record, NULL);
	}
	thread->poll_countdown = OC_READER_POLL_INTERVAL;
	oc__check_call("pthread_setspecific", pthread_setspecific(oc_thread_key, thread));
	oc__current_thread = thread;
	return thread;
}

oc_reader_t *
oc_read_begin_outlined(void)
{
	return oc_read_begin();
}

void
oc_read_end_outlined(oc_reader_t *reader)
{
	oc_read_end(reader);
}

bool
oc_in_read_section_outlined(void)
{
	return oc_in_read_section();
}

oc_reader_t *
oc_reader_current_outlined(void)
{
	return oc_reader_current();
}

void
oc_read_begin_reader_outlined(oc_reader_t *reader)
{
	oc_read_begin_reader(reader);
}

static void oc_reclaim_poll_up_to(size_t limit);

void
oc__reader_poll(struct oc_thread *thread)
{
	uint64_t writer_polls = __atomic_load_n(&oc_writer_poll_count, __ATOMIC_RELAXED);

	thread->poll_countdown = OC_READER_POLL_INTERVAL;
	/*
	 * Reclaiming is writers' work while writers are active: a churning
	 * writer can retire hundreds of objects between two reader polls, and
	 * deferring, dispatching and releasing them in a send shows as a
	 * latency spike in that send. So a sender polls only when no writer
	 * polled since its own last poll (writers went quiet and left a
	 * backlog behind), and then releases only a few objects.
	 */
	if (writer_polls != thread->seen_writer_polls) {
		thread->seen_writer_polls = writer_polls;
		return;
	}
	oc_reclaim_poll_up_to(OC_READER_RELEASE_LIMIT);
}

void
oc__retire(struct oc_retired *retired, void (*release)(struct oc_retired *),
    size_t bytes)
{
	struct oc_retired *top;
	struct oc_thread_counters *counters = oc__counters();

	retired->release = release;
	retired->bytes = bytes;
	oc_retired_on_thread++;
	/* Counted before the push below, whose release publishes the count too. */
	oc__counter_add(&counters->retired, 1);
	oc__counter_add(&counters->retired_bytes, bytes);

	top = __atomic_load_n(&oc_incoming, __ATOMIC_RELAXED);
	do {
		retired->next_ready = top;
	} while (!__atomic_compare_exchange_n(&oc_incoming, &top, retired, true,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* The bookkeeping oc_retire keeps in the caller's record. */
struct oc_retired_in_place {
	struct oc_retired retired;
	void (*release)(void *context);
	void *context;
};

_Static_assert(sizeof(struct oc_retired_in_place) <= OC_RETIREMENT_BYTES,
    "OC_RETIREMENT_BYTES holds oc_retire's bookkeeping");

/*
 * Retirement callback of oc_retire: calls the caller's release function with
 * its context.
 */
static void
oc_release_in_place(struct oc_retired *retired)
{
	struct oc_retired_in_place *item = (struct oc_retired_in_place *)(void *)retired;

	/* The last use of the record: `release` may free it. */
	item->release(item->context);
}

void
oc_retire(void *record, void (*release)(void *context), void *context,
    size_t bytes)
{
	struct oc_retired_in_place *item = record;

	item->release = release;
	item->context = context;
	oc__retire(&item->retired, oc_release_in_place, bytes);
	oc__writer_poll();
}

/* ck_epoch callback, run under oc_reclaim_lock: the object is safe now. */
static void
oc_make_ready(ck_epoch_entry_t *entry)
{
	struct oc_retired *retired = (struct oc_retired *)(void *)
	    ((char *)entry - offsetof(struct oc_retired, epoch_entry));

	retired->next_ready = oc_ready;
	oc_ready = retired;
}

/* Under oc_reclaim_lock: hands every incoming object to ck_epoch. */
static void
oc_defer_incoming_locked(void)
{
	/* Acquire: pairs with oc__retire's release push, so each object's
	 * fields (release, bytes, next_ready) are read as its retirer wrote
	 * them. */
	struct oc_retired *retired = __atomic_exchange_n(&oc_incoming, NULL,
	    __ATOMIC_ACQUIRE);
	uint64_t deferred = 0;

	while (retired != NULL) {
		struct oc_retired *next = retired->next_ready;

		deferred++;
		oc_deferred_objects_since_scan++;
		oc_deferred_bytes_since_scan += retired->bytes;
		ck_epoch_call(&oc_reclaim_thread->record, &retired->epoch_entry,
		    oc_make_ready);
		retired = next;
	}
	__atomic_store_n(&oc_held_objects, oc_held_objects + deferred, __ATOMIC_RELAXED);
}

#if OC__MEMBARRIER_POSSIBLE
/* CLOCK_MONOTONIC in nanoseconds. */
static uint64_t
oc_monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}
#endif

#if OC__MEMBARRIER_POSSIBLE
/*
 * Under oc_reclaim_lock: whether another thread is inside a read section
 * now, by a relaxed look at every record's "active" (the records are never
 * freed, so reading them is safe at any time). A heuristic for the scan
 * policy only: a stale value picks the other object limit, it never makes
 * a release early (every scan still follows its own membarrier).
 */
static bool
oc_other_reader_active_locked(void)
{
	ck_stack_entry_t *cursor;

	CK_STACK_FOREACH(&oc_epoch.records, cursor) {
		ck_epoch_record_t *record = oc_record_of_entry(cursor);
		struct oc_thread *thread = (struct oc_thread *)(void *)record;

		if (thread == oc_reclaim_thread || thread == oc__current_thread)
			continue;
		if (ck_pr_load_uint(&record->active) != 0)
			return true;
	}
	return false;
}
#endif

/*
 * Under oc_reclaim_lock, after oc_defer_incoming_locked: whether this poll
 * scans the epoch records. With fenced sections a scan costs a walk over
 * the records only, and every poll scans. Where sections rely on the
 * reclaimer's membarrier, a scan interrupts every CPU running one of our
 * threads (~9 us of a sender's time on a VM, for each one), so a poll
 * scans only when one of these holds:
 *  - OC_SCAN_INTERVAL_NS or more have passed since the latest scan;
 *  - OC_SCAN_RETIRED_BYTES or more bytes of core memory were handed to
 *    ck_epoch since then;
 *  - OC_SCAN_RETIRED_OBJECTS or more objects were, or only
 *    OC_SCAN_RETIRED_OBJECTS_ALONE if no poll since the latest scan saw
 *    another thread inside a read section. Alone, the membarrier interrupts
 *    nobody, and releasing soon keeps a churning writer's memory in its
 *    caches (a retirement window of 16 384 made a single thread's
 *    subscribe/cancel pair 30-40 % slower than one of 1024).
 * Skipping a scan is always safe: nothing is released without one, and the
 * next scan is preceded by its own membarrier (oc_membarrier_before_scan).
 * The grace periods of what a skipped poll deferred complete at a later
 * scan. Bounds (the MemoryOrdering article, "When the reclaimer scans"): at
 * most one polling membarrier per interval plus one per object or byte
 * limit's worth of retirements; and, while readers leave their sections,
 * what a scan leaves pending was deferred since the scan before it
 * (ck_epoch releases a bucket once the epoch has advanced past it), so
 * pending retirements stay below two windows of the object and byte limits
 * plus what writers retire between two polls.
 */
static bool
oc_scan_due_locked(void)
{
#if OC__MEMBARRIER_POSSIBLE
	uint64_t object_limit;

	if (!oc__membarrier_active)
		return true;
	if (!oc_other_reader_seen_since_scan && oc_other_reader_active_locked())
		oc_other_reader_seen_since_scan = true;
	object_limit = oc_other_reader_seen_since_scan ? oc_scan_retired_objects :
	    oc_scan_retired_objects_alone;
	if (oc_deferred_objects_since_scan >= object_limit ||
	    oc_deferred_bytes_since_scan >= oc_scan_retired_bytes)
		return true;
	return oc_monotonic_ns() - oc_last_scan_ns >= oc_scan_interval_ns;
#else
	return true;
#endif
}

/* Under oc_reclaim_lock: a scan (poll or grace-period wait) starts now. */
static void
oc_note_scan_locked(void)
{
#if OC__MEMBARRIER_POSSIBLE
	if (oc__membarrier_active)
		oc_last_scan_ns = oc_monotonic_ns();
	oc_other_reader_seen_since_scan = false;
#endif
	oc_deferred_objects_since_scan = 0;
	oc_deferred_bytes_since_scan = 0;
}

/* Under oc_reclaim_lock: takes the ready list. */
static struct oc_retired *
oc_take_ready_locked(size_t limit)
{
	struct oc_retired *ready = oc_ready;
	struct oc_retired *last = ready;
	size_t taken = 1;

	if (ready == NULL)
		return NULL;
	while (taken < limit && last->next_ready != NULL) {
		last = last->next_ready;
		taken++;
	}
	/* What is left stays ready for the next poller or writer. */
	oc_ready = last->next_ready;
	last->next_ready = NULL;
	__atomic_store_n(&oc_held_objects, oc_held_objects - taken, __ATOMIC_RELAXED);
	return ready;
}

/* Outside every lock: releases what is ready. */
static void
oc_release_ready(struct oc_retired *retired)
{
	uint64_t released = 0;
	uint64_t released_bytes = 0;

	while (retired != NULL) {
		struct oc_retired *next = retired->next_ready;

		released_bytes += retired->bytes;
		released++;
		retired->release(retired);
		retired = next;
	}
	/* Once per batch, not per object: two read-modify-writes per poll. */
	if (released != 0) {
		__atomic_fetch_add(&oc__stat_reclaimed_bytes, released_bytes, __ATOMIC_RELEASE);
		__atomic_fetch_add(&oc__stat_reclaimed, released, __ATOMIC_RELEASE);
	}
}

/*
 * Polls and releases at most `limit` ready objects on the calling thread.
 * Non-blocking (trylock).
 */
static void
oc_reclaim_poll_up_to(size_t limit)
{
	struct oc_retired *ready;

	/* Nothing retired and not yet released: no lock, no scan. */
	if (__atomic_load_n(&oc_incoming, __ATOMIC_RELAXED) == NULL &&
	    __atomic_load_n(&oc_held_objects, __ATOMIC_RELAXED) == 0)
		return;
	oc_ensure_initialized();
	if (pthread_mutex_trylock(&oc_reclaim_lock) != 0)
		return;
	/*
	 * A sender's poll (a small limit) releases objects already ready
	 * first, and needs no epoch work, nor a membarrier, until they are
	 * gone. Writers' polls (no limit) always hand over, and scan when the
	 * policy says so (oc_scan_due_locked).
	 */
	if (oc_ready == NULL || limit == SIZE_MAX) {
		oc_defer_incoming_locked();
		if (oc_scan_due_locked()) {
			oc_note_scan_locked();
			oc__membarrier_before_scan();
			ck_epoch_poll(&oc_reclaim_thread->record);
		}
	}
	ready = oc_take_ready_locked(limit);
	if (ready != NULL)
		oc_tsan_grace_period_ended();
	pthread_mutex_unlock(&oc_reclaim_lock);
	oc_release_ready(ready);
}

void
oc_reclaim_poll(void)
{
	oc_reclaim_poll_up_to(SIZE_MAX);
}

void
oc__writer_poll_now(struct oc_thread_counters *counters)
{
	counters->retired_at_poll = counters->retired;
	__atomic_fetch_add(&oc_writer_poll_count, 1, __ATOMIC_RELAXED);
	oc_reclaim_poll();
}

/*
 * Caller holds oc_reclaim_lock (and no other core lock) and is outside
 * every read section. ck_epoch_synchronize_wait scans and advances the
 * epoch repeatedly after the one membarrier: every retirement handed to
 * ck_epoch so far was handed before it (only the lock holder hands them
 * over, and it does not while it waits), which is what the argument in
 * oc__section_enter needs.
 */
static void
oc_wait_for_grace_period_locked(void)
{
	oc_note_scan_locked();
	oc__membarrier_before_scan();
	ck_epoch_synchronize_wait(&oc_epoch, NULL, NULL);
	oc_tsan_grace_period_ended();
}

oc_status_t
oc_synchronize(void)
{
	if (oc_in_read_section())
		return OC_EINSECTION;
	oc_ensure_initialized();
	/*
	 * No thread inside a read section ever blocks on reclaim_lock (pollers
	 * try-lock it), so waiting for readers while holding it cannot wait
	 * for ourselves.
	 */
	pthread_mutex_lock(&oc_reclaim_lock);
	oc_wait_for_grace_period_locked();
	pthread_mutex_unlock(&oc_reclaim_lock);
	return OC_OK;
}

oc_status_t
oc_reclaim_barrier(void)
{
	struct oc_retired *ready;
	uint64_t retired_before;

	if (oc_in_read_section())
		return OC_EINSECTION;
	oc_ensure_initialized();
	/*
	 * Rounds until releasing retires nothing more on this thread: what a
	 * released context retires in turn (the last reference to another list)
	 * is released by the same call. Other threads' retirements during the
	 * call do not add rounds.
	 */
	do {
		retired_before = oc_retired_on_thread;
		pthread_mutex_lock(&oc_reclaim_lock);
		oc_defer_incoming_locked();
		/*
		 * Everything pending on the reclaim record was deferred before this
		 * grace period began (only the lock holder defers), so reclaiming all
		 * of it afterwards is safe: ck_epoch_reclaim itself checks nothing.
		 */
		oc_wait_for_grace_period_locked();
		ck_epoch_reclaim(&oc_reclaim_thread->record);
		ready = oc_take_ready_locked(SIZE_MAX);
		pthread_mutex_unlock(&oc_reclaim_lock);
		oc_release_ready(ready);
	} while (oc_retired_on_thread != retired_before);
	oc__free_spare_records();
	return OC_OK;
}
