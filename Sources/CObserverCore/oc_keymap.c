/*
 * Keyed observer lists: an open-addressing hash table of entries
 * { hash, key_context, list }, one observer list per key, with lock-free
 * lookups (one writer at a time, under the map lock). See oc_keymap.h for
 * the contract.
 *
 * The table:
 *   - A power-of-two array of entry pointers: NULL is an empty slot,
 *     OC_SLOT_REMOVED a removed entry (a tombstone). Linear probing from
 *     the slot the multiplied hash picks. An entry's 64-bit hash is stored
 *     in the entry, which never changes after publication: a lookup loads
 *     a slot, compares the entry's hash, and calls the caller's equality
 *     only on a match.
 *   - Writers keep at most half of the slots non-empty (live + tombstones),
 *     so every probe run ends at an empty slot, and never turn a non-empty
 *     slot empty: a removal writes a tombstone. So a reader probing while a
 *     writer works walks an unbroken run and finds every entry that was
 *     linked before its lookup started and is still linked after it.
 *   - Growth, and cleaning out tombstones once they outnumber live entries
 *     (plus slack), rebuild the table: a fresh array filled with the live
 *     entries, published with one release store of `table`; the old one is
 *     retired, so readers still probing it finish safely. Amortized O(1).
 *   - Publication: a writer initializes an entry, then stores its pointer
 *     into the slot with release; readers load slots with acquire, so an
 *     entry's fields are visible to whoever finds it (on x86 both are plain
 *     moves; on ARM `stlr`/`ldar`).
 *
 * A key's contexts: the first lives in a one-slot list inside the key's
 * entry (a list head and a one-slot array that readers view through
 * public.list; written under the map lock, never through oc_list.c), so a
 * key with one observer carries no list of its own. The key gets an
 * oc_list_t when it holds two contexts at once (oc_entry_grow): the list is
 * filled outside the map lock, then published in public.list; the slot's
 * handle is mapped to the handle its context got in the list.
 *
 * Key lifetime (the reason for `refs`): a key's list is written outside the
 * map lock, because list writers poll reclamation, and reclamation runs
 * release callbacks (Swift deinits) that may call back into this map. So
 * each entry counts its stored contexts plus the writer calls in progress
 * on its list (`refs`). References are taken only under the map lock, by a
 * lookup of a linked entry; an entry is unlinked (removed from the table)
 * only under the map lock and only when `refs` is zero; after unlinking,
 * nobody can reach it for writing, so its list is destroyed and the entry
 * retired outside the lock. Dropping references normally happens under the
 * lock too; only oc_keymap_try_remove, finding the lock busy, drops them
 * with an atomic and, if that reached zero, asks the next writer to sweep.
 */
#include "oc_internal.h"

#include <stdlib.h>
#include <string.h>

/* A new map's table: 8 slots (a 136-byte allocation), room for 4 keys. */
#define OC_KEYMAP_MIN_CAPACITY 8ul
/* Tombstones tolerated beyond the live entry count before a rebuild. */
#define OC_KEYMAP_TOMBSTONE_SLACK 64ul
/* A removed entry's slot: keeps probe runs unbroken for readers. */
#define OC_SLOT_REMOVED ((const oc_key_entry_t *)(uintptr_t)1)

struct oc_keymap_table {
	struct oc_retired retired;
	/* Slots - 1; the slot count is a power of two. */
	size_t mask;
	/* 64 - log2(slots): the slot index is the multiplied hash's top bits. */
	unsigned int shift;
	/* Writer-only counts (map lock): linked entries and tombstones. */
	size_t live;
	size_t tombstones;
	/* NULL, OC_SLOT_REMOVED or a linked entry. Written with release by
	 * writers, loaded with acquire by readers. */
	const oc_key_entry_t *slots[];
};

struct oc_keymap_entry {
	oc_key_entry_t public; /* first: lookups hand out &public */
	/*
	 * Stored contexts plus writer calls in progress on `list`. Incremented
	 * only under the map lock; decremented with acq_rel atomics (see the
	 * file comment). The entry is linked in the table while refs > 0.
	 */
	uint64_t refs;
	oc_release_fn *release_key;
	/*
	 * The context whose removal emptied the key (oc_keymap_remove), or
	 * NULL: released (with the map's release_context) together with the
	 * entry, after the same grace period, instead of through a retirement
	 * record of its own.
	 */
	void *last_context;
	oc_release_fn *release_context;
	/*
	 * Retirement. Before the entry is retired, `retired.next_ready` chains
	 * the entries one writer call unlinked (oc_chain_unlinked): oc__retire
	 * sets that field itself, and the chain is read before each entry is
	 * retired, so the entry needs no link of its own.
	 */
	struct oc_retired retired;
	/*
	 * The key's list once it has held two contexts at once (made by
	 * oc_entry_grow, then published in public.list), or NULL while the key
	 * holds its contexts in its one slot. Written once, under the map lock.
	 */
	oc_list_t *grown;
	/* The handle of the context in the one slot (none when it is empty). */
	oc_handle_t single_handle;
	/* Once grown: the handle the slot's context has in `grown`. */
	oc_handle_t moved_handle;
	/*
	 * After the struct, in the same allocation (oc_single_head): a list head
	 * and a one-slot array, which readers view as the key's list (through
	 * public.list) until it grows. Writers store into them under the map
	 * lock, with the orderings oc_list.c's writers use for a list's head,
	 * array and slots; once grown they are not written again (a reader that
	 * viewed them before finishes with them).
	 */
};

/* A lookup argument: an entry-shaped header whose list is NULL. */
struct oc_keymap_probe {
	oc_key_entry_t as_entry;
	/* NULL: match on the hash alone (oc_keymap_find_hash). */
	oc_key_equal_fn *equal;
};

struct oc_keymap {
	struct oc_keymap_head head; /* first: oc_keymap_is_empty reads it */
	/* Published with release by writers (rebuild); loaded with acquire. */
	struct oc_keymap_table *table;
	/* The writers' lock (one word, see oc_word_lock_t), as a list's. */
	oc_word_lock_t lock;
	oc_key_equal_fn *equal;
	oc_release_fn *release_key;
	oc_release_fn *release_context;
	/* Set (release) by try_remove when a key emptied under a busy lock. */
	bool sweep_needed;
	struct oc_retired retired;
};

/* Keys in all maps. Relaxed: a statistic, it orders nothing. */
static uint64_t oc_keymap_live;

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * The bytes of a table of `slots` slots (its allocation and its retirement's
 * size).
 */
static size_t
oc_table_bytes(size_t slots)
{
	return sizeof(struct oc_keymap_table) + slots * sizeof(const oc_key_entry_t *);
}

/* An empty table of at least `capacity` slots (a power of two), or NULL. */
static struct oc_keymap_table *
oc_table_create(size_t capacity)
{
	struct oc_keymap_table *table;
	size_t slots = OC_KEYMAP_MIN_CAPACITY;
	unsigned int bits = 3;

	while (slots < capacity) {
		if (slots > (SIZE_MAX - sizeof *table) / (2 * sizeof table->slots[0]))
			return NULL;
		slots *= 2;
		bits++;
	}
	table = oc__alloc(oc_table_bytes(slots));
	if (table == NULL)
		return NULL;
	memset(table, 0, oc_table_bytes(slots));
	table->mask = slots - 1;
	table->shift = 64 - bits;
	return table;
}

/* The slot a probe for `hash` starts at. Multiplying spreads any bits of
 * the hash (an embedder's may vary only in a few) into the top ones kept. */
static size_t
oc_table_home(const struct oc_keymap_table *table, uint64_t hash)
{
	return (size_t)((hash * UINT64_C(0x9E3779B97F4A7C15)) >> table->shift) & table->mask;
}

/*
 * Retirement callback of a table (oc_table_retire): frees it; its grace
 * period has passed.
 */
static void
oc_table_release(struct oc_retired *retired)
{
	free(retired);
}

/* A table readers may have seen: freed after a grace period. */
static void
oc_table_retire(struct oc_keymap_table *table)
{
	oc__retire(&table->retired, oc_table_release, oc_table_bytes(table->mask + 1));
}

/* Whether one more entry keeps at most half of the slots non-empty. */
static bool
oc_table_has_room(const struct oc_keymap_table *table)
{
	return (table->live + table->tombstones + 1) * 2 <= table->mask + 1;
}

/*
 * Links `entry` (writer, map lock held; the caller checked
 * oc_table_has_room, and that no entry of the key is linked): the first
 * empty or removed slot of its probe run.
 */
static void
oc_table_put(struct oc_keymap_table *table, const oc_key_entry_t *entry)
{
	size_t index = oc_table_home(table, entry->hash);

	while (table->slots[index] != NULL && table->slots[index] != OC_SLOT_REMOVED)
		index = (index + 1) & table->mask;
	if (table->slots[index] == OC_SLOT_REMOVED)
		table->tombstones--;
	table->live++;
	/* Release: the entry's fields (initialized by the writer) are visible
	 * to a reader that loads this pointer with acquire. */
	__atomic_store_n(&table->slots[index], entry, __ATOMIC_RELEASE);
}

/* Unlinks `entry`, which is linked (writer, map lock held). */
static void
oc_table_remove(struct oc_keymap_table *table, const oc_key_entry_t *entry)
{
	size_t index = oc_table_home(table, entry->hash);

	while (table->slots[index] != entry)
		index = (index + 1) & table->mask;
	table->live--;
	table->tombstones++;
	/* Relaxed: a reader that loads the tombstone reads nothing through it;
	 * one that loaded the entry before keeps a valid entry until its read
	 * section ends (entries are retired, not freed). */
	__atomic_store_n(&table->slots[index], OC_SLOT_REMOVED, __ATOMIC_RELAXED);
}

/*
 * Iterates the linked entries (writer, map lock held): start with
 * *cursor = 0; returns NULL at the end. Removing the returned entry keeps
 * the iteration valid (it only writes a tombstone).
 */
static const oc_key_entry_t *
oc_table_next(const struct oc_keymap_table *table, size_t *cursor)
{
	while (*cursor <= table->mask) {
		const oc_key_entry_t *entry = table->slots[(*cursor)++];

		if (entry != NULL && entry != OC_SLOT_REMOVED)
			return entry;
	}
	return NULL;
}

/*
 * Replaces the table by a fresh one of at least `capacity` slots holding
 * the live entries (writer, map lock held). False, the old table kept, when
 * the allocation fails.
 */
static bool
oc_table_rebuild_locked(struct oc_keymap *map, size_t capacity)
{
	struct oc_keymap_table *old = map->table;
	struct oc_keymap_table *fresh = oc_table_create(capacity);
	const oc_key_entry_t *entry;
	size_t cursor = 0;

	if (fresh == NULL)
		return false;
	while ((entry = oc_table_next(old, &cursor)) != NULL)
		oc_table_put(fresh, entry);
	/*
	 * Release: a reader that acquires the new table pointer sees its slots
	 * filled above. Readers still probing the old table find the same
	 * entries there until it is reclaimed.
	 */
	__atomic_store_n(&map->table, fresh, __ATOMIC_RELEASE);
	oc_table_retire(old);
	return true;
}

/* ------------------------------------------------------------------------ */
/* Lookups                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The linked entry of `probe_key` (hash `hash`, compared with `equal`) in
 * the map's current table, or NULL. Lock-free: safe inside a read section or
 * under the map lock.
 */
static const oc_key_entry_t *
oc_find(const struct oc_keymap *map, uint64_t hash, const void *probe_key,
    oc_key_equal_fn *equal)
{
	/* Acquire: pairs with the release store of a rebuilt table (its mask
	 * and slots are read through the pointer). */
	const struct oc_keymap_table *table = __atomic_load_n(&map->table, __ATOMIC_ACQUIRE);
	size_t index = oc_table_home(table, hash);
	size_t probed;

	/* Bounded by the slot count as well: a run always ends at an empty
	 * slot (at most half are non-empty), so this bound is never reached. */
	for (probed = 0; probed <= table->mask; probed++) {
		/* Acquire: pairs with the release store in oc_table_put. */
		const oc_key_entry_t *entry = __atomic_load_n(&table->slots[index], __ATOMIC_ACQUIRE);

		if (entry == NULL)
			return NULL;
		if (entry != OC_SLOT_REMOVED && entry->hash == hash &&
		    (equal == NULL || equal(entry->key_context, probe_key)))
			return entry;
		index = (index + 1) & table->mask;
	}
	return NULL;
}

/*
 * The send-path lookups take a non-NULL map (their precondition, see
 * oc_keymap.h); debug builds check it, and that a read section is open.
 * A failed check that was made non-fatal (tests) finds nothing.
 */
#if OC_DEBUG_CHECKS
static bool
oc_lookup_is_misused(const oc_keymap_t *map, const char *null_map)
{
	if ((const void *)map == NULL) {
		oc__check_failed(null_map);
		return true;
	}
	OC_DEBUG_CHECK(oc_in_read_section(), "oc_keymap lookup outside a read section");
	return false;
}
#define OC_LOOKUP_IS_MISUSED(map, null_map) oc_lookup_is_misused(map, null_map)
#else
#define OC_LOOKUP_IS_MISUSED(map, null_map) false
#endif

const oc_key_entry_t *
oc_keymap_find(const oc_keymap_t *map, uint64_t hash, const void *probe_key)
{
	if (OC_LOOKUP_IS_MISUSED(map, "oc_keymap_find(NULL)"))
		return NULL;
	return oc_find(map, hash, probe_key, map->equal);
}

const oc_key_entry_t *
oc_keymap_find_hash(const oc_keymap_t *map, uint64_t hash)
{
	if (OC_LOOKUP_IS_MISUSED(map, "oc_keymap_find_hash(NULL)"))
		return NULL;
	return oc_find(map, hash, NULL, NULL);
}

oc_list_t *
oc_keymap_lookup(const oc_keymap_t *map, uint64_t hash, const void *probe_key)
{
	const oc_key_entry_t *entry;

	if (OC_LOOKUP_IS_MISUSED(map, "oc_keymap_lookup(NULL)"))
		return NULL;
	entry = oc_find(map, hash, probe_key, map->equal);
	return entry != NULL ? oc_key_entry_list(entry) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Entries (map lock held unless said otherwise)                            */
/* ------------------------------------------------------------------------ */

/*
 * Retirement callback of an unlinked entry, after its grace period: releases
 * the context that went with it (last_context), then its key context, then
 * frees it.
 */
static void
oc_entry_release(struct oc_retired *retired)
{
	struct oc_keymap_entry *entry = (struct oc_keymap_entry *)(void *)
	    ((char *)retired - offsetof(struct oc_keymap_entry, retired));

	if (entry->last_context != NULL && entry->release_context != NULL)
		entry->release_context(entry->last_context);
	if (entry->release_key != NULL)
		entry->release_key(entry->public.key_context);
	free(entry);
}

/* Publishes the map's key count. Map lock. */
static void
oc_set_key_count_locked(struct oc_keymap *map, uint64_t count)
{
	/* Release: pairs with the acquire in oc_keymap_is_empty. */
	__atomic_store_n(&map->head.key_count, count, __ATOMIC_RELEASE);
}

/* The linked entry of the key, with one more reference, or NULL. */
static struct oc_keymap_entry *
oc_acquire_locked(struct oc_keymap *map, uint64_t hash, const void *probe_key)
{
	struct oc_keymap_entry *entry = (struct oc_keymap_entry *)(uintptr_t)
	    oc_find(map, hash, probe_key, map->equal);

	/* Relaxed: increments happen under the lock, which orders them. */
	if (entry != NULL)
		__atomic_add_fetch(&entry->refs, 1, __ATOMIC_RELAXED);
	return entry;
}

/*
 * An entry's allocation: the entry, then the list head and the one-slot
 * array readers view until the key's list grows.
 */
static size_t
oc_entry_single_offset(void)
{
	return (sizeof(struct oc_keymap_entry) + 7) & ~(size_t)7;
}

/* The bytes of an entry with its one-slot list inline (its allocation). */
static size_t
oc_entry_bytes(void)
{
	return oc_entry_single_offset() + sizeof(struct oc_list_head) +
	    sizeof(struct oc_slot_array) + sizeof(struct oc_slot);
}

/*
 * The list head inline in an entry, right after the entry (see
 * oc_entry_single_offset).
 */
static struct oc_list_head *
oc_single_head(struct oc_keymap_entry *entry)
{
	return (struct oc_list_head *)(void *)((char *)entry + oc_entry_single_offset());
}

/* Right after the head (8-byte aligned: the head's size is a multiple of 8). */
static struct oc_slot_array *
oc_single_array(struct oc_keymap_entry *entry)
{
	return (struct oc_slot_array *)(void *)(oc_single_head(entry) + 1);
}

/* The one slot of an entry's inline list. */
static struct oc_slot *
oc_single_slot(struct oc_keymap_entry *entry)
{
	return &oc_single_array(entry)->slots[0];
}

/*
 * Whether `a` and `b` name the same context: equal sequence and index, and
 * `a` issued (sequence 0 is no handle's).
 */
static bool
oc_same_handle(oc_handle_t a, oc_handle_t b)
{
	return a.sequence != 0 && a.sequence == b.sequence && a.index == b.index;
}

/* Whether the one slot (of an entry not grown) holds the context `handle` names. Map lock. */
static bool
oc_single_holds(struct oc_keymap_entry *entry, oc_handle_t handle)
{
	return oc_single_slot(entry)->context != NULL && oc_same_handle(entry->single_handle, handle);
}

/* The handle `handle` stands for in the grown list (the slot's context moved). Map lock. */
static oc_handle_t
oc_grown_handle(const struct oc_keymap_entry *entry, oc_handle_t handle)
{
	return oc_same_handle(entry->single_handle, handle) ? entry->moved_handle : handle;
}

/*
 * Stores `context` in the empty slot of an entry not grown (map lock held),
 * as oc_list_add stores into a list: the slot's sequence (relaxed), then
 * its context (release: a reader that acquires it sees the sequence and
 * what the caller initialized), the array's and the head's scan limits
 * (release: they order the slot stores before the raised limit, pairing
 * with the views' and oc_list_is_empty's acquire), then the published
 * sequence (release: a view that acquires it sees all of the above).
 */
static oc_status_t
oc_single_put_locked(struct oc_keymap_entry *entry, void *context, oc_handle_t *handle)
{
	struct oc_list_head *head = oc_single_head(entry);
	struct oc_slot *slot = oc_single_slot(entry);
	uint64_t sequence;

	if (!oc__next_sequence(&sequence))
		return OC_EEXHAUSTED;
	__atomic_store_n(&slot->sequence, sequence, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->context, context, __ATOMIC_RELEASE);
	__atomic_store_n(&oc_single_array(entry)->scan_limit, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&head->scan_limit, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&head->published_sequence, sequence, __ATOMIC_RELEASE);
	entry->single_handle.sequence = sequence;
	entry->single_handle.index = 0;
	oc__live_contexts_add(1);
	*handle = entry->single_handle;
	return OC_OK;
}

/*
 * Empties the slot of an entry not grown (map lock held; it holds a
 * context) and returns the context, as oc_list.c's removal empties a slot:
 * the context NULL (release, as every store of a slot's context), the
 * sequence marked free (relaxed: a reader that loaded the old context just
 * before compares it and skips it; skipping or calling are both allowed for
 * a removal racing a send), the scan limits 0 (release, pairing with the
 * views' and oc_list_is_empty's acquire).
 */
static void *
oc_single_take_locked(struct oc_keymap_entry *entry)
{
	struct oc_slot *slot = oc_single_slot(entry);
	void *context = slot->context;

	__atomic_store_n(&slot->context, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->sequence, OC__SEQUENCE_FREE, __ATOMIC_RELAXED);
	__atomic_store_n(&oc_single_array(entry)->scan_limit, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&oc_single_head(entry)->scan_limit, 0, __ATOMIC_RELEASE);
	entry->single_handle = oc_handle_none();
	return context;
}

/*
 * Creates the key's entry holding `context` in its slot, with one reference
 * (for that context), and links it (map lock held). Returns OC_OK with the
 * context's handle in *handle, or OC_ENOMEM / OC_EEXHAUSTED with nothing
 * linked or kept.
 */
static oc_status_t
oc_entry_create_locked(struct oc_keymap *map, uint64_t hash, void *key_context,
    void *context, oc_handle_t *handle)
{
	struct oc_keymap_entry *entry;
	oc_status_t status;

	/* Growth first, so that the put below always has room. A failed
	 * allocation leaves the key absent (the add reports OC_ENOMEM). */
	if (!oc_table_has_room(map->table) &&
	    !oc_table_rebuild_locked(map, 4 * map->table->live))
		return OC_ENOMEM;
	entry = oc__alloc(oc_entry_bytes());
	if (entry == NULL)
		return OC_ENOMEM;
	memset(entry, 0, oc_entry_bytes());
	oc_single_array(entry)->capacity = 1;
	oc_single_head(entry)->array = oc_single_array(entry);
	entry->public.hash = hash;
	entry->public.key_context = key_context;
	entry->public.list = (oc_list_t *)(void *)oc_single_head(entry);
	entry->refs = 1;
	entry->release_key = map->release_key;
	entry->release_context = map->release_context;
	status = oc_single_put_locked(entry, context, handle);
	if (status != OC_OK) {
		free(entry);
		return status;
	}
	/* Publishes the entry with release: its fields and its slot are
	 * visible to every reader that finds it. */
	oc_table_put(map->table, &entry->public);
	oc_set_key_count_locked(map, map->head.key_count + 1);
	__atomic_fetch_add(&oc_keymap_live, 1, __ATOMIC_RELAXED);
	return OC_OK;
}

/* Pushes `entry` (unlinked, not yet retired) onto the chain *unlinked. */
static void
oc_chain_unlinked(struct oc_keymap_entry *entry, struct oc_keymap_entry **unlinked)
{
	entry->retired.next_ready = *unlinked != NULL ? &(*unlinked)->retired : NULL;
	*unlinked = entry;
}

/* The entry after `entry` on a chain of unlinked entries, or NULL. */
static struct oc_keymap_entry *
oc_next_unlinked(const struct oc_keymap_entry *entry)
{
	struct oc_retired *next = entry->retired.next_ready;

	return next == NULL ? NULL : (struct oc_keymap_entry *)(void *)
	    ((char *)next - offsetof(struct oc_keymap_entry, retired));
}

/*
 * Takes `entry`, left without references, out of the table (map lock) and
 * chains it on *unlinked, which the caller retires after unlocking.
 */
static void
oc_unlink_locked(struct oc_keymap *map, struct oc_keymap_entry *entry,
    struct oc_keymap_entry **unlinked)
{
	/* A tombstone replaces the slot; a reader that already loaded the
	 * entry pointer keeps a valid entry until its section ends. */
	oc_table_remove(map->table, &entry->public);
	oc_set_key_count_locked(map, map->head.key_count - 1);
	oc_chain_unlinked(entry, unlinked);
}

/* Drops `count` references; unlinks the entry when none is left. */
static void
oc_drop_locked(struct oc_keymap *map, struct oc_keymap_entry *entry, uint64_t count,
    struct oc_keymap_entry **unlinked)
{
	/* Acquire and release: oc_keymap_try_remove drops references without
	 * the map lock (with the same ordering), so the drop that reaches zero
	 * sees what every other dropper did to the entry before its drop. */
	if (__atomic_sub_fetch(&entry->refs, count, __ATOMIC_ACQ_REL) == 0)
		oc_unlink_locked(map, entry, unlinked);
}

/*
 * Under the map lock, once `*context` was taken out of `entry`: drops the
 * reference the context held. When that emptied the key, the context goes
 * with its entry (released with it after a grace period) and *context
 * becomes NULL; otherwise the caller retires *context after unlocking.
 */
static void
oc_drop_taken_locked(struct oc_keymap *map, struct oc_keymap_entry *entry, void **context,
    struct oc_keymap_entry **unlinked)
{
	oc_drop_locked(map, entry, 1, unlinked);
	if (*unlinked == entry) {
		entry->last_context = *context;
		*context = NULL;
		oc__live_contexts_add(-1);
	}
}

/* Unlinks entries left without references by a try_remove. O(keys), rare. */
static void
oc_sweep_locked(struct oc_keymap *map, struct oc_keymap_entry **unlinked)
{
	const oc_key_entry_t *linked;
	size_t cursor = 0;

	/*
	 * A relaxed load first: every writer call comes here, and the exchange
	 * is a locked instruction even when no sweep is needed. A set flag the
	 * load misses is found by the next writer call (as a set that happens
	 * just after this call would be). Acquire on the exchange: pairs with
	 * the release store after the refs decrement.
	 */
	if (!__atomic_load_n(&map->sweep_needed, __ATOMIC_RELAXED) ||
	    !__atomic_exchange_n(&map->sweep_needed, false, __ATOMIC_ACQUIRE))
		return;
	/* Unlinking only writes tombstones: the iteration stays valid. */
	while ((linked = oc_table_next(map->table, &cursor)) != NULL) {
		struct oc_keymap_entry *entry = (struct oc_keymap_entry *)(uintptr_t)linked;

		if (__atomic_load_n(&entry->refs, __ATOMIC_ACQUIRE) == 0)
			oc_unlink_locked(map, entry, unlinked);
	}
}

/*
 * Rebuilds the table without tombstones, sized for the live entries, when
 * tombstones outnumber them. A failed allocation keeps the old table.
 */
static void
oc_maybe_rebuild_locked(struct oc_keymap *map)
{
	const struct oc_keymap_table *table = map->table;

	if (table->tombstones <= table->live + OC_KEYMAP_TOMBSTONE_SLACK)
		return;
	(void)oc_table_rebuild_locked(map, 4 * table->live);
}

/*
 * Outside the lock: finishes the lists of unlinked entries (empty; nobody
 * can reach them for writing any more) and retires the entries, whose
 * release callback releases their key.
 */
static void
oc_retire_unlinked(struct oc_keymap_entry *entry)
{
	if (entry == NULL)
		return;
	while (entry != NULL) {
		/* Read before oc__retire overwrites the link. */
		struct oc_keymap_entry *next = oc_next_unlinked(entry);

		/*
		 * Nobody can write the entry any more. Its grown list is empty
		 * unless the map is being destroyed (then its contexts are
		 * released after a grace period); so is its slot. The slot's
		 * memory is the entry's: retired with it.
		 */
		if (entry->grown != NULL)
			oc_list_destroy(entry->grown);
		else if (oc_single_slot(entry)->context != NULL)
			oc__list_retire_taken(entry->release_context, oc_single_take_locked(entry));
		oc__retire(&entry->retired, oc_entry_release, oc_entry_bytes());
		__atomic_fetch_sub(&oc_keymap_live, 1, __ATOMIC_RELAXED);
		entry = next;
	}
	/* Throttled, as every list writer's: a key created and removed per
	 * subscribe/cancel pair must not scan the epoch records (and issue a
	 * membarrier) each time; garbage stays bounded by the threshold. */
	oc__writer_poll();
}

/* Takes the lock and runs the deferred sweep (blocking writers only). */
static void
oc_lock(struct oc_keymap *map, struct oc_keymap_entry **unlinked)
{
	oc_word_lock(&map->lock);
	oc_sweep_locked(map, unlinked);
}

/* Drops `count` references of an entry the caller holds, then unlocks. */
static void
oc_drop(struct oc_keymap *map, struct oc_keymap_entry *entry, uint64_t count)
{
	struct oc_keymap_entry *unlinked = NULL;

	oc_lock(map, &unlinked);
	oc_drop_locked(map, entry, count, &unlinked);
	oc_maybe_rebuild_locked(map);
	oc_word_unlock(&map->lock);
	oc_retire_unlinked(unlinked);
}

/* ------------------------------------------------------------------------ */
/* Maps                                                                     */
/* ------------------------------------------------------------------------ */

oc_keymap_t *
oc_keymap_create(oc_key_equal_fn *equal, oc_release_fn *release_key,
    oc_release_fn *release_context)
{
	struct oc_keymap *map;

	if (equal == NULL)
		return NULL;
	map = oc__alloc(sizeof *map);
	if (map == NULL)
		return NULL;
	memset(map, 0, sizeof *map);
	map->table = oc_table_create(OC_KEYMAP_MIN_CAPACITY);
	if (map->table == NULL) {
		free(map);
		return NULL;
	}
	map->equal = equal;
	map->release_key = release_key;
	map->release_context = release_context;
	return map;
}

/* Retirement callback of a destroyed map, after its grace period: frees it. */
static void
oc_map_release(struct oc_retired *retired)
{
	free((char *)retired - offsetof(struct oc_keymap, retired));
}

void
oc_keymap_destroy(oc_keymap_t *map)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_table *table;
	const oc_key_entry_t *linked;
	size_t cursor = 0;

	if (map == NULL)
		return;
	oc_word_lock(&map->lock);
	/* The whole table is retired: no need to remove entries from it. */
	table = map->table;
	while ((linked = oc_table_next(table, &cursor)) != NULL) {
		struct oc_keymap_entry *entry = (struct oc_keymap_entry *)(uintptr_t)linked;

		oc_chain_unlinked(entry, &unlinked);
	}
	oc_set_key_count_locked(map, 0);
	oc_word_unlock(&map->lock);

	oc_retire_unlinked(unlinked);
	/* Readers that looked a key up before may still probe the table. */
	oc_table_retire(table);
	oc__retire(&map->retired, oc_map_release, sizeof *map);
	oc_reclaim_poll();
}

/*
 * Gives the key of `entry` its own list (outside the map lock, with a
 * reference on `entry` taken for `context`): a list holding the slot's
 * context `moving` (handle `moved_from`) and `context`, published in place
 * of the slot if the slot still holds `moving` then. Returns true when done
 * (*status says how; on failure the reference was dropped and nothing
 * changed), false when the slot changed meanwhile (the reference was
 * dropped and nothing changed: the caller starts over).
 *
 * The list is filled while no reader can see it (oc_list_add polls
 * reclamation, which may run release callbacks that call into the map:
 * never under the map lock); `moving` stays in the slot as well, so a reader
 * that viewed the slot before the list was published still finds it there.
 */
static bool
oc_entry_grow(struct oc_keymap *map, struct oc_keymap_entry *entry, void *moving,
    oc_handle_t moved_from, void *context, oc_handle_t *handle, oc_status_t *status)
{
	struct oc_keymap_entry *unlinked = NULL;
	oc_list_t *list = oc_list_create(map->release_context);
	oc_handle_t moved_to;
	void *taken;
	bool published = false;

	if (list == NULL) {
		oc_drop(map, entry, 1);
		*status = OC_ENOMEM;
		return true;
	}
	*status = oc_list_add(list, moving, &moved_to);
	if (*status == OC_OK) {
		*status = oc_list_add(list, context, handle);
		if (*status != OC_OK) {
			(void)oc__list_take(list, moved_to, &taken);
			/* Counted by its add; it stays in the slot. */
			oc__live_contexts_add(-1);
		}
	}
	if (*status != OC_OK) {
		*handle = oc_handle_none();
		oc_list_destroy(list);
		oc_drop(map, entry, 1);
		return true;
	}
	oc_lock(map, &unlinked);
	if (entry->grown == NULL && oc_same_handle(entry->single_handle, moved_from)) {
		entry->grown = list;
		entry->moved_handle = moved_to;
		/*
		 * Release: a reader that acquires the new list pointer
		 * (oc_key_entry_list) sees the list's head and both contexts,
		 * published before under the list's lock. The slot's context was
		 * counted live when the slot took it: counted once.
		 */
		__atomic_store_n(&entry->public.list, list, __ATOMIC_RELEASE);
		oc__live_contexts_add(-1);
		published = true;
	}
	oc_word_unlock(&map->lock);
	oc_retire_unlinked(unlinked);
	if (published)
		return true;
	/* The slot's context was removed meanwhile: undo, start over. */
	(void)oc__list_take(list, moved_to, &taken);
	(void)oc__list_take(list, *handle, &taken);
	oc__live_contexts_add(-2);
	*handle = oc_handle_none();
	oc_list_destroy(list);
	oc_drop(map, entry, 1);
	return false;
}

oc_status_t
oc_keymap_add(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    void *key_context, void *context, oc_handle_t *handle, bool *key_adopted)
{
	if (handle != NULL)
		*handle = oc_handle_none();
	if (key_adopted != NULL)
		*key_adopted = false;
	if (map == NULL || probe_key == NULL || key_context == NULL ||
	    context == NULL || handle == NULL || key_adopted == NULL)
		return OC_EINVAL;

	for (;;) {
		struct oc_keymap_entry *unlinked = NULL;
		struct oc_keymap_entry *entry;
		oc_list_t *list;
		oc_status_t status;
		oc_handle_t moved_from;
		void *moving;

		oc_lock(map, &unlinked);
		entry = (struct oc_keymap_entry *)(uintptr_t)oc_find(map, hash, probe_key, map->equal);
		if (entry == NULL) {
			/* A new key: the context goes into its slot. */
			status = oc_entry_create_locked(map, hash, key_context, context, handle);
			oc_word_unlock(&map->lock);
			oc_retire_unlinked(unlinked);
			*key_adopted = status == OC_OK;
			return status;
		}
		if (entry->grown == NULL && oc_single_slot(entry)->context == NULL) {
			/* Emptied while a writer call holds a reference. */
			status = oc_single_put_locked(entry, context, handle);
			/* Relaxed: increments happen under the lock, which orders them. */
			if (status == OC_OK)
				__atomic_add_fetch(&entry->refs, 1, __ATOMIC_RELAXED);
			oc_word_unlock(&map->lock);
			oc_retire_unlinked(unlinked);
			return status;
		}
		/* A reference for the context (relaxed: under the lock, as above). */
		__atomic_add_fetch(&entry->refs, 1, __ATOMIC_RELAXED);
		list = entry->grown;
		moving = oc_single_slot(entry)->context;
		moved_from = entry->single_handle;
		oc_word_unlock(&map->lock);
		oc_retire_unlinked(unlinked);

		if (list != NULL) {
			/* Outside the map lock: oc_list_add polls reclamation. */
			status = oc_list_add(list, context, handle);
			/* On success the reference now stands for the context. */
			if (status != OC_OK)
				oc_drop(map, entry, 1);
			return status;
		}
		if (oc_entry_grow(map, entry, moving, moved_from, context, handle, &status))
			return status;
	}
}

/*
 * Under the map lock, `entry` linked and not grown: when its single slot
 * holds `handle`, takes the context out, drops the reference it held and
 * returns OC_OK; *context is then what the caller retires after unlocking
 * (NULL when it went with its entry, see oc_drop_taken_locked). Otherwise
 * returns OC_ENOENT and changes nothing.
 */
static oc_status_t
oc_single_remove_locked(struct oc_keymap *map, struct oc_keymap_entry *entry,
    oc_handle_t handle, void **context, struct oc_keymap_entry **unlinked)
{
	if (!oc_single_holds(entry, handle))
		return OC_ENOENT;
	*context = oc_single_take_locked(entry);
	oc_drop_taken_locked(map, entry, context, unlinked);
	return OC_OK;
}

/*
 * Releases the map lock, then retires what a removal took out under it:
 * `context` (NULL: none, or it went with its entry) and the entries it
 * unlinked. Retiring outside the lock: it may poll reclamation.
 */
static void
oc_unlock_and_retire(struct oc_keymap *map, void *context,
    struct oc_keymap_entry *unlinked)
{
	oc_word_unlock(&map->lock);
	if (context != NULL)
		oc__list_retire_taken(map->release_context, context);
	oc_retire_unlinked(unlinked);
}

oc_status_t
oc_keymap_remove(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    oc_handle_t handle)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry *entry;
	void *context = NULL;
	oc_status_t status = OC_ENOENT;

	if (map == NULL || probe_key == NULL)
		return OC_EINVAL;
	/*
	 * One pass under the map lock: the list lock nests inside it (as in
	 * oc_keymap_contains), and taking the context out runs no callback
	 * and does not poll; the context is retired after unlocking. Holding
	 * the map lock keeps the entry linked, so no reference is taken.
	 */
	oc_lock(map, &unlinked);
	entry = (struct oc_keymap_entry *)(uintptr_t)oc_find(map, hash, probe_key, map->equal);
	if (entry != NULL && entry->grown != NULL) {
		status = oc__list_take(entry->grown, oc_grown_handle(entry, handle), &context);
		if (status == OC_OK)
			oc_drop_taken_locked(map, entry, &context, &unlinked);
	} else if (entry != NULL) {
		status = oc_single_remove_locked(map, entry, handle, &context, &unlinked);
	}
	if (status == OC_OK)
		oc_maybe_rebuild_locked(map);
	oc_unlock_and_retire(map, context, unlinked);
	if (status == OC_OK)
		oc__writer_poll();
	return status;
}

oc_status_t
oc_keymap_try_remove(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    oc_handle_t handle)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry *entry;
	oc_list_t *list;
	oc_status_t status;
	uint64_t count;
	void *context = NULL;

	if (map == NULL || probe_key == NULL)
		return OC_EINVAL;
	/* No sweep here: it is O(keys), and this runs on the send path. */
	if (!oc_word_trylock(&map->lock))
		return OC_EBUSY;
	entry = (struct oc_keymap_entry *)(uintptr_t)oc_find(map, hash, probe_key, map->equal);
	if (entry == NULL) {
		oc_word_unlock(&map->lock);
		return OC_ENOENT;
	}
	if (entry->grown == NULL) {
		/* The slot is written under the map lock, which this call holds. */
		status = oc_single_remove_locked(map, entry, handle, &context, &unlinked);
		oc_unlock_and_retire(map, context, unlinked);
		return status;
	}
	/* Relaxed: increments happen under the lock, which orders them. */
	__atomic_add_fetch(&entry->refs, 1, __ATOMIC_RELAXED);
	list = entry->grown;
	handle = oc_grown_handle(entry, handle);
	oc_word_unlock(&map->lock);

	status = oc_list_try_remove(list, handle);
	count = status == OC_OK ? 2 : 1;
	if (oc_word_trylock(&map->lock)) {
		oc_drop_locked(map, entry, count, &unlinked);
		oc_word_unlock(&map->lock);
		oc_retire_unlinked(unlinked);
	} else if (__atomic_sub_fetch(&entry->refs, count, __ATOMIC_ACQ_REL) == 0) {
		/*
		 * The key emptied but cannot be unlinked now. We must not touch
		 * the entry again (a writer may unlink and retire it any time);
		 * release: the next writer's sweep sees refs == 0.
		 */
		__atomic_store_n(&map->sweep_needed, true, __ATOMIC_RELEASE);
	}
	return status;
}

/*
 * Removes from `entry` (the caller holds a reference) every context for
 * which `predicate` is true (all when NULL); returns how many, whose
 * references the caller drops. A grown list's contexts are removed outside
 * the map lock (the predicate under the list's lock); the slot's under the
 * map lock, which its writers take. Removed contexts are released after a
 * grace period.
 */
static size_t
oc_entry_remove_if(struct oc_keymap *map, struct oc_keymap_entry *entry,
    oc_context_predicate_fn *predicate, void *argument)
{
	oc_list_t *list;
	void *context = NULL;

	oc_word_lock(&map->lock);
	list = entry->grown;
	if (list == NULL) {
		void *held = oc_single_slot(entry)->context;

		if (held != NULL && (predicate == NULL || predicate(held, argument)))
			context = oc_single_take_locked(entry);
	}
	oc_word_unlock(&map->lock);
	if (list != NULL)
		return predicate != NULL ? oc_list_remove_if(list, predicate, argument) : oc_list_clear(list);
	if (context == NULL)
		return 0;
	oc__list_retire_taken(map->release_context, context);
	oc__writer_poll();
	return 1;
}

oc_status_t
oc_keymap_remove_key_if(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    oc_context_predicate_fn *predicate, void *argument,
    size_t *removed)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry *entry;
	size_t count;

	if (removed != NULL)
		*removed = 0;
	if (map == NULL || probe_key == NULL)
		return OC_EINVAL;
	oc_lock(map, &unlinked);
	entry = oc_acquire_locked(map, hash, probe_key);
	oc_word_unlock(&map->lock);
	oc_retire_unlinked(unlinked);
	if (entry == NULL)
		return OC_ENOENT;

	count = oc_entry_remove_if(map, entry, predicate, argument);
	oc_drop(map, entry, (uint64_t)count + 1);
	if (removed != NULL)
		*removed = count;
	return OC_OK;
}

/*
 * Every linked entry, each with one more reference, in a new array (free
 * it). NULL with *count 0 when there is no key; NULL with *count
 * SIZE_MAX when the array cannot be allocated.
 */
static struct oc_keymap_entry **
oc_snapshot(struct oc_keymap *map, size_t *count)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry **entries = NULL;
	const oc_key_entry_t *linked;
	size_t taken = 0, cursor = 0;

	oc_lock(map, &unlinked);
	if (map->head.key_count > 0) {
		entries = oc__alloc((size_t)map->head.key_count * sizeof *entries);
		if (entries == NULL) {
			oc_word_unlock(&map->lock);
			oc_retire_unlinked(unlinked);
			*count = SIZE_MAX;
			return NULL;
		}
		while ((linked = oc_table_next(map->table, &cursor)) != NULL) {
			struct oc_keymap_entry *entry = (struct oc_keymap_entry *)(uintptr_t)linked;

			__atomic_add_fetch(&entry->refs, 1, __ATOMIC_RELAXED);
			entries[taken++] = entry;
		}
	}
	oc_word_unlock(&map->lock);
	oc_retire_unlinked(unlinked);
	*count = taken;
	return entries;
}

oc_status_t
oc_keymap_remove_if(oc_keymap_t *map,
    oc_context_predicate_fn *predicate, void *argument,
    size_t *removed)
{
	struct oc_keymap_entry **entries;
	size_t count, index, total = 0;

	if (removed != NULL)
		*removed = 0;
	if (map == NULL)
		return OC_EINVAL;
	entries = oc_snapshot(map, &count);
	if (count == SIZE_MAX)
		return OC_ENOMEM;
	for (index = 0; index < count; index++) {
		struct oc_keymap_entry *entry = entries[index];
		size_t gone = oc_entry_remove_if(map, entry, predicate, argument);

		oc_drop(map, entry, (uint64_t)gone + 1);
		total += gone;
	}
	free(entries);
	if (removed != NULL)
		*removed = total;
	return OC_OK;
}

oc_status_t
oc_keymap_clear(oc_keymap_t *map, size_t *removed)
{
	return oc_keymap_remove_if(map, NULL, NULL, removed);
}

oc_status_t
oc_keymap_for_each(oc_keymap_t *map,
    oc_key_visit_fn *visit, void *argument)
{
	struct oc_keymap_entry **entries;
	size_t count, index;
	bool going = true;

	if (map == NULL || visit == NULL)
		return OC_EINVAL;
	entries = oc_snapshot(map, &count);
	if (count == SIZE_MAX)
		return OC_ENOMEM;
	for (index = 0; index < count; index++) {
		if (going)
			going = visit(&entries[index]->public, argument);
		oc_drop(map, entries[index], 1);
	}
	free(entries);
	return OC_OK;
}

oc_status_t
oc_keymap_visit_some(oc_keymap_t *map, size_t *cursor, size_t slots,
    oc_key_visit_fn *visit, void *argument)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry *entries[OC_KEYMAP_VISIT_MAX];
	size_t taken = 0, index, position, table_slots;
	bool going = true;

	if (map == NULL || cursor == NULL || visit == NULL)
		return OC_EINVAL;
	if (slots > OC_KEYMAP_VISIT_MAX)
		slots = OC_KEYMAP_VISIT_MAX;
	oc_lock(map, &unlinked);
	table_slots = map->table->mask + 1;
	/* A cursor left by an older, larger table starts over. */
	position = *cursor < table_slots ? *cursor : 0;
	for (index = 0; index < slots && index < table_slots; index++) {
		const oc_key_entry_t *linked = map->table->slots[position];

		position = (position + 1) & map->table->mask;
		if (linked == NULL || linked == OC_SLOT_REMOVED)
			continue;
		/* A reference, as oc_snapshot takes: the entry stays linked
		 * (and its list alive) until the visit has returned. Relaxed:
		 * taken under the map lock, which orders it. */
		__atomic_add_fetch(&((struct oc_keymap_entry *)(uintptr_t)linked)->refs, 1,
		    __ATOMIC_RELAXED);
		entries[taken++] = (struct oc_keymap_entry *)(uintptr_t)linked;
	}
	*cursor = position;
	oc_word_unlock(&map->lock);
	oc_retire_unlinked(unlinked);
	for (index = 0; index < taken; index++) {
		if (going)
			going = visit(&entries[index]->public, argument);
		oc_drop(map, entries[index], 1);
	}
	return OC_OK;
}

bool
oc_keymap_contains(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    oc_handle_t handle)
{
	const oc_key_entry_t *entry;
	bool contains;

	if (map == NULL || probe_key == NULL)
		return false;
	/* Under the map lock the entry cannot be unlinked; list lock nests. */
	oc_word_lock(&map->lock);
	entry = oc_find(map, hash, probe_key, map->equal);
	if (entry == NULL) {
		contains = false;
	} else {
		struct oc_keymap_entry *found = (struct oc_keymap_entry *)(uintptr_t)entry;

		contains = found->grown != NULL
		    ? oc_list_contains(found->grown, oc_grown_handle(found, handle))
		    : oc_single_holds(found, handle);
	}
	oc_word_unlock(&map->lock);
	return contains;
}

size_t
oc_keymap_count(oc_keymap_t *map, uint64_t hash, const void *probe_key)
{
	const oc_key_entry_t *entry;
	size_t count;

	if (map == NULL || probe_key == NULL)
		return 0;
	oc_word_lock(&map->lock);
	entry = oc_find(map, hash, probe_key, map->equal);
	if (entry == NULL) {
		count = 0;
	} else {
		struct oc_keymap_entry *found = (struct oc_keymap_entry *)(uintptr_t)entry;

		count = found->grown != NULL ? oc_list_count(found->grown)
		    : oc_single_slot(found)->context != NULL ? 1 : 0;
	}
	oc_word_unlock(&map->lock);
	return count;
}

size_t
oc_keymap_key_count(const oc_keymap_t *map)
{
	if (map == NULL)
		return 0;
	return (size_t)__atomic_load_n(&map->head.key_count, __ATOMIC_ACQUIRE);
}

size_t
oc_keymap_table_bytes(oc_keymap_t *map)
{
	size_t bytes;

	if (map == NULL)
		return 0;
	oc_word_lock(&map->lock);
	bytes = oc_table_bytes(map->table->mask + 1);
	oc_word_unlock(&map->lock);
	return bytes;
}

uint64_t
oc_keymap_live_keys(void)
{
	return __atomic_load_n(&oc_keymap_live, __ATOMIC_RELAXED);
}
