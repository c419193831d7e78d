/*
 * Keyed observer lists: a Concurrency Kit ck_hs hash set (SPMC) of entries
 * { hash, key_context, list }, one observer list per key. See oc_keymap.h
 * for the contract.
 *
 * How ck_hs is used, and the quirks worked around:
 *   - Objects stored are entry pointers (CK_HS_MODE_OBJECT); the hash
 *     callback returns the entry's stored hash, so ck_hs never needs the
 *     key itself.
 *   - ck_hs passes its `key` argument to the compare callback both for
 *     lookups (our probe: hash + caller's key + equality callback) and for
 *     put/remove (the entry itself). A probe is laid out like an entry with
 *     a NULL list, which no entry has; comparing against an entry answers
 *     false, since ck_hs checks pointer identity itself first.
 *   - This libck is built without pointer packing (CK_MD_POINTER_PACK_
 *     DISABLE), so ck_hs does not filter slots by hash bits before calling
 *     compare: the callback compares the stored 64-bit hash first and calls
 *     the caller's (Swift) equality only on a hash match.
 *   - ck_hs never cleans tombstones nor shrinks on its own. After removals,
 *     once tombstones outnumber live entries (plus slack), the table is
 *     rebuilt into a fresh ck_hs sized for the live entries and published
 *     with one release store of `table`; the old one is retired. Amortized
 *     O(1) per removal.
 *   - Every array ck_hs allocates carries a retirement header (see
 *     oc_hs_malloc), so its free(p, size, defer=true) — the old array after
 *     growth, which readers may still probe — goes through oc__retire.
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
#define _POSIX_C_SOURCE 200809L
#include "oc_internal.h"

#include <ck_hs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * No CK_HS_MODE_DELETE: its per-slot probe bounds live in a separate array,
 * one more cache miss per lookup of a cold key; tombstones are bounded by
 * the rebuild policy instead, so the global probe maximum stays short.
 */
#define OC_KEYMAP_MODE (CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT)
#define OC_KEYMAP_MIN_CAPACITY 16ul
/* Tombstones tolerated beyond the live entry count before a rebuild. */
#define OC_KEYMAP_TOMBSTONE_SLACK 64ul

/* A block allocated for ck_hs, with a header so it can be retired. */
struct oc_hs_block {
	struct oc_retired retired; /* first: released with free(block) */
	size_t bytes;
	max_align_t payload[];
};

struct oc_keymap_table {
	ck_hs_t hs;
	struct oc_retired retired;
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
	/* Under the map lock: chains entries unlinked by one writer call. */
	struct oc_keymap_entry *next_unlinked;
	struct oc_retired retired;
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
	pthread_mutex_t lock;
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
/* ck_hs callbacks                                                          */
/* ------------------------------------------------------------------------ */

static void *
oc_hs_malloc(size_t bytes)
{
	struct oc_hs_block *block = oc__alloc(sizeof *block + bytes);

	if (block == NULL)
		return NULL;
	/*
	 * Zeroed: ck_hs_map_create (0.7.1) leaves the map's `tombstones`
	 * counter uninitialized, and the rebuild policy reads it.
	 */
	memset(block, 0, sizeof *block + bytes);
	block->bytes = sizeof *block + bytes;
	return block->payload;
}

static struct oc_hs_block *
oc_hs_block_of(void *pointer)
{
	return (struct oc_hs_block *)(void *)
	    ((char *)pointer - offsetof(struct oc_hs_block, payload));
}

static void
oc_hs_release_block(struct oc_retired *retired)
{
	free(retired);
}

/*
 * ck_hs frees with defer=true what readers may still see (the array
 * replaced by growth): retired, released after a grace period. defer=false
 * is only used for memory never published (a growth attempt that failed):
 * freed at once.
 */
static void
oc_hs_free(void *pointer, size_t bytes, bool defer)
{
	struct oc_hs_block *block;

	(void)bytes;
	if (pointer == NULL)
		return;
	block = oc_hs_block_of(pointer);
	if (defer)
		oc__retire(&block->retired, oc_hs_release_block, block->bytes);
	else
		free(block);
}

static struct ck_malloc oc_hs_allocator = {
	.malloc = oc_hs_malloc,
	.realloc = NULL,
	.free = oc_hs_free
};

/* Only ever called with stored entries (growth, gc): their stored hash. */
static unsigned long
oc_hs_hash(const void *object, unsigned long seed)
{
	(void)seed;
	return (unsigned long)((const oc_key_entry_t *)object)->hash;
}

static bool
oc_hs_compare(const void *stored, const void *argument)
{
	const oc_key_entry_t *entry = stored;
	const struct oc_keymap_probe *probe = argument;

	/* Pairs with the release before ck_hs_put (see oc_entry_create). */
	OC_TSAN_ACQUIRE(entry);
	/* put/remove pass an entry: identity only, which ck_hs tests itself. */
	if (probe->as_entry.list != NULL)
		return false;
	if (entry->hash != probe->as_entry.hash)
		return false;
	return probe->equal == NULL ||
	    probe->equal(entry->key_context, probe->as_entry.key_context);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */
/* ------------------------------------------------------------------------ */

static struct oc_keymap_table *
oc_table_create(unsigned long capacity)
{
	struct oc_keymap_table *table = oc__alloc(sizeof *table);

	if (table == NULL)
		return NULL;
	memset(table, 0, sizeof *table);
	if (capacity < OC_KEYMAP_MIN_CAPACITY)
		capacity = OC_KEYMAP_MIN_CAPACITY;
	if (!ck_hs_init(&table->hs, OC_KEYMAP_MODE, oc_hs_hash, oc_hs_compare,
	    &oc_hs_allocator, capacity, 0)) {
		free(table);
		return NULL;
	}
	return table;
}

static void
oc_table_release(struct oc_retired *retired)
{
	free((char *)retired - offsetof(struct oc_keymap_table, retired));
}

/* A table readers may have seen: its array and itself after a grace period. */
static void
oc_table_retire(struct oc_keymap_table *table)
{
	oc_hs_free(table->hs.map, 0, true);
	oc__retire(&table->retired, oc_table_release, sizeof *table);
}

/* A table never published. */
static void
oc_table_discard(struct oc_keymap_table *table)
{
	oc_hs_free(table->hs.map, 0, false);
	free(table);
}

/* ------------------------------------------------------------------------ */
/* Lookups                                                                  */
/* ------------------------------------------------------------------------ */

static const oc_key_entry_t *
oc_find(const struct oc_keymap *map, uint64_t hash, const void *probe_key,
    oc_key_equal_fn *equal)
{
	struct oc_keymap_probe probe;
	/* Acquire: pairs with the release store of a rebuilt table. A plain
	 * load on x86; `ldar` on ARM, required there (the table's fields and
	 * array are read through the pointer). */
	struct oc_keymap_table *table = __atomic_load_n(&map->table, __ATOMIC_ACQUIRE);

	probe.as_entry.hash = hash;
	probe.as_entry.key_context = (void *)(uintptr_t)probe_key;
	probe.as_entry.list = NULL;
	probe.equal = equal;
	{
		const oc_key_entry_t *entry = ck_hs_get(&table->hs, (unsigned long)hash, &probe);

		/* The caller reads the entry's fields: pairs with OC_TSAN_RELEASE. */
		if (entry != NULL)
			OC_TSAN_ACQUIRE(entry);
		return entry;
	}
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
	return entry != NULL ? entry->list : NULL;
}

/* ------------------------------------------------------------------------ */
/* Entries (map lock held unless said otherwise)                            */
/* ------------------------------------------------------------------------ */

static void
oc_entry_release(struct oc_retired *retired)
{
	struct oc_keymap_entry *entry = (struct oc_keymap_entry *)(void *)
	    ((char *)retired - offsetof(struct oc_keymap_entry, retired));

	if (entry->release_key != NULL)
		entry->release_key(entry->public.key_context);
	free(entry);
}

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
 * Creates the key's entry holding one reference (the caller's add). On
 * failure returns NULL and hands back in *orphan a list to destroy after
 * unlocking (destroying polls reclamation, never done under the lock).
 */
static struct oc_keymap_entry *
oc_entry_create_locked(struct oc_keymap *map, uint64_t hash, void *key_context,
    oc_list_t **orphan)
{
	struct oc_keymap_entry *entry = oc__alloc(sizeof *entry);
	oc_list_t *list = oc_list_create(map->release_context);

	if (entry == NULL || list == NULL) {
		free(entry);
		*orphan = list;
		return NULL;
	}
	memset(entry, 0, sizeof *entry);
	entry->public.hash = hash;
	entry->public.key_context = key_context;
	entry->public.list = list;
	entry->refs = 1;
	entry->release_key = map->release_key;
	/*
	 * Release fence: the entry's fields and its list are initialized
	 * before ck_hs_put publishes the pointer with a plain (ck_pr) store;
	 * readers reach them through that pointer. On x86 the fence compiles
	 * to nothing (stores are not reordered with stores); on ARM it is a
	 * `dmb ish`, required there. Readers rely on the address dependency
	 * from the loaded pointer to the fields (as every ck_hs reader does):
	 * ARM and POWER hardware honour it, and no load here is speculated
	 * through the pointer by the compiler, but it is the one place where
	 * the ordering argument is a dependency rather than an acquire.
	 */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* The same edge for ThreadSanitizer, which does not follow fences. */
	OC_TSAN_RELEASE(entry);
	if (!ck_hs_put(&map->table->hs, (unsigned long)hash, entry)) {
		free(entry);
		*orphan = list;
		return NULL;
	}
	oc_set_key_count_locked(map, map->head.key_count + 1);
	__atomic_fetch_add(&oc_keymap_live, 1, __ATOMIC_RELAXED);
	return entry;
}

static void
oc_unlink_locked(struct oc_keymap *map, struct oc_keymap_entry *entry,
    struct oc_keymap_entry **unlinked)
{
	/* A tombstone replaces the slot; a reader that already loaded the
	 * entry pointer keeps a valid entry until its section ends. */
	ck_hs_remove(&map->table->hs, (unsigned long)entry->public.hash, entry);
	oc_set_key_count_locked(map, map->head.key_count - 1);
	entry->next_unlinked = *unlinked;
	*unlinked = entry;
}

/* Drops `count` references; unlinks the entry when none is left. */
static void
oc_drop_locked(struct oc_keymap *map, struct oc_keymap_entry *entry, uint64_t count,
    struct oc_keymap_entry **unlinked)
{
	if (__atomic_sub_fetch(&entry->refs, count, __ATOMIC_ACQ_REL) == 0)
		oc_unlink_locked(map, entry, unlinked);
}

/* Unlinks entries left without references by a try_remove. O(keys), rare. */
static void
oc_sweep_locked(struct oc_keymap *map, struct oc_keymap_entry **unlinked)
{
	ck_hs_iterator_t iterator = CK_HS_ITERATOR_INITIALIZER;
	void *object;

	/* Acquire: pairs with the release store after the refs decrement. */
	if (!__atomic_exchange_n(&map->sweep_needed, false, __ATOMIC_ACQUIRE))
		return;
	/* ck_hs_remove only writes tombstones: the iteration stays valid. */
	while (ck_hs_next(&map->table->hs, &iterator, &object)) {
		struct oc_keymap_entry *entry = object;

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
	struct oc_keymap_table *old = map->table;
	struct oc_keymap_table *fresh;
	ck_hs_iterator_t iterator = CK_HS_ITERATOR_INITIALIZER;
	struct ck_hs_stat stat;
	void *object;

	ck_hs_stat(&old->hs, &stat);
	if (stat.tombstones <= stat.n_entries + OC_KEYMAP_TOMBSTONE_SLACK)
		return;
	fresh = oc_table_create(stat.n_entries * 2);
	if (fresh == NULL)
		return;
	while (ck_hs_next(&old->hs, &iterator, &object)) {
		const oc_key_entry_t *entry = object;

		if (!ck_hs_put(&fresh->hs, (unsigned long)entry->hash, entry)) {
			oc_table_discard(fresh);
			return;
		}
	}
	/*
	 * Release: a reader that acquires the new table pointer sees the slots
	 * filled above. Readers still probing the old table find the same
	 * entries there until it is reclaimed.
	 */
	__atomic_store_n(&map->table, fresh, __ATOMIC_RELEASE);
	oc_table_retire(old);
}

/*
 * Outside the lock: destroys the lists of unlinked entries (empty; nobody
 * can reach them for writing any more) and retires the entries, whose
 * release callback releases their key.
 */
static void
oc_retire_unlinked(struct oc_keymap_entry *entry)
{
	if (entry == NULL)
		return;
	while (entry != NULL) {
		struct oc_keymap_entry *next = entry->next_unlinked;

		oc_list_destroy(entry->public.list);
		oc__retire(&entry->retired, oc_entry_release, sizeof *entry);
		__atomic_fetch_sub(&oc_keymap_live, 1, __ATOMIC_RELAXED);
		entry = next;
	}
	oc_reclaim_poll();
}

/* Takes the lock and runs the deferred sweep (blocking writers only). */
static void
oc_lock(struct oc_keymap *map, struct oc_keymap_entry **unlinked)
{
	pthread_mutex_lock(&map->lock);
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
	pthread_mutex_unlock(&map->lock);
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
	if (pthread_mutex_init(&map->lock, NULL) != 0) {
		oc_table_discard(map->table);
		free(map);
		return NULL;
	}
	map->equal = equal;
	map->release_key = release_key;
	map->release_context = release_context;
	return map;
}

static void
oc_map_release(struct oc_retired *retired)
{
	free((char *)retired - offsetof(struct oc_keymap, retired));
}

void
oc_keymap_destroy(oc_keymap_t *map)
{
	ck_hs_iterator_t iterator = CK_HS_ITERATOR_INITIALIZER;
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_table *table;
	void *object;

	if (map == NULL)
		return;
	pthread_mutex_lock(&map->lock);
	/* The whole table is retired: no need to remove entries from it. */
	table = map->table;
	while (ck_hs_next(&table->hs, &iterator, &object)) {
		struct oc_keymap_entry *entry = object;

		entry->next_unlinked = unlinked;
		unlinked = entry;
	}
	oc_set_key_count_locked(map, 0);
	pthread_mutex_unlock(&map->lock);

	oc_retire_unlinked(unlinked);
	pthread_mutex_destroy(&map->lock);
	/* Readers that looked a key up before may still probe the table. */
	oc_table_retire(table);
	oc__retire(&map->retired, oc_map_release, sizeof *map);
	oc_reclaim_poll();
}

oc_status_t
oc_keymap_add(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    void *key_context, void *context, oc_handle_t *handle, bool *key_adopted)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry *entry;
	oc_list_t *orphan = NULL;
	oc_status_t status;

	if (handle != NULL)
		*handle = oc_handle_none();
	if (key_adopted != NULL)
		*key_adopted = false;
	if (map == NULL || probe_key == NULL || key_context == NULL ||
	    context == NULL || handle == NULL || key_adopted == NULL)
		return OC_EINVAL;

	oc_lock(map, &unlinked);
	entry = oc_acquire_locked(map, hash, probe_key);
	if (entry == NULL) {
		entry = oc_entry_create_locked(map, hash, key_context, &orphan);
		if (entry == NULL) {
			pthread_mutex_unlock(&map->lock);
			oc_list_destroy(orphan);
			oc_retire_unlinked(unlinked);
			return OC_ENOMEM;
		}
		*key_adopted = true;
	}
	pthread_mutex_unlock(&map->lock);
	oc_retire_unlinked(unlinked);

	/* Outside the map lock: oc_list_add polls reclamation. */
	status = oc_list_add(entry->public.list, context, handle);
	/* On success the caller's reference now stands for the context. */
	if (status != OC_OK)
		oc_drop(map, entry, 1);
	return status;
}

oc_status_t
oc_keymap_remove(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    oc_handle_t handle)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry *entry;
	oc_status_t status;

	if (map == NULL || probe_key == NULL)
		return OC_EINVAL;
	oc_lock(map, &unlinked);
	entry = oc_acquire_locked(map, hash, probe_key);
	pthread_mutex_unlock(&map->lock);
	oc_retire_unlinked(unlinked);
	if (entry == NULL)
		return OC_ENOENT;

	status = oc_list_remove(entry->public.list, handle);
	oc_drop(map, entry, status == OC_OK ? 2 : 1);
	return status;
}

oc_status_t
oc_keymap_try_remove(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    oc_handle_t handle)
{
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry *entry;
	oc_status_t status;
	uint64_t count;

	if (map == NULL || probe_key == NULL)
		return OC_EINVAL;
	/* No sweep here: it is O(keys), and this runs on the send path. */
	if (pthread_mutex_trylock(&map->lock) != 0)
		return OC_EBUSY;
	entry = oc_acquire_locked(map, hash, probe_key);
	pthread_mutex_unlock(&map->lock);
	if (entry == NULL)
		return OC_ENOENT;

	status = oc_list_try_remove(entry->public.list, handle);
	count = status == OC_OK ? 2 : 1;
	if (pthread_mutex_trylock(&map->lock) == 0) {
		oc_drop_locked(map, entry, count, &unlinked);
		pthread_mutex_unlock(&map->lock);
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
	pthread_mutex_unlock(&map->lock);
	oc_retire_unlinked(unlinked);
	if (entry == NULL)
		return OC_ENOENT;

	count = predicate != NULL
	    ? oc_list_remove_if(entry->public.list, predicate, argument)
	    : oc_list_clear(entry->public.list);
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
	ck_hs_iterator_t iterator = CK_HS_ITERATOR_INITIALIZER;
	struct oc_keymap_entry *unlinked = NULL;
	struct oc_keymap_entry **entries = NULL;
	size_t taken = 0;
	void *object;

	oc_lock(map, &unlinked);
	if (map->head.key_count > 0) {
		entries = oc__alloc((size_t)map->head.key_count * sizeof *entries);
		if (entries == NULL) {
			pthread_mutex_unlock(&map->lock);
			oc_retire_unlinked(unlinked);
			*count = SIZE_MAX;
			return NULL;
		}
		while (ck_hs_next(&map->table->hs, &iterator, &object)) {
			struct oc_keymap_entry *entry = object;

			__atomic_add_fetch(&entry->refs, 1, __ATOMIC_RELAXED);
			entries[taken++] = entry;
		}
	}
	pthread_mutex_unlock(&map->lock);
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
		size_t gone = predicate != NULL
		    ? oc_list_remove_if(entry->public.list, predicate, argument)
		    : oc_list_clear(entry->public.list);

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

bool
oc_keymap_contains(oc_keymap_t *map, uint64_t hash, const void *probe_key,
    oc_handle_t handle)
{
	const oc_key_entry_t *entry;
	bool contains;

	if (map == NULL || probe_key == NULL)
		return false;
	/* Under the map lock the entry cannot be unlinked; list lock nests. */
	pthread_mutex_lock(&map->lock);
	entry = oc_find(map, hash, probe_key, map->equal);
	contains = entry != NULL && oc_list_contains(entry->list, handle);
	pthread_mutex_unlock(&map->lock);
	return contains;
}

size_t
oc_keymap_count(oc_keymap_t *map, uint64_t hash, const void *probe_key)
{
	const oc_key_entry_t *entry;
	size_t count;

	if (map == NULL || probe_key == NULL)
		return 0;
	pthread_mutex_lock(&map->lock);
	entry = oc_find(map, hash, probe_key, map->equal);
	count = entry != NULL ? oc_list_count(entry->list) : 0;
	pthread_mutex_unlock(&map->lock);
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
	pthread_mutex_lock(&map->lock);
	bytes = oc_hs_block_of(map->table->hs.map)->bytes;
	pthread_mutex_unlock(&map->lock);
	return bytes;
}

uint64_t
oc_keymap_live_keys(void)
{
	return __atomic_load_n(&oc_keymap_live, __ATOMIC_RELAXED);
}
