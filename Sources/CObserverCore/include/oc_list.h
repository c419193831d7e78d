/*
 * CObserverCore observer lists. A list (oc_list_t) holds slots; each slot
 * carries one opaque `void *context` (for ObserverSwift: a retained Swift
 * box). Writers (add, remove, clear) are serialized per list by a one-word
 * lock (a futex on Linux, os_unfair_lock on Darwin) that spins briefly,
 * then parks the waiter.
 * Readers (the send path) never take a lock and never wait for a writer:
 * they enter a read section (oc_epoch.h), take a view of the list's current
 * slot array and call each visible context. Memory a reader may still see
 * (old slot arrays, removed contexts) is retired and released only after a
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
 * NULL: the send-path readers (oc_list_is_empty, oc_list_view,
 * oc_view_context) require a valid list or view; that is their stated
 * precondition, checked in debug builds only (OC_DEBUG_CHECKS), so that the
 * send path pays nothing for it. Every other function accepts NULL lists
 * and reports OC_EINVAL or a neutral value, as its contract says.
 */
#ifndef OC_LIST_H
#define OC_LIST_H

#include "oc_epoch.h"

OC__DECLS_BEGIN

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * A handle names one add: `sequence` is a number unique in the process (a
 * 64-bit counter, shared by all lists, that never wraps: oc_list_add
 * returns OC_EEXHAUSTED rather than reuse one), `index` the slot it went
 * into. The sequence is what identifies the add: when a shrink compacts
 * the list and moves the context to a lower slot, the handle keeps its
 * original index and the list finds the context by its sequence (see
 * oc_list_remove), so a handle stays valid for as long as its context is
 * stored. A handle is never reissued, so a stale handle (its context
 * already removed) or a foreign one (issued by another list) never matches
 * a live slot. The sequence of an issued handle is never 0: a
 * zero-initialized handle is OC_HANDLE_NONE, never issued. 16 bytes (12
 * used) in C and Swift.
 */
typedef struct oc_handle {
	uint64_t sequence;
	uint32_t index;
} oc_handle_t;

/* The maximum number of contexts one list holds. */
#define OC_LIST_MAX_SLOTS (UINT32_C(1) << 24)

/*
 * The slots of a new list's array, and the fewest a shrink leaves. A list
 * grows by doubling when every slot is in use. It shrinks when at most a
 * quarter of its slots are in use: it then compacts its contexts, keeping
 * their slot order, into the lowest slots of an array half full (the
 * smallest power of two at least twice the count, and at least
 * OC_LIST_MIN_SLOTS). A resize of an array of C slots thus follows at least
 * C / 4 adds or removals since the previous one, so its cost is amortized
 * and churn at a boundary does not thrash.
 */
#define OC_LIST_MIN_SLOTS UINT32_C(1)

/* The handle no add issues (all zero); what an add that failed writes. */
static inline oc_handle_t
oc_handle_none(void)
{
	oc_handle_t none = { 0, 0 };

	return none;
}

/* Whether `handle` is OC_HANDLE_NONE (sequence 0: no add issued it). */
static inline bool
oc_handle_is_none(oc_handle_t handle)
{
	return handle.sequence == 0;
}

/* Whether two handles name the same add. */
static inline bool
oc_handle_equal(oc_handle_t a, oc_handle_t b)
{
	return a.sequence == b.sequence && a.index == b.index;
}

/* ------------------------------------------------------------------------ */
/* Lists and views                                                          */
/* ------------------------------------------------------------------------ */

/*
 * A slot. Private layout, read only through oc_view_context. `context` is
 * NULL when the slot is free. `sequence` is the add's sequence number, or
 * OC__SEQUENCE_FREE once freed, so that a reader racing a removal skips it.
 */
struct oc_slot {
	void *OC_NULLABLE context;
	uint64_t sequence;
};
#define OC__SEQUENCE_FREE UINT64_MAX

/*
 * An immutable-capacity slot array; replaced (copied, and compacted on
 * shrink) on growth or shrink. `scan_limit` is one past the highest index
 * of this array that may hold a context. It belongs to the array, not the
 * list, because a compaction moves contexts to lower indices of the new
 * array only: a limit computed for the new array would hide contexts from a
 * reader still on the old one. Writers change it in place only in the
 * list's current array, with release stores; readers load it with acquire
 * (see oc_list_view).
 */
struct oc_slot_array {
	uint32_t capacity;
	uint32_t scan_limit;
	struct oc_slot slots[];
};

/*
 * The part of a list that readers load. Private: first member of the opaque
 * struct oc_list, declared here so views can be taken inline.
 */
struct oc_list_head {
	/* Published with release by writers; loaded with acquire by readers. */
	struct oc_slot_array *array;
	/*
	 * The current array's scan limit, copied here for oc_list_is_empty,
	 * which runs outside a read section and so cannot follow `array`: 0
	 * exactly when no slot is in use. Views take the limit from the array.
	 */
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
 * oc_list_view: takes a view of `list` (non-NULL). Must be called inside a
 * read section that lasts as long as the view is used (debug builds check
 * both). Never blocks.
 *
 * Memory ordering: the sequence is loaded with acquire first. A writer
 * publishes the sequence of an add (release) only after storing the slot and,
 * on growth, the new array pointer; so every add that completed before the
 * sequence was published is visible through the array and limit loaded next.
 * The array and limit may be newer than the sequence; adds newer than the
 * sequence are filtered out per slot by oc_view_context. The limit is the
 * loaded array's own, never above its capacity. A writer that publishes a
 * new array (growth, or a shrink that moves contexts to lower indices)
 * never changes the old array's slots or limit again, so a reader that
 * loaded the old array iterates a consistent older state, in which every
 * context stored for the whole send is at its old index; a reader that
 * loaded the new array reads the limit it was published with or a later
 * in-place update. On x86 every load is an acquire load already (these
 * compile to plain moves); on ARM they are `ldar` (or `ldapr`) and each is
 * required: without the first, the array and limit could be read before the
 * sequence that vouches for them; without the second, the slots and limit
 * before the pointer that publishes them; without the third, a limit older
 * than the sequence (an add releases the limit before the sequence).
 */
static inline oc_view_t
oc_list_view(const oc_list_t *list)
{
	const struct oc_list_head *head = (const struct oc_list_head *)(const void *)list;
	oc_view_t view;
	const struct oc_slot_array *array;

	OC_DEBUG_CHECK((const void *)list != NULL, "oc_list_view(NULL)");
	OC_DEBUG_CHECK(oc_in_read_section(), "oc_list_view outside a read section");
	view.sequence = __atomic_load_n(&head->published_sequence, __ATOMIC_ACQUIRE);
	array = __atomic_load_n(&head->array, __ATOMIC_ACQUIRE);
	view.slots = array->slots;
	view.count = __atomic_load_n(&array->scan_limit, __ATOMIC_ACQUIRE);
	return view;
}

/*
 * oc_view_context: the context in slot `index` (< view.count) of `view`, or
 * NULL when the slot is free or was filled by an add newer than the view.
 *
 * Memory ordering: the context is loaded with acquire, pairing with the
 * writer's release store of it, which follows the store of its sequence; so
 * the sequence loaded next is at least the one written for this context (or
 * OC__SEQUENCE_FREE if it was removed since, which makes us skip it). The
 * sequence load itself can be relaxed: the acquire before it orders it. On
 * x86 the acquire is a plain move; on ARM it is required (`ldar`), or the
 * sequence could be read before the context and be older than it.
 */
static inline void *OC_NULLABLE
oc_view_context(oc_view_t view, uint32_t index)
{
	const struct oc_slot *slot = &view.slots[index];
	void *OC_NULLABLE context = __atomic_load_n(&slot->context, __ATOMIC_ACQUIRE);

	if (context == NULL)
		return NULL;
	if (__atomic_load_n(&slot->sequence, __ATOMIC_RELAXED) > view.sequence)
		return NULL;
	return context;
}

/*
 * oc_list_is_empty: true when no slot is in use. `list` must not be NULL
 * (checked in debug builds only). Needs no read section (it reads only the
 * list head, which lives as long as the list), so a sender can return before
 * entering one. Memory ordering: the acquire load pairs with the release
 * store of the head's copy of the scan limit in oc_list_add; a send that starts after an add
 * returned sees a non-zero limit unless everything was removed since. (The
 * send then takes a view, whose own acquire loads order what it reads; this
 * one needs acquire only so that a sender returning early has seen a state
 * no older than the add's. Plain move on x86, `ldar` on ARM.)
 */
static inline bool
oc_list_is_empty(const oc_list_t *list)
{
	const struct oc_list_head *head = (const struct oc_list_head *)(const void *)list;

#if OC_DEBUG_CHECKS
	if ((const void *)list == NULL) {
		oc__check_failed("oc_list_is_empty(NULL)");
		return true;
	}
#endif
	return __atomic_load_n(&head->scan_limit, __ATOMIC_ACQUIRE) == 0;
}

/* Called with a removed context once no reader can see it any more. */
typedef void oc_release_fn(void *context);

/* Decides, under a writer lock, whether to remove `context`. */
typedef bool oc_context_predicate_fn(void *context, void *OC_NULLABLE argument);

/*
 * oc_list_create: allocates an empty list whose removed contexts are handed
 * to `release` (may be NULL) after a grace period. Returns NULL when memory
 * is exhausted. Any thread.
 */
oc_list_t *OC_NULLABLE oc_list_create(oc_release_fn *OC_NULLABLE release);

/*
 * oc_list_destroy: removes every context (each released after a grace
 * period) and retires the list itself. The caller guarantees no writer call
 * on the list is in progress or follows; readers that already took a view
 * may finish safely. NULL is a no-op.
 */
void oc_list_destroy(oc_list_t *OC_NULLABLE list);

/*
 * oc_list_add: stores `context` (non-NULL) in the lowest free slot and writes
 * its handle to *handle. Sends whose view is taken after this returns call
 * it; sends already in progress do not. Takes the writer lock; never waits
 * for readers. Returns OC_OK, OC_EINVAL (a NULL argument), OC_ENOMEM
 * (growth failed), OC_EFULL or OC_EEXHAUSTED; on error nothing changed and
 * *handle (when `handle` is not NULL) is OC_HANDLE_NONE.
 */
oc_status_t oc_list_add(oc_list_t *OC_NULLABLE list, void *OC_NULLABLE context,
    oc_handle_t *OC_NULLABLE handle);

/*
 * oc_list_remove: removes the context named by `handle`, wherever a shrink
 * has moved it (at the handle's index while it is still there, otherwise
 * found by its sequence in the list's table of moved contexts, one hash
 * lookup). Returns OC_OK when
 * it was removed by this call, OC_ENOENT when the handle is stale (already
 * removed), foreign or never issued (nothing happens), OC_EINVAL for a NULL
 * list. After OC_OK, no view taken later contains the context; views taken
 * earlier may still call it until their section ends (see oc_synchronize).
 * Its release runs after a grace period. Never waits for readers.
 */
oc_status_t oc_list_remove(oc_list_t *OC_NULLABLE list, oc_handle_t handle);

/*
 * oc_list_try_remove: oc_list_remove, but returns OC_EBUSY instead of
 * waiting when another writer holds the list's lock. Safe on the send path.
 */
oc_status_t oc_list_try_remove(oc_list_t *OC_NULLABLE list, oc_handle_t handle);

/*
 * oc_list_remove_wait: oc_list_remove followed by oc_synchronize, so that on
 * OC_OK no callback of the removed context is running or will run. From
 * inside a read section the removal still happens but the wait cannot:
 * returns OC_EINSECTION.
 */
oc_status_t oc_list_remove_wait(oc_list_t *OC_NULLABLE list, oc_handle_t handle);

/*
 * oc_list_remove_if: removes every context for which `predicate` returns
 * true and returns how many were removed. `predicate` runs under the writer
 * lock: it must not call writer functions on this list. It is asked about
 * every context stored when the call starts and not removed meanwhile by
 * another writer, at least once; the call releases the lock between batches
 * of slots, and a removal by another writer in between may compact the list
 * and move a context already asked to a slot not yet visited, so it can be
 * asked twice. NULL list or NULL predicate: 0.
 */
size_t oc_list_remove_if(oc_list_t *OC_NULLABLE list,
    oc_context_predicate_fn *OC_NULLABLE predicate, void *OC_NULLABLE argument);

/* oc_list_clear: removes every context; returns how many. NULL list: 0. */
size_t oc_list_clear(oc_list_t *OC_NULLABLE list);

/* oc_list_count: contexts currently stored (a snapshot). NULL list: 0. */
size_t oc_list_count(const oc_list_t *OC_NULLABLE list);

/*
 * oc_list_contains: whether `handle` names a context stored in `list` now.
 * NULL list: false.
 */
bool oc_list_contains(oc_list_t *OC_NULLABLE list, oc_handle_t handle);

OC__DECLS_END

#endif /* OC_LIST_H */
