/*
 * oc_keymap: keyed observer lists. A map from an opaque key to an observer
 * list (oc_list_t), for sources whose observers subscribe to keys and whose
 * senders send to one key at a time.
 *
 * Keys are opaque to the core. Each key is stored as an entry
 * { hash, key_context, list }: `hash` is the caller's 64-bit hash of the
 * key, `key_context` is whatever the caller uses to hold the key (for
 * ObserverSwift: a retained Swift box around a Hashable value), `list` is the
 * key's observer list. Exact key comparison is the caller's callback
 * (oc_key_equal_fn), so two keys whose hashes collide stay distinct.
 *
 * The table is an open-addressing hash table of entry pointers (linear
 * probing, at most half full, tombstones for removed entries), one writer
 * at a time and lock-free readers:
 *   - Readers (the send path) look a key up with oc_keymap_find /
 *     oc_keymap_find_hash inside a read section (oc_read_begin). Lookups
 *     take no lock, never wait for a writer and cost O(1) expected
 *     regardless of how many keys exist (a probe run that always ends at an
 *     empty slot).
 *   - Writers (add, remove, clear) are serialized per map by a lock (the
 *     lists' one-word writer lock). That lock is never held while
 *     reclamation polls, while anything is released or while any callback
 *     other than oc_key_equal_fn runs, so a release callback (a Swift
 *     deinit) may call back into the map freely.
 *     A key's list lock may be taken inside it (never the other way).
 *
 * Key lifetime: a key's entry is created by the first oc_keymap_add for it
 * and removed as soon as its list becomes empty (by a remove, a remove_if,
 * a clear, or a failed add). A removed entry, its list and its key_context
 * (released through the map's release_key callback) are retired through the
 * core's epoch reclamation: a reader that found the entry may keep using it,
 * its list and its key until its read section ends. Replaced tables
 * (growth, tombstone clean-up, shrinking) are retired the same way.
 *
 * Send semantics per key are those of the key's list (see oc_list.h),
 * with one addition: a context added for a key whose entry a send already
 * looked up under an older, now removed entry is not called by that send
 * (it went into the new entry's list).
 */
#ifndef OC_KEYMAP_H
#define OC_KEYMAP_H

#include "oc_list.h"

OC__DECLS_BEGIN

typedef struct oc_keymap oc_keymap_t;

/*
 * What a lookup returns: one key of a map. Read-only for callers; valid
 * until the end of the read section in which it was found (its memory, its
 * key_context and its list are retired, never freed in place).
 */
typedef struct oc_key_entry {
	/* The hash passed to the oc_keymap_add that created the entry. */
	uint64_t hash;
	/* The key_context adopted by that add. */
	void *key_context;
	/*
	 * The key's observer list; never NULL. Read it with oc_key_entry_list:
	 * it changes once, when the key first holds two contexts at once. Until
	 * then it is a one-slot list inside the entry that only readers may use
	 * (views, oc_list_is_empty); writers go through the map.
	 */
	oc_list_t *list;
} oc_key_entry_t;

/*
 * oc_key_entry_list: the list of an entry found by a lookup, inside the
 * read section in which it was found (valid until that section ends).
 * Memory ordering: acquire, pairing with the release store that publishes
 * the key's grown list: a reader that loads it sees that list's contexts.
 */
static inline oc_list_t *
oc_key_entry_list(const oc_key_entry_t *entry)
{
	return __atomic_load_n(&entry->list, __ATOMIC_ACQUIRE);
}

/*
 * Exact key comparison: true when the key held by `key_context` (an
 * entry's) equals the key `probe_key` points to (what the caller passed to
 * a lookup, add or remove). Called by readers and writers on any thread,
 * possibly inside a read section and under the map's writer lock: it must
 * not call into the map and must not block. It is only called for entries
 * whose hash equals the probe's.
 */
typedef bool oc_key_equal_fn(const void *key_context, const void *OC_NULLABLE probe_key);

/* Visits one key of a map (oc_keymap_for_each); false stops the visit. */
typedef bool oc_key_visit_fn(const oc_key_entry_t *entry, void *OC_NULLABLE argument);

/*
 * The part of a map that readers load without a section. Private: first
 * member of the opaque struct oc_keymap, declared here for the inline
 * oc_keymap_is_empty.
 */
struct oc_keymap_head {
	/* Keys present. Written with release under the writer lock. */
	uint64_t key_count;
};

/*
 * oc_keymap_create: allocates an empty map. `equal` (required) compares
 * keys; `release_key` (may be NULL) is called with a removed key's
 * key_context after a grace period; `release_context` (may be NULL) is the
 * release callback of every key's list (see oc_list_create). Returns NULL
 * when memory is exhausted or `equal` is NULL. Any thread.
 */
oc_keymap_t *OC_NULLABLE oc_keymap_create(oc_key_equal_fn *OC_NULLABLE equal,
    oc_release_fn *OC_NULLABLE release_key, oc_release_fn *OC_NULLABLE release_context);

/*
 * oc_keymap_destroy: removes every key (lists destroyed, contexts and keys
 * released after a grace period) and retires the map. The caller guarantees
 * that no writer call on the map is in progress or follows; readers that
 * already looked a key up may finish safely. NULL is a no-op.
 */
void oc_keymap_destroy(oc_keymap_t *OC_NULLABLE map);

/* ------------------------------------------------------------------------ */
/* Readers (the send path)                                                  */
/* ------------------------------------------------------------------------ */

/*
 * oc_keymap_is_empty: true when the map holds no key. `map` must not be NULL
 * (checked in debug builds only). Needs no read section
 * (reads only the map head, which lives as long as the map), so a send can
 * return before entering one. Memory ordering: acquire, pairing with the
 * release store of the count by the add that created a key; a send that
 * starts after an add returned sees a non-zero count unless every key was
 * removed since.
 */
static inline bool
oc_keymap_is_empty(const oc_keymap_t *map)
{
	const struct oc_keymap_head *head = (const struct oc_keymap_head *)(const void *)map;

#if OC_DEBUG_CHECKS
	if ((const void *)map == NULL) {
		oc__check_failed("oc_keymap_is_empty(NULL)");
		return true;
	}
#endif
	/* Plain move on x86; `ldar` on ARM, required as in oc_list_is_empty. */
	return __atomic_load_n(&head->key_count, __ATOMIC_ACQUIRE) == 0;
}

/*
 * oc_keymap_find: the entry whose key equals `probe_key` (compared with
 * the map's oc_key_equal_fn, only against entries of the same hash), or
 * NULL. `map` must not be NULL (the send path's precondition, checked in
 * debug builds only, which also check that a read section is open). Must be
 * called inside a read section; the entry is valid until that section ends.
 * Never blocks, never allocates.
 *
 * Memory ordering: the table pointer is loaded with acquire (pairing with
 * the release store that publishes a rebuilt table); each slot is loaded
 * with acquire, pairing with the release store that links an entry, whose
 * fields are initialized before it and never change while it is linked.
 * Writers never empty a slot (a removal leaves a tombstone), so a probe
 * run stays unbroken while a reader walks it.
 */
const oc_key_entry_t *OC_NULLABLE oc_keymap_find(const oc_keymap_t *map, uint64_t hash,
    const void *OC_NULLABLE probe_key);

/*
 * oc_keymap_find_hash: the first entry (in probe order) whose hash equals
 * `hash`, or NULL, without calling oc_key_equal_fn. For callers that can
 * compare keys faster inline: when the returned entry's key is not the one
 * wanted (a full 64-bit hash collision), they must fall back to
 * oc_keymap_find. Same contract as oc_keymap_find.
 */
const oc_key_entry_t *OC_NULLABLE oc_keymap_find_hash(const oc_keymap_t *map, uint64_t hash);

/*
 * oc_keymap_lookup: the list of the key equal to `probe_key`, or NULL when
 * the key has no entry. Same contract as oc_keymap_find.
 */
oc_list_t *OC_NULLABLE oc_keymap_lookup(const oc_keymap_t *map, uint64_t hash,
    const void *OC_NULLABLE probe_key);

/* ------------------------------------------------------------------------ */
/* Writers                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * oc_keymap_add: adds `context` (non-NULL) to the list of the key equal to
 * `probe_key`, creating the key when absent; writes the context's handle to
 * *handle. When this call created the key, it adopted `key_context` (the
 * map releases it with release_key after the key is removed) and sets
 * *key_adopted to true; otherwise the caller still owns `key_context`.
 * `key_context` must hold a key equal to `probe_key` with hash `hash`.
 * Sends whose lookup starts after this returns call the context.
 * Takes the writer lock; never waits for readers. Returns OC_OK,
 * OC_EINVAL (a NULL argument), OC_ENOMEM or OC_EFULL; on error the context
 * was not added and *handle is OC_HANDLE_NONE (*key_adopted may still be
 * true: the key was created and at once removed again).
 */
oc_status_t oc_keymap_add(oc_keymap_t *OC_NULLABLE map, uint64_t hash,
    const void *OC_NULLABLE probe_key, void *OC_NULLABLE key_context, void *OC_NULLABLE context,
    oc_handle_t *OC_NULLABLE handle, bool *OC_NULLABLE key_adopted);

/*
 * oc_keymap_remove: removes the context named by `handle` from the key
 * equal to `probe_key`; removes the key when its list became empty.
 * Returns OC_OK when this call removed the context, OC_ENOENT when the key
 * is absent or the handle is stale or foreign (nothing happens),
 * OC_EINVAL for a NULL map. Send semantics as oc_list_remove. Never waits
 * for readers; may be called from inside a read section (a callback).
 */
oc_status_t oc_keymap_remove(oc_keymap_t *OC_NULLABLE map, uint64_t hash,
    const void *OC_NULLABLE probe_key, oc_handle_t handle);

/*
 * oc_keymap_try_remove: oc_keymap_remove that never blocks (safe on the
 * send path): returns OC_EBUSY, having changed nothing, when the map's or
 * the list's writer lock is taken. When the context was removed but the
 * key could not be removed at once (the lock was taken again), the key is
 * removed by the next writer call on the map.
 */
oc_status_t oc_keymap_try_remove(oc_keymap_t *OC_NULLABLE map, uint64_t hash,
    const void *OC_NULLABLE probe_key, oc_handle_t handle);

/*
 * oc_keymap_remove_key_if: removes, from the key equal to `probe_key`, every
 * context for which `predicate` returns true (every context when
 * `predicate` is NULL); removes the key when its list became empty. Writes
 * how many contexts were removed to *removed (may be NULL). `predicate`
 * runs under a writer lock of the map or of the key's list (see
 * oc_list_remove_if): it must not call into the map. Returns OC_OK,
 * OC_ENOENT (no such key) or OC_EINVAL.
 */
oc_status_t oc_keymap_remove_key_if(oc_keymap_t *OC_NULLABLE map, uint64_t hash,
    const void *OC_NULLABLE probe_key, oc_context_predicate_fn *OC_NULLABLE predicate,
    void *OC_NULLABLE argument, size_t *OC_NULLABLE removed);

/*
 * oc_keymap_remove_if: oc_keymap_remove_key_if over every key present when
 * it starts; keys added meanwhile are not visited. Needs memory for a
 * snapshot of the keys: returns OC_ENOMEM (nothing removed) when that
 * fails. *removed (may be NULL) gets the total.
 */
oc_status_t oc_keymap_remove_if(oc_keymap_t *OC_NULLABLE map,
    oc_context_predicate_fn *OC_NULLABLE predicate, void *OC_NULLABLE argument,
    size_t *OC_NULLABLE removed);

/* oc_keymap_clear: oc_keymap_remove_if with a NULL predicate. */
oc_status_t oc_keymap_clear(oc_keymap_t *OC_NULLABLE map, size_t *OC_NULLABLE removed);

/*
 * oc_keymap_for_each: calls `visit` with every key present when it starts
 * (a snapshot), outside every lock of the map, until `visit` returns false.
 * While `visit` runs, its entry stays in the map (it is not removed even if
 * its list becomes empty; that happens after the visit), so the entry, its
 * key_context and its list are valid during the call. `visit` may call any
 * function of the map, including writers, but must not remove contexts
 * with oc_list_* calls on the entry's list directly. Returns OC_OK,
 * OC_ENOMEM (snapshot failed; nothing visited) or OC_EINVAL.
 */
oc_status_t oc_keymap_for_each(oc_keymap_t *OC_NULLABLE map,
    oc_key_visit_fn *OC_NULLABLE visit, void *OC_NULLABLE argument);

/* The most table slots one oc_keymap_visit_some call examines. */
#define OC_KEYMAP_VISIT_MAX 16

/*
 * oc_keymap_visit_some: an incremental walk, for work amortized over
 * writer calls (ObserverSwift frees the slots of dead weak targets this
 * way). Examines `slots` (at most OC_KEYMAP_VISIT_MAX) slots of the map's
 * hash table from *cursor on, wrapping at its end, and calls `visit` with
 * each key found there (until `visit` returns false), outside every lock
 * of the map, under the same terms as oc_keymap_for_each; writes where to continue to *cursor (start
 * with 0). A walk continued call after call visits every key that stays in
 * the map for a whole round of the table; a rebuilt table may make it miss
 * or repeat keys for one round. Needs no memory. Returns OC_OK or
 * OC_EINVAL (a NULL map, cursor or visit).
 */
oc_status_t oc_keymap_visit_some(oc_keymap_t *OC_NULLABLE map, size_t *OC_NULLABLE cursor,
    size_t slots, oc_key_visit_fn *OC_NULLABLE visit, void *OC_NULLABLE argument);

/* ------------------------------------------------------------------------ */
/* Queries (writer lock; any thread)                                        */
/* ------------------------------------------------------------------------ */

/* oc_keymap_contains: whether `handle` names a context stored under the key. */
bool oc_keymap_contains(oc_keymap_t *OC_NULLABLE map, uint64_t hash,
    const void *OC_NULLABLE probe_key, oc_handle_t handle);

/* oc_keymap_count: contexts stored under the key (0 when absent). */
size_t oc_keymap_count(oc_keymap_t *OC_NULLABLE map, uint64_t hash,
    const void *OC_NULLABLE probe_key);

/* oc_keymap_key_count: keys present (a snapshot). NULL map: 0. */
size_t oc_keymap_key_count(const oc_keymap_t *OC_NULLABLE map);

/*
 * oc_keymap_live_keys: keys present in all maps of the process (entries
 * created and not yet removed). Relaxed counter; a snapshot.
 */
uint64_t oc_keymap_live_keys(void);

OC__DECLS_END

#endif /* OC_KEYMAP_H */
