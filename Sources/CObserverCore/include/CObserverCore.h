/*
 * CObserverCore: lock-free observer lists with epoch-based reclamation.
 *
 * An observer list (oc_list_t) holds slots; each slot carries one opaque
 * `void *context` (for ObserverSwift: a retained Swift box). Writers (add,
 * remove, clear) are serialized per list by a mutex. Readers (the send path)
 * never take a lock and never wait for a writer: they enter an epoch read
 * section, take a view of the list's current slot array and call each visible
 * context. Memory a reader may still see (old slot arrays, removed contexts)
 * is retired through Concurrency Kit's ck_epoch and released only after a
 * grace period.
 *
 * Send semantics (what a view sees), for every list:
 *   1. A context removed before a view is taken is not in that view.
 *   2. A context added after a view is taken is not in that view, even when it
 *      lands in a slot the reader has not reached yet.
 *   3. A context added before a view is taken (oc_list_add returned) is in it,
 *      unless it is removed while the reader iterates (then it may or may not
 *      be called).
 *   4. A removed context's release callback runs only after every read
 *      section that might still see it has ended.
 *   5. oc_synchronize() waits for every read section in progress when it was
 *      called; calling it from inside a read section would wait for itself, so
 *      it returns OC_EINSECTION instead of hanging.
 *
 * Threads: every function may be called from any thread unless its contract
 * says otherwise. A thread gets an epoch record the first time it reads; the
 * record is recycled when the thread exits.
 *
 * This header is the whole C API; the fast paths (read sections, views) are
 * static inline here, the slow paths live in the .c files.
 */
#ifndef C_OBSERVER_CORE_H
#define C_OBSERVER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef __cplusplus
/* Concurrency Kit's headers are C only; C++ uses the out-of-line section
 * functions below instead of the inline ones. */
#include <ck_epoch.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

typedef enum oc_status {
	OC_OK = 0,
	/* An allocation failed; nothing was changed. */
	OC_ENOMEM = 1,
	/* A NULL list or NULL context was passed. */
	OC_EINVAL = 2,
	/* The list holds OC_LIST_MAX_SLOTS contexts already. */
	OC_EFULL = 3,
	/* The handle is stale, foreign, or was never issued: nothing removed. */
	OC_ENOENT = 4,
	/* Waiting was requested from inside a read section on this thread (for
	 * example from an observer callback), where it would never return. */
	OC_EINSECTION = 5,
	/* A non-blocking writer call found the list's writer lock taken. */
	OC_EBUSY = 6
} oc_status_t;

/* Returns a static, human-readable description of a status code. */
const char *oc_status_string(oc_status_t status);

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * A handle names one add: the low OC_HANDLE_INDEX_BITS bits are the slot
 * index, the rest is a sequence number unique in the process. A handle is
 * never reissued, so a stale handle (its context already removed) or a
 * foreign one (issued by another list) never matches a live slot.
 * 0 is never issued (OC_HANDLE_NONE).
 */
typedef uint64_t oc_handle_t;
#define OC_HANDLE_NONE ((oc_handle_t)0)
#define OC_HANDLE_INDEX_BITS 24
#define OC_LIST_MAX_SLOTS (UINT32_C(1) << OC_HANDLE_INDEX_BITS)

/* ------------------------------------------------------------------------ */
/* Read sections (the send path)                                            */
/* ------------------------------------------------------------------------ */
/* Per-thread reader state (an epoch record and a poll countdown). */
struct oc_thread;
typedef struct oc_thread oc_reader_t;

/* Outermost section exits between two reclamation polls by a reader. */
#define OC_READER_POLL_INTERVAL 1024u

/*
 * Out-of-line equivalents of oc_read_begin, oc_read_end and
 * oc_in_read_section, with the same contracts: for C++ (which cannot include
 * Concurrency Kit's headers) and for foreign-function interfaces.
 */
oc_reader_t *oc_read_begin_outlined(void);
void oc_read_end_outlined(oc_reader_t *reader);
bool oc_in_read_section_outlined(void);
oc_reader_t *oc_reader_current_outlined(void);
void oc_read_begin_reader_outlined(oc_reader_t *reader);

#ifndef __cplusplus

/* The epoch record comes first so a recycled ck record maps back to it. */
struct oc_thread {
	ck_epoch_record_t record;
	/* Outermost section exits left before this thread polls reclamation. */
	unsigned int poll_countdown;
	/* Writer polls seen at this thread's last poll (see oc__reader_poll). */
	uint64_t seen_writer_polls;
};

extern __thread struct oc_thread *oc__current_thread;

/* Slow path of oc_read_begin: registers (or recycles) this thread's record. */
struct oc_thread *oc__thread_attach(void);
/* Slow path of oc_read_end: runs reclamation work that is ready. */
void oc__reader_poll(struct oc_thread *thread);

/*
 * oc_reader_current: the calling thread's reader, registering its epoch
 * record on first use (may allocate; aborts if that fails). The pointer
 * identifies the thread while it lives (a record is recycled only after its
 * thread exited). Does not enter a section.
 */
static inline oc_reader_t *
oc_reader_current(void)
{
	struct oc_thread *thread = oc__current_thread;

	if (CK_CC_UNLIKELY(thread == NULL))
		thread = oc__thread_attach();
	return thread;
}

/*
 * oc_read_begin_reader: oc_read_begin for a reader already obtained from
 * oc_reader_current on the calling thread.
 */
static inline void
oc_read_begin_reader(oc_reader_t *reader)
{
	ck_epoch_begin(&reader->record, NULL);
}

/*
 * ThreadSanitizer support. TSan cannot see Concurrency Kit's inline-assembly
 * atomics nor the uninstrumented libck.so, so it would miss the edge that
 * makes epoch reclamation safe: everything a reader did inside a section
 * happens before the section's exit (ck_epoch_end: release fence + store to
 * the record), which happens before the reclaimer's scan of that record in
 * ck_epoch_poll/synchronize (load + acquire fence), which happens before the
 * release of what the reader could see. Under TSan only, each section exit
 * announces a release (oc__tsan_reader_exit) that oc_epoch.c acquires after
 * every grace period. Defined when this header is compiled with TSan: by C
 * targets under `--sanitize=thread`, and by Swift's Clang importer when the
 * build also passes `-Xcc -fsanitize=thread` (as `make tsan` does). In every
 * other build it compiles to nothing.
 */
#if defined(__SANITIZE_THREAD__)
#define OC__TSAN_ANNOTATIONS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OC__TSAN_ANNOTATIONS 1
#endif
#endif
/* TSan builds only (a no-op otherwise): see above. Any thread. */
void oc__tsan_reader_exit(void);

/*
 * oc_read_begin: enters a read section on the calling thread and returns the
 * thread's reader, to be passed to oc_read_end on the same thread.
 * Sections nest (a callback may send again, to any list). Inside a section no
 * slot array or context the caller can reach through a view is released.
 * Cost: a thread-local load plus ck_epoch_begin; the first call on a thread
 * also registers its epoch record (may allocate; aborts if that fails).
 */
static inline oc_reader_t *
oc_read_begin(void)
{
	struct oc_thread *thread = oc_reader_current();

	ck_epoch_begin(&thread->record, NULL);
	return thread;
}

/*
 * oc_read_end: leaves the section entered by the matching oc_read_begin.
 * Every OC_READER_POLL_INTERVAL outermost exits the thread also polls
 * reclamation — unless a writer polled since its last poll (writers do that
 * work while they are active) — and releases at most a few objects, so
 * memory is reclaimed without a dedicated thread and a send never carries a
 * writer's backlog; released contexts' callbacks may then run on this
 * thread, outside any section.
 */
static inline void
oc_read_end(oc_reader_t *reader)
{
#ifdef OC__TSAN_ANNOTATIONS
	oc__tsan_reader_exit();
#endif
	if (ck_epoch_end(&reader->record, NULL) &&
	    CK_CC_UNLIKELY(--reader->poll_countdown == 0))
		oc__reader_poll(reader);
}

/* True when the calling thread is inside a read section. */
static inline bool
oc_in_read_section(void)
{
	struct oc_thread *thread = oc__current_thread;

	return thread != NULL && thread->record.active != 0;
}

#else /* __cplusplus */

static inline oc_reader_t *oc_read_begin(void) { return oc_read_begin_outlined(); }
static inline void oc_read_end(oc_reader_t *reader) { oc_read_end_outlined(reader); }
static inline bool oc_in_read_section(void) { return oc_in_read_section_outlined(); }
static inline oc_reader_t *oc_reader_current(void) { return oc_reader_current_outlined(); }
static inline void oc_read_begin_reader(oc_reader_t *reader) { oc_read_begin_reader_outlined(reader); }

#endif /* __cplusplus */

/* ------------------------------------------------------------------------ */
/* Lists and views                                                          */
/* ------------------------------------------------------------------------ */

/*
 * A slot. Private layout, read only through oc_view_context. `context` is
 * NULL when the slot is free. `sequence` is the add's sequence number, or
 * OC__SEQUENCE_FREE once freed, so that a reader racing a removal skips it.
 */
struct oc_slot {
	void *context;
	uint64_t sequence;
};
#define OC__SEQUENCE_FREE UINT64_MAX

/* An immutable-capacity slot array; replaced (copied) on growth or shrink. */
struct oc_slot_array {
	uint32_t capacity;
	uint32_t reserved;
	struct oc_slot slots[];
};

/*
 * The part of a list that readers load. Private: first member of the opaque
 * struct oc_list, declared here so views can be taken inline.
 */
struct oc_list_head {
	/* Published with release by writers; loaded with acquire by readers. */
	struct oc_slot_array *array;
	/* One past the highest index that may hold a context. */
	uint32_t scan_limit;
	uint32_t reserved;
	/* Highest sequence number whose add has completed. */
	uint64_t published_sequence;
};

typedef struct oc_list oc_list_t;

/*
 * A view: what one send iterates. Valid only inside the read section in
 * which it was taken.
 */
typedef struct oc_view {
	const struct oc_slot *slots;
	uint32_t count;
	uint64_t sequence;
} oc_view_t;

/*
 * oc_list_view: takes a view of `list`. Must be called inside a read section
 * that lasts as long as the view is used. Never blocks.
 *
 * Memory ordering: the sequence is loaded with acquire first. A writer
 * publishes the sequence of an add (release) only after storing the slot and,
 * on growth, the new array pointer; so every add that completed before the
 * sequence was published is visible through the array and limit loaded next.
 * The array and limit may be newer than the sequence; adds newer than the
 * sequence are filtered out per slot by oc_view_context. A limit larger than
 * the loaded array's capacity (growth raced us) is clamped.
 */
static inline oc_view_t
oc_list_view(const oc_list_t *list)
{
	const struct oc_list_head *head = (const struct oc_list_head *)(const void *)list;
	oc_view_t view;
	const struct oc_slot_array *array;
	uint32_t limit;

	view.sequence = __atomic_load_n(&head->published_sequence, __ATOMIC_ACQUIRE);
	array = __atomic_load_n(&head->array, __ATOMIC_ACQUIRE);
	limit = __atomic_load_n(&head->scan_limit, __ATOMIC_ACQUIRE);
	if (limit > array->capacity)
		limit = array->capacity;
	view.slots = array->slots;
	view.count = limit;
	return view;
}

/*
 * oc_view_context: the context in slot `index` of `view`, or NULL when the
 * slot is free or was filled by an add newer than the view.
 *
 * Memory ordering: the context is loaded with acquire, pairing with the
 * writer's release store of it, which follows the store of its sequence; so
 * the sequence loaded next is at least the one written for this context (or
 * OC__SEQUENCE_FREE if it was removed since, which makes us skip it).
 */
static inline void *
oc_view_context(oc_view_t view, uint32_t index)
{
	const struct oc_slot *slot = &view.slots[index];
	void *context = __atomic_load_n(&slot->context, __ATOMIC_ACQUIRE);

	if (context == NULL)
		return NULL;
	if (__atomic_load_n(&slot->sequence, __ATOMIC_RELAXED) > view.sequence)
		return NULL;
	return context;
}

/*
 * oc_list_is_empty: true when no slot is in use. Needs no read section (it
 * reads only the list head, which lives as long as the list), so a sender can
 * return before entering one. Memory ordering: the acquire load pairs with the
 * release store of the scan limit in oc_list_add; a send that starts after an
 * add returned sees a non-zero limit unless everything was removed since.
 */
static inline bool
oc_list_is_empty(const oc_list_t *list)
{
	const struct oc_list_head *head = (const struct oc_list_head *)(const void *)list;

	return __atomic_load_n(&head->scan_limit, __ATOMIC_ACQUIRE) == 0;
}

/* Called with a removed context once no reader can see it any more. */
typedef void oc_release_fn(void *context);

/*
 * oc_list_create: allocates an empty list whose removed contexts are handed
 * to `release` (may be NULL) after a grace period. Returns NULL when memory
 * is exhausted. Any thread.
 */
oc_list_t *oc_list_create(oc_release_fn *release);

/*
 * oc_list_destroy: removes every context (each released after a grace
 * period) and retires the list itself. The caller guarantees no writer call
 * on the list is in progress or follows; readers that already took a view
 * may finish safely. NULL is a no-op.
 */
void oc_list_destroy(oc_list_t *list);

/*
 * oc_list_add: stores `context` (non-NULL) in the lowest free slot and writes
 * its handle to *handle. Sends whose view is taken after this returns call
 * it; sends already in progress do not. Takes the writer lock; never waits
 * for readers. Returns OC_OK, OC_EINVAL, OC_ENOMEM (growth failed) or
 * OC_EFULL; on error nothing changed and *handle is OC_HANDLE_NONE.
 */
oc_status_t oc_list_add(oc_list_t *list, void *context, oc_handle_t *handle);

/*
 * oc_list_remove: removes the context named by `handle`. Returns OC_OK when
 * it was removed by this call, OC_ENOENT when the handle is stale (already
 * removed), foreign or never issued (nothing happens), OC_EINVAL for a NULL
 * list. After OC_OK, no view taken later contains the context; views taken
 * earlier may still call it until their section ends (see oc_synchronize).
 * Its release runs after a grace period. Never waits for readers.
 */
oc_status_t oc_list_remove(oc_list_t *list, oc_handle_t handle);

/*
 * oc_list_try_remove: oc_list_remove, but returns OC_EBUSY instead of
 * waiting when another writer holds the list's lock. Safe on the send path.
 */
oc_status_t oc_list_try_remove(oc_list_t *list, oc_handle_t handle);

/*
 * oc_list_remove_wait: oc_list_remove followed by oc_synchronize, so that on
 * OC_OK no callback of the removed context is running or will run. From
 * inside a read section the removal still happens but the wait cannot:
 * returns OC_EINSECTION.
 */
oc_status_t oc_list_remove_wait(oc_list_t *list, oc_handle_t handle);

/*
 * oc_list_remove_if: removes every context for which `predicate` returns
 * true and returns how many were removed. `predicate` runs under the writer
 * lock: it must not call writer functions on this list. NULL list: 0.
 */
size_t oc_list_remove_if(oc_list_t *list,
    bool (*predicate)(void *context, void *argument), void *argument);

/* oc_list_clear: removes every context; returns how many. NULL list: 0. */
size_t oc_list_clear(oc_list_t *list);

/* oc_list_count: contexts currently stored (a snapshot). NULL list: 0. */
size_t oc_list_count(const oc_list_t *list);

/* oc_list_capacity: slots in the current array (for tests). NULL: 0. */
size_t oc_list_capacity(const oc_list_t *list);

/*
 * oc_list_contains: whether `handle` names a context stored in `list` now.
 */
bool oc_list_contains(oc_list_t *list, oc_handle_t handle);

/* ------------------------------------------------------------------------ */
/* Grace periods and reclamation                                            */
/* ------------------------------------------------------------------------ */

/*
 * oc_synchronize: blocks until every read section that was in progress on
 * any thread when it was called has ended. Returns OC_EINSECTION (without
 * waiting) when called from inside a read section, OC_OK otherwise.
 */
oc_status_t oc_synchronize(void);

/*
 * oc_reclaim_poll: non-blocking. Releases retired memory and contexts whose
 * grace period is known to have passed, on the calling thread. Writers call
 * it after a change once 64 retired objects are pending (releasing all that
 * is ready); readers every OC_READER_POLL_INTERVAL sections when writers are
 * quiet (releasing a few), so memory is reclaimed without a dedicated
 * thread; a program may also call it at any time.
 */
void oc_reclaim_poll(void);

/*
 * oc_reclaim_barrier: waits for a grace period and releases everything
 * retired before the call. For tests and shutdown. Returns OC_EINSECTION
 * (doing nothing) from inside a read section.
 */
oc_status_t oc_reclaim_barrier(void);

/* Process-wide counters (each read atomically; together a snapshot). */
typedef struct oc_stats {
	/* Contexts stored in all lists. */
	uint64_t live_contexts;
	/* Retired objects (contexts, slot arrays, lists) not yet released. */
	uint64_t pending_objects;
	/* Bytes of core memory held by pending retired objects. */
	uint64_t pending_bytes;
	/* Retired objects released so far. */
	uint64_t reclaimed_objects;
	/* Epoch records registered (live threads that ever read, plus free
	 * records waiting to be recycled). */
	uint64_t epoch_records;
	/* Removed contexts never released: their retirement record could not
	 * be allocated while the remover was inside a read section. */
	uint64_t leaked_contexts;
} oc_stats_t;

oc_stats_t oc_stats(void);

/*
 * oc_debug_fail_allocations: makes the next `count` core allocations fail,
 * so that tests can check that OC_ENOMEM is reported and nothing is lost.
 */
void oc_debug_fail_allocations(unsigned int count);

/* ------------------------------------------------------------------------ */
/* Swift object liveness (ObserverSwift's protocol-typed observers)         */
/* ------------------------------------------------------------------------ */

/*
 * swift_tryRetain: exported by the Swift runtime (swift/Runtime/HeapObject.h,
 * C calling convention). Adds a strong reference and returns the object,
 * unless the object's deinit has started: then it returns NULL and changes
 * nothing. (The Swift 6 runtime returns the object pointer, not a bool:
 * checked against its disassembly. Comparing with the argument stays
 * correct for a runtime whose result would be a bool: it never equals an
 * object's address, so nothing would be called rather than a dead object.)
 * The object's memory must still be allocated: ObserverSwift holds an
 * unowned reference (which keeps the allocation, not the object) on every
 * observer it may probe.
 */
extern void *swift_tryRetain(void *object);

/*
 * oc_swift_try_retain: strong-retains a native Swift object unless it is
 * being (or has been) deinitialized. Any thread. On true the caller owns one
 * strong reference and must release it. Cheaper than a Swift `weak` load
 * (one atomic on the object's inline count, no side table), which is why the
 * protocol-typed observer views use it on their send path.
 */
static inline bool
oc_swift_try_retain(const void *object)
{
	return swift_tryRetain((void *)(uintptr_t)object) == object;
}

#ifdef __cplusplus
}
#endif

#include "oc_keymap.h"
#include "oc_claim.h"

#endif /* C_OBSERVER_CORE_H */
