/*
 * Internals shared by the core's .c files, one primitive per file:
 *   oc_alloc.c          allocation with failure injection
 *   oc_checks.c         fatal errors and the debug consistency checks
 *   oc_word_lock.c      the writers' lock's slow paths
 *   oc_membarrier.c     the reclaimer's membarrier (Linux)
 *   oc_counters.c       per-thread counters
 *   oc_stats.c          statistics (oc_stats)
 *   oc_status.c         status strings
 *   oc_spare_records.c  spare retirement records of removed contexts
 *   oc_epoch.c          read sections' records and reclamation
 *   oc_list.c           observer lists
 *   oc_keymap.c         keyed maps of lists
 * A file calls only files listed above it (.ci/check-c-core-layering
 * checks that no two files call each other, directly or through others).
 */
#ifndef OC_INTERNAL_H
#define OC_INTERNAL_H

/*
 * Feature-test macros, before any system header (every .c file includes
 * this header first): glibc's futex and membarrier syscalls need
 * _GNU_SOURCE; elsewhere POSIX.1-2008 is enough.
 */
#if defined(__linux__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#elif !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "CObserverCore.h"
#include "oc_testing.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * ThreadSanitizer annotations for happens-before edges TSan cannot see
 * (Concurrency Kit's inline-assembly stores and fences). No-ops outside
 * TSan builds.
 */
#if defined(OC__TSAN_ANNOTATIONS)
void __tsan_acquire(void *address);
void __tsan_release(void *address);
#define OC_TSAN_ACQUIRE(address) __tsan_acquire((void *)(uintptr_t)(address))
#define OC_TSAN_RELEASE(address) __tsan_release((void *)(uintptr_t)(address))
#else
#define OC_TSAN_ACQUIRE(address) ((void)(address))
#define OC_TSAN_RELEASE(address) ((void)(address))
#endif

/* Keeps a rarely taken path out of its caller, so the caller stays small. */
#define OC_NOINLINE __attribute__((noinline))

/* malloc that honours oc_debug_fail_allocations (oc_alloc.c). */
void *oc__alloc(size_t bytes);

/* Prints what failed and aborts (oc_checks.c). */
void oc__fatal(const char *what, int error) __attribute__((noreturn));

/*
 * oc__check_call: `error` is what the call named `what` returned, 0 or an
 * errno value (pthread_once, pthread_key_create, posix_memalign, ...); any
 * other value than 0 aborts through oc__fatal. For calls that fail only
 * when the process cannot go on (out of thread keys, out of memory while
 * initializing).
 */
static inline void
oc__check_call(const char *what, int error)
{
	if (error != 0)
		oc__fatal(what, error);
}

/*
 * Failure injection's count of allocations left to fail (see
 * oc_debug_fail_allocations); relaxed loads: it orders nothing. A path that
 * reuses memory instead of allocating checks it, so that an injected
 * failure still fails there (oc__alloc consumes it).
 */
extern unsigned int oc__failing_allocations;

/*
 * The writers' lock of a list: one 32-bit word, taken and released inline
 * without a call (glibc's pthread mutex costs two library calls and ~50
 * instructions per lock and unlock). 0: free; 1: held; 2: held, and a
 * thread may be waiting. The slow paths (oc__word_lock_wait, oc__word_lock_wake in
 * oc_word_lock.c) spin briefly, then park the waiter: on a futex on Linux, in
 * sched_yield elsewhere. Darwin uses os_unfair_lock, the same kind of
 * one-word lock, instead.
 *
 * Memory ordering: taking the lock is an acquire compare-exchange (or
 * exchange, in the slow path), releasing it a release exchange, so each
 * critical section happens after the previous one. On x86 both are locked
 * instructions (full barriers); on ARM the acquire/release forms, required
 * there: without them a writer could read a slot array or bitmap the
 * previous holder had not finished writing. The unlock must be a
 * read-modify-write (not a store) to learn whether a waiter must be woken.
 * ThreadSanitizer sees these builtins in instrumented builds, so it sees
 * the lock's happens-before edges. On every platform an unlocked lock is
 * all zero bytes, so zeroed memory holds one.
 */
#if defined(__APPLE__)
#include <os/lock.h>
typedef os_unfair_lock oc_word_lock_t;

static inline void
oc_word_lock(oc_word_lock_t *lock)
{
	os_unfair_lock_lock(lock);
}

static inline bool
oc_word_trylock(oc_word_lock_t *lock)
{
	return os_unfair_lock_trylock(lock);
}

static inline void
oc_word_unlock(oc_word_lock_t *lock)
{
	os_unfair_lock_unlock(lock);
}
#else
typedef struct oc_word_lock {
	uint32_t word;
} oc_word_lock_t;

/* Slow paths: waits until it holds `lock` (marking it 2); wakes a waiter. */
void oc__word_lock_wait(oc_word_lock_t *lock);
void oc__word_lock_wake(oc_word_lock_t *lock);

/* Acquire compare-exchange 0 -> 1 (see above); the slow path otherwise. */
static inline void
oc_word_lock(oc_word_lock_t *lock)
{
	uint32_t expected = 0;

	if (__builtin_expect(__atomic_compare_exchange_n(&lock->word, &expected, 1, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 1))
		return;
	oc__word_lock_wait(lock);
}

/* Takes `lock` only when it is free now; never waits. Acquire on success. */
static inline bool
oc_word_trylock(oc_word_lock_t *lock)
{
	uint32_t expected = 0;

	return __atomic_compare_exchange_n(&lock->word, &expected, 1, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Release exchange to 0; wakes a waiter when the word said there may be one. */
static inline void
oc_word_unlock(oc_word_lock_t *lock)
{
	if (__builtin_expect(__atomic_exchange_n(&lock->word, 0, __ATOMIC_RELEASE) == 2, 0))
		oc__word_lock_wake(lock);
}
#endif

/*
 * A list inside memory its owner allocates (the keymap puts each key's list
 * in the key's entry): oc__list_bytes() bytes, 8-byte aligned. oc__list_init
 * makes an empty list there (always true: a list needs no resource that can fail).
 * oc__list_finish does what oc_list_destroy does except retiring the list's
 * own memory: the owner retires that, so that it outlives every reader that
 * may still view the list.
 */
size_t oc__list_bytes(void);
bool oc__list_init(oc_list_t *list, oc_release_fn *release);
void oc__list_finish(oc_list_t *list);

/*
 * oc_list_remove in two steps, for a caller that holds a lock of its own
 * while removing (the keymap's, which the list lock nests in):
 * oc__list_take removes the context `handle` names and hands it back in
 * *context (OC_OK) or returns OC_ENOENT; it runs no callback, retires
 * nothing and does not poll. Once the caller holds no lock,
 * oc__list_retire_taken retires the context (released with `release` after
 * a grace period); the caller then polls (oc__writer_poll).
 */
oc_status_t oc__list_take(oc_list_t *list, oc_handle_t handle, void **context);
void oc__list_retire_taken(oc_release_fn *release, void *context);


/*
 * A retired object: released by `release` once no reader can see it.
 * Embedded in (or allocated beside) whatever is retired.
 */
struct oc_retired {
	ck_epoch_entry_t epoch_entry;
	struct oc_retired *next_ready;
	void (*release)(struct oc_retired *retired);
	size_t bytes;
};

/* A removed context waiting for its grace period (oc_list.c retires it). */
struct oc_retired_context {
	struct oc_retired retired;
	oc_release_fn *release;
	void *context;
};

/*
 * Retirement records of released contexts, kept by the thread that
 * released them for its next removals (a churning writer releases on its
 * own thread, when it polls): a removal then takes a record without a
 * malloc and a release returns it without a free. A scan releases up to
 * OC_SCAN_RETIRED_OBJECTS_ALONE contexts at once, so a thread keeps as
 * many (64 KiB of records); the rest are freed. Linked through
 * `retired.next_ready`. Only the owning thread touches its pool, so plain
 * accesses suffice. oc_reclaim_barrier frees the calling thread's pool
 * (oc__free_spare_records). A key destructor frees it when the thread
 * exits and closes it (`state` 2): what the thread releases after that
 * (other destructors may still remove and release) is freed at once.
 * oc_spare_records.c owns the pool; the fast paths are inline below.
 */
#define OC_SPARE_RECORDS OC_SCAN_RETIRED_OBJECTS_ALONE

struct oc_spare_records {
	struct oc_retired_context *top;
	uint32_t count;
	/* 0: no destructor registered yet; 1: registered; 2: closed. */
	uint32_t state;
};

extern __thread struct oc_spare_records oc__spare_records;

/*
 * Frees the retirement records the calling thread keeps for reuse.
 * oc_reclaim_barrier calls it, so that after a barrier the thread holds none.
 */
void oc__free_spare_records(void);

/* oc__keep_context_record's path when the pool is not open or is full. */
void oc__keep_context_record_slow(struct oc_retired_context *item);

/*
 * A record for retiring a removed context: a spare one, or a new one (NULL
 * when memory is exhausted). While failure injection is on, a new one, so
 * that the injected failure happens here as it would without the pool.
 */
static inline struct oc_retired_context *
oc__context_record(void)
{
	struct oc_spare_records *spares = &oc__spare_records;
	struct oc_retired_context *item = spares->top;

	if (item == NULL || __atomic_load_n(&oc__failing_allocations, __ATOMIC_RELAXED) != 0)
		return oc__alloc(sizeof *item);
	spares->top = (struct oc_retired_context *)(void *)item->retired.next_ready;
	spares->count--;
	return item;
}

/* Keeps a released context's record for reuse on this thread, or frees it. */
static inline void
oc__keep_context_record(struct oc_retired_context *item)
{
	struct oc_spare_records *spares = &oc__spare_records;

	if (__builtin_expect(spares->state != 1 || spares->count >= OC_SPARE_RECORDS, 0)) {
		oc__keep_context_record_slow(item);
		return;
	}
	item->retired.next_ready = (struct oc_retired *)(void *)spares->top;
	spares->top = item;
	spares->count++;
}

/*
 * oc__retire: hands `retired` to the reclamation domain. Any thread, with or
 * without a list lock held; never waits for readers. `retired->release`
 * runs later, on some thread that polls, outside every lock of the core.
 */
void oc__retire(struct oc_retired *retired, void (*release)(struct oc_retired *),
    size_t bytes);

/* Ready objects a sender releases per poll (see oc__reader_poll). */
#define OC_READER_RELEASE_LIMIT 8u

/*
 * Statistics and the writer-poll trigger, counted per thread: each thread
 * updates its own block with plain (relaxed atomic) loads and stores, no
 * read-modify-write, so a subscribe/cancel pair takes no process-wide
 * cache line for them. oc_stats sums the blocks. Blocks are never freed:
 * a thread's block is marked free when it exits and adopted by a later
 * thread, which keeps counting on top (the sums stay right). The block
 * list only grows, by compare-exchange pushes.
 */
struct oc_thread_counters {
	/* Contexts added minus contexts removed by this thread (wrapping). */
	uint64_t live;
	/* Objects this thread retired, and their bytes. */
	uint64_t retired;
	uint64_t retired_bytes;
	/* Owner only: `retired` when this thread's latest writer poll ran. */
	uint64_t retired_at_poll;
	struct oc_thread_counters *next;
	/* Whether a live thread owns this block (release/acquire hand-over). */
	bool in_use;
};

extern __thread struct oc_thread_counters *oc__own_counters;

/* The calling thread's block, adopting or making one on first use. */
struct oc_thread_counters *oc__counters_attach(void);

/* The calling thread's block: the cached pointer, attached on first use. */
static inline struct oc_thread_counters *
oc__counters(void)
{
	struct oc_thread_counters *counters = oc__own_counters;

	if (__builtin_expect(counters == NULL, 0))
		counters = oc__counters_attach();
	return counters;
}

/*
 * Adds `delta` to a counter of the calling thread's own block. Relaxed load
 * and store: only the owner writes it; oc_stats reads it atomically.
 */
static inline void
oc__counter_add(uint64_t *counter, uint64_t delta)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + delta,
	    __ATOMIC_RELAXED);
}

/* The poll of oc__writer_poll, out of line. */
void oc__writer_poll_now(struct oc_thread_counters *counters);

/*
 * Writers call this after every change: it polls reclamation once the
 * calling thread has retired OC_WRITER_POLL_THRESHOLD objects since its
 * latest writer poll, so a burst of subscribe/cancel pairs does not poll on
 * each change (nor, while a stalled reader blocks reclamation, scan every
 * record on each), while the garbage a writer leaves behind stays bounded.
 */
static inline void
oc__writer_poll(void)
{
	struct oc_thread_counters *counters = oc__counters();

	if (counters->retired - counters->retired_at_poll >= OC_WRITER_POLL_THRESHOLD)
		oc__writer_poll_now(counters);
}

/* Every block's live, retired and retired_bytes added up (oc_counters.c). */
void oc__counters_sum(struct oc_thread_counters *sum);

/*
 * Statistics (oc_stats.c). Counts a context leaked because its retirement
 * could not be recorded.
 */
void oc__count_leaked_context(void);
/* Released objects and bytes (release adds, see oc_stats.c). */
extern uint64_t oc__stat_reclaimed;
extern uint64_t oc__stat_reclaimed_bytes;
/* Epoch records allocated; records reset in a fork child. Relaxed. */
extern uint64_t oc__stat_records;
extern uint64_t oc__stat_records_reset_after_fork;

/*
 * membarrier (oc_membarrier.c): chooses at initialization whether read
 * sections rely on it; registers again in a fork child; issues one before
 * each scan of the epoch records, under the reclaim lock.
 */
void oc__membarrier_initialize(void);
void oc__membarrier_after_fork(void);
void oc__membarrier_before_scan(void);

/* Counts stored contexts (oc_stats sums every thread's count). */
static inline void
oc__live_contexts_add(int64_t delta)
{
	oc__counter_add(&oc__counters()->live, (uint64_t)delta);
}

/*
 * Takes the next sequence number for an add: unique in the process, never 0
 * and never OC__SEQUENCE_FREE. False when every one has been issued.
 */
bool oc__next_sequence(uint64_t *sequence);

#endif
