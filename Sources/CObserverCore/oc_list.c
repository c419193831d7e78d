/*
 * Observer lists: the writer side (add, remove, clear, growth and shrink).
 * The reader side is oc_list_view / oc_view_context in include/oc_list.h.
 *
 * Layout: readers see `head` (array pointer, the scan limit's copy for
 * emptiness, published sequence) and, through the array pointer, the
 * array's own scan limit. Everything else is writer-only and guarded by
 * `lock`. A new context takes the lowest free index (a bitmap search from a
 * hint), which keeps live slots dense at the front. A context stays at its
 * index until a shrink compacts the list into a smaller array (see
 * OC_LIST_MIN_SLOTS in oc_list.h): the contexts keep their slot order and
 * move down; each one that moved is recorded in `moved`, a writer-only
 * open-addressing table from its add's sequence to its current index, so
 * that its handle, which still carries the index it was added at, finds
 * it. An entry lives as long as its context: removal deletes it.
 */
#include "oc_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * A new list's slot array holds OC_LIST_MIN_SLOTS (one slot, 64 bytes with
 * its header), grown by doubling: a source with one observer, the common
 * case, pays for one slot; one with many pays log2(n) copies of a prefix,
 * once.
 */
#define OC_MIN_CAPACITY OC_LIST_MIN_SLOTS

struct oc_list {
	struct oc_list_head head; /* must stay first: readers cast to it */
	/* The writers' lock (one word, see oc_word_lock_t). */
	oc_word_lock_t lock;
	/* Contexts stored; written under the lock, read with relaxed loads. */
	uint32_t count;
	oc_release_fn *release;
	/* Bit i set: slot i holds a context. One bit per slot of the array. */
	uint64_t *used;
	/* Every word of `used` below this index is full. */
	uint32_t first_free_word;
	struct oc_retired retired;
	/* `used` until the array outgrows 64 slots: no allocation of its own. */
	uint64_t first_used;
	/* Contexts a compaction moved: sequence -> index. NULL when none. */
	struct oc_moved_table *moved;
	/*
	 * The list's first slot array (OC_MIN_CAPACITY slots) follows the
	 * struct in the same allocation (oc_first_array): creating a list is one
	 * allocation, not three. Once replaced it is not retired on its own: it
	 * lives, readable by views taken before, until the list is reclaimed.
	 */
};

/* A slot array with its retirement header in front of it. */
struct oc_array_block {
	struct oc_retired retired;
	struct oc_slot_array array;
};

/* One moved context: its add's sequence (0: the entry is empty) and index. */
struct oc_moved {
	uint64_t sequence;
	uint32_t index;
	uint32_t unused;
};

/*
 * Linear probing over a power-of-two `capacity` of entries, at most half
 * of them used (so a probe always meets an empty entry), deleted by
 * backward shift (no tombstones). Writer-only, under the list's lock.
 */
struct oc_moved_table {
	uint32_t capacity;
	uint32_t count;
	struct oc_moved entries[];
};

/* The fewest entries a moved table has. */
#define OC_MOVED_MIN_CAPACITY 16u

/*
 * Array replacements (growth or shrink) in the process, for tests that
 * count them. Relaxed: a statistic; each increment is made under a list's
 * lock and no other memory is published through it.
 */
static uint64_t oc_list_resize_count;

uint64_t
oc_testing_list_resizes(void)
{
	return __atomic_load_n(&oc_list_resize_count, __ATOMIC_RELAXED);
}

/*
 * Process-wide add counter: the last sequence number issued (0: none yet).
 * 64 bits never wrap in practice (at one add per nanosecond, 584 years);
 * the add that would need OC__SEQUENCE_FREE fails with OC_EEXHAUSTED
 * instead. Relaxed compare-exchange: uniqueness is all it gives, and the
 * read-modify-write gives it on every architecture; per list the values are
 * also increasing because adds to one list are serialized by its lock,
 * which orders the updates (the slot and the published sequence carry their
 * own release stores).
 */
static uint64_t oc_last_sequence;

bool
oc__next_sequence(uint64_t *sequence)
{
	uint64_t last = __atomic_load_n(&oc_last_sequence, __ATOMIC_RELAXED);

	do {
		if (last >= OC__SEQUENCE_FREE - 1)
			return false;
	} while (!__atomic_compare_exchange_n(&oc_last_sequence, &last, last + 1,
	    true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*sequence = last + 1;
	return true;
}

uint64_t
oc_testing_advance_sequence(uint64_t next)
{
	uint64_t last = __atomic_load_n(&oc_last_sequence, __ATOMIC_RELAXED);
	/* The last number to count as issued: one below `next`, clamped. */
	uint64_t target;

	if (next == 0)
		target = 0;
	else if (next >= OC__SEQUENCE_FREE)
		target = OC__SEQUENCE_FREE - 1;
	else
		target = next - 1;

	/* Relaxed, as oc__next_sequence: only moves the counter forward. */
	while (last < target && !__atomic_compare_exchange_n(&oc_last_sequence, &last,
	    target, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
	last = __atomic_load_n(&oc_last_sequence, __ATOMIC_RELAXED);
	return last >= OC__SEQUENCE_FREE - 1 ? OC__SEQUENCE_FREE : last + 1;
}

/* The 64-bit words of a used-slot bitmap for `capacity` slots. */
static size_t
oc_words_for(uint32_t capacity)
{
	return ((size_t)capacity + 63) / 64;
}

/* The bytes of a moved-handle table of `capacity` entries. */
static size_t
oc_moved_table_bytes(uint32_t capacity)
{
	return sizeof(struct oc_moved_table) + (size_t)capacity * sizeof(struct oc_moved);
}

/* The first entry probed for `sequence` (Fibonacci hashing, high bits). */
static uint32_t
oc_moved_home(uint64_t sequence, uint32_t capacity)
{
	return (uint32_t)((sequence * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (capacity - 1);
}

/* The entry of `sequence`, or NULL. Lock held. */
static struct oc_moved *
oc_moved_find(const struct oc_list *list, uint64_t sequence)
{
	struct oc_moved_table *table = list->moved;
	uint32_t position;

	if (table == NULL)
		return NULL;
	position = oc_moved_home(sequence, table->capacity);
	for (;;) {
		struct oc_moved *entry = &table->entries[position];

		if (entry->sequence == sequence)
			return entry;
		if (entry->sequence == 0)
			return NULL;
		position = (position + 1) & (table->capacity - 1);
	}
}

/* Stores an entry known to be absent into `table`, which has room. */
static void
oc_moved_insert(struct oc_moved_table *table, uint64_t sequence, uint32_t index)
{
	uint32_t position = oc_moved_home(sequence, table->capacity);

	while (table->entries[position].sequence != 0)
		position = (position + 1) & (table->capacity - 1);
	table->entries[position].sequence = sequence;
	table->entries[position].index = index;
	table->count++;
}

/*
 * Replaces the table by one of `capacity` entries (0: none; only when it
 * is empty) holding the same entries. Lock held. False when memory is
 * exhausted; then nothing changed.
 */
static bool
oc_moved_rehash(struct oc_list *list, uint32_t capacity)
{
	struct oc_moved_table *old = list->moved;
	struct oc_moved_table *table = NULL;
	uint32_t i;

	if (capacity > 0) {
		table = oc__alloc(oc_moved_table_bytes(capacity));
		if (table == NULL)
			return false;
		memset(table, 0, oc_moved_table_bytes(capacity));
		table->capacity = capacity;
		for (i = 0; old != NULL && i < old->capacity; i++) {
			if (old->entries[i].sequence != 0)
				oc_moved_insert(table, old->entries[i].sequence, old->entries[i].index);
		}
	}
	free(old);
	list->moved = table;
	return true;
}

/*
 * Makes room for `extra` more entries (at most half the table in use).
 * Lock held. False when memory is exhausted; then nothing changed.
 */
static bool
oc_moved_reserve(struct oc_list *list, uint32_t extra)
{
	uint64_t needed = (uint64_t)(list->moved != NULL ? list->moved->count : 0) + extra;
	uint32_t capacity = list->moved != NULL ? list->moved->capacity : 0;
	uint32_t grown = OC_MOVED_MIN_CAPACITY;

	if (extra == 0 || needed * 2 <= capacity)
		return true;
	while ((uint64_t)grown < needed * 2)
		grown *= 2;
	return oc_moved_rehash(list, grown);
}

/* Records that `sequence`'s context is at `index` now. Room reserved. */
static void
oc_moved_put(struct oc_list *list, uint64_t sequence, uint32_t index)
{
	struct oc_moved *entry = oc_moved_find(list, sequence);

	if (entry != NULL)
		entry->index = index;
	else
		oc_moved_insert(list->moved, sequence, index);
}

/*
 * Forgets `sequence` (no-op when absent), then frees the table once empty
 * or halves it once under an eighth full (a failed allocation only keeps it
 * larger). Lock held.
 */
OC_NOINLINE static void
oc_moved_delete(struct oc_list *list, uint64_t sequence)
{
	struct oc_moved_table *table = list->moved;
	struct oc_moved *entry = oc_moved_find(list, sequence);
	uint32_t mask, hole, next;

	if (entry == NULL)
		return;
	mask = table->capacity - 1;
	hole = (uint32_t)(entry - table->entries);
	next = hole;
	for (;;) {
		uint32_t home;

		next = (next + 1) & mask;
		if (table->entries[next].sequence == 0)
			break;
		home = oc_moved_home(table->entries[next].sequence, table->capacity);
		/* Move the entry into the hole unless its home lies in (hole, next]. */
		if (((next - home) & mask) >= ((next - hole) & mask)) {
			table->entries[hole] = table->entries[next];
			hole = next;
		}
	}
	table->entries[hole].sequence = 0;
	table->count--;
	if (table->count == 0)
		(void)oc_moved_rehash(list, 0);
	else if (table->capacity > OC_MOVED_MIN_CAPACITY && table->count * 8 < table->capacity)
		(void)oc_moved_rehash(list, table->capacity / 2);
}

/* The allocation (block) a slot array is the tail of. */
static struct oc_array_block *
oc_block_of(struct oc_slot_array *array)
{
	return (struct oc_array_block *)(void *)
	    ((char *)array - offsetof(struct oc_array_block, array));
}

/* The bytes of a block holding a slot array of `capacity` slots. */
static size_t
oc_block_bytes(uint32_t capacity)
{
	return sizeof(struct oc_array_block) + (size_t)capacity * sizeof(struct oc_slot);
}

/*
 * Retirement callback of a replaced slot array's block, after its grace
 * period: frees it.
 */
static void
oc_release_block(struct oc_retired *retired)
{
	free(retired);
}

/*
 * Retirement callback of a removed context, after its grace period: calls
 * the list's release function on it, then keeps the retirement record for
 * reuse (oc_spare_records.c).
 */
static void
oc_release_context(struct oc_retired *retired)
{
	struct oc_retired_context *item = (struct oc_retired_context *)(void *)retired;

	if (item->release != NULL)
		item->release(item->context);
	oc__keep_context_record(item);
}

/* Retirement callback of a destroyed list, after its grace period: frees it. */
static void
oc_release_list(struct oc_retired *retired)
{
	free((char *)retired - offsetof(struct oc_list, retired));
}

/* A list's allocation: the struct, then its first slot array. */
static size_t
oc_list_bytes(void)
{
	return sizeof(struct oc_list) + sizeof(struct oc_slot_array) +
	    (size_t)OC_MIN_CAPACITY * sizeof(struct oc_slot);
}

/* The first slot array, right after the struct (8-byte aligned: the
 * struct's size is a multiple of its alignment, which is at least 8). */
static struct oc_slot_array *
oc_first_array(struct oc_list *list)
{
	return (struct oc_slot_array *)(void *)(list + 1);
}

/* Retires `array` when it is a block of its own (not the first array). */
static void
oc_retire_array(struct oc_list *list, struct oc_slot_array *array)
{
	if (array == oc_first_array(list))
		return;
	oc__retire(&oc_block_of(array)->retired, oc_release_block,
	    oc_block_bytes(array->capacity));
}

/* Frees `used` when it is an allocation of its own. */
static void
oc_free_used(struct oc_list *list, uint64_t *used)
{
	if (used != &list->first_used)
		free(used);
}

static uint32_t oc_lowest_free_locked(struct oc_list *list);

/*
 * A zeroed block for `capacity` slots (every slot empty), or NULL when
 * allocation fails.
 */
static struct oc_array_block *
oc_block_allocate(uint32_t capacity)
{
	struct oc_array_block *block = oc__alloc(oc_block_bytes(capacity));

	if (block == NULL)
		return NULL;
	memset(block, 0, oc_block_bytes(capacity));
	block->array.capacity = capacity;
	return block;
}

size_t
oc__list_bytes(void)
{
	return oc_list_bytes();
}

bool
oc__list_init(oc_list_t *list, oc_release_fn *release)
{
	/* All zero bytes: an empty list, its lock unlocked (see oc_word_lock_t). */
	memset(list, 0, oc_list_bytes());
	list->release = release;
	list->used = &list->first_used;
	list->moved = NULL;
	oc_first_array(list)->capacity = OC_MIN_CAPACITY;
	list->head.array = oc_first_array(list);
	return true;
}

oc_list_t *
oc_list_create(oc_release_fn *release)
{
	struct oc_list *list = oc__alloc(oc_list_bytes());

	if (list == NULL)
		return NULL;
	if (!oc__list_init(list, release)) {
		free(list);
		return NULL;
	}
	return list;
}

/*
 * Grows: copies the live prefix into an array of `capacity` slots (larger)
 * and publishes it. Lock held. On allocation failure nothing changes.
 *
 * Memory ordering: the new array is filled with plain stores and published
 * with a release store of head.array, so a reader that acquires the pointer
 * sees the copied slots (a plain store on x86, whose stores are not
 * reordered; `stlr` on ARM, required there, or the pointer could become
 * visible before the slots it points to). The old array stays readable until its grace
 * period ends; writers no longer touch it, which is safe because any reader
 * still on it took its view before this publication (see send semantics in
 * oc_list.h).
 */
OC_NOINLINE static oc_status_t
oc_grow_locked(struct oc_list *list, uint32_t capacity)
{
	struct oc_slot_array *old = list->head.array;
	uint32_t limit = old->scan_limit;
	size_t old_words = oc_words_for(old->capacity);
	size_t new_words = oc_words_for(capacity);
	struct oc_array_block *block = oc_block_allocate(capacity);
	/* Up to 64 slots the bitmap is the list's own word. */
	uint64_t *used = new_words == 1 ? &list->first_used : oc__alloc(new_words * sizeof(uint64_t));

	if (block == NULL || used == NULL) {
		free(block);
		if (used != NULL)
			oc_free_used(list, used);
		return OC_ENOMEM;
	}
	memcpy(block->array.slots, old->slots, (size_t)limit * sizeof(struct oc_slot));
	/* Plain: the array is not published yet (the release below carries it). */
	block->array.scan_limit = limit;
	if (used != list->used) {
		/* Into a fresh bitmap, or back into the list's word (copied
		 * before the old one is freed). */
		uint64_t *previous = list->used;

		if (used != &list->first_used)
			memset(used, 0, new_words * sizeof(uint64_t));
		memcpy(used, previous,
		    (old_words < new_words ? old_words : new_words) * sizeof(uint64_t));
		oc_free_used(list, previous);
		list->used = used;
	}
	if (list->first_free_word > new_words)
		list->first_free_word = (uint32_t)new_words;

	__atomic_store_n(&list->head.array, &block->array, __ATOMIC_RELEASE);
	oc_retire_array(list, old);
	__atomic_fetch_add(&oc_list_resize_count, 1, __ATOMIC_RELAXED);
	return OC_OK;
}

/*
 * Sets the current array's scan limit and the head's copy. Lock held.
 *
 * Memory ordering: the array's limit is stored with release, pairing with
 * oc_list_view's acquire load of it: a reader that sees the raised limit of
 * an add sees the slot stores made before it (in oc_list_add). The head's
 * copy is stored with release too, pairing with oc_list_is_empty's acquire.
 * Both are plain stores on x86 and `stlr` on ARM, required there for adds;
 * a lowered limit (a removal) needs no ordering, but every store of a limit
 * is a release so that the pairing arguments need no case for it.
 */
static void
oc_set_scan_limit_locked(struct oc_list *list, uint32_t limit)
{
	__atomic_store_n(&list->head.array->scan_limit, limit, __ATOMIC_RELEASE);
	__atomic_store_n(&list->head.scan_limit, limit, __ATOMIC_RELEASE);
}

/*
 * Shrinks: copies the contexts, in slot order, into the lowest slots of a
 * new array of `capacity` slots (at least twice the count) and publishes
 * it. Each context whose index changes is recorded in the moved table, so
 * that its handle still finds it. Lock held. On allocation failure nothing
 * changes (the list stays larger).
 *
 * Memory ordering: as in oc_grow_locked, the new array (its slots and its
 * scan limit) is filled with plain stores and published with a release
 * store of head.array. The old array is not written again: a reader that
 * loaded it before iterates it, with its own limit, as it was when it was
 * replaced, so a context stored for the whole of that reader's send is
 * there exactly once, at its old index; contexts removed since may still be
 * called by such a reader (they were removed while it iterated) and are
 * released only after its section ends, as is the old array itself. The
 * head's copy of the limit only matters as zero or not, and compaction
 * keeps the count, so its release store (for oc_list_is_empty) orders
 * nothing new.
 */
OC_NOINLINE static oc_status_t
oc_compact_locked(struct oc_list *list, uint32_t capacity)
{
	struct oc_slot_array *old = list->head.array;
	uint32_t limit = old->scan_limit;
	uint32_t count = list->count;
	size_t new_words = oc_words_for(capacity);
	size_t word;
	uint32_t lead, next = 0;
	struct oc_array_block *block = oc_block_allocate(capacity);
	uint64_t *used = new_words == 1 ? &list->first_used : oc__alloc(new_words * sizeof(uint64_t));

	/* The contexts past the first free slot all move: reserve their entries. */
	lead = oc_lowest_free_locked(list);
	if (lead > limit)
		lead = limit;
	if (block == NULL || used == NULL || !oc_moved_reserve(list, count - lead)) {
		free(block);
		if (used != NULL && used != &list->first_used)
			free(used);
		return OC_ENOMEM;
	}
	for (word = 0; word < oc_words_for(limit); word++) {
		uint64_t bits = list->used[word];

		while (bits != 0) {
			uint32_t index = (uint32_t)(word * 64) + (uint32_t)__builtin_ctzll(bits);
			struct oc_slot *slot = &old->slots[index];

			bits &= bits - 1;
			block->array.slots[next] = *slot;
			if (index != next)
				oc_moved_put(list, slot->sequence, next);
			next++;
		}
	}
	/* Plain: the array is not published yet. */
	block->array.scan_limit = next;

	/* The new bitmap: the first `next` bits. */
	if (used != &list->first_used)
		memset(used, 0, new_words * sizeof(uint64_t));
	else
		list->first_used = 0;
	for (word = 0; word < (size_t)next / 64; word++)
		used[word] = UINT64_MAX;
	if (next % 64 != 0)
		used[next / 64] = (UINT64_C(1) << (next % 64)) - 1;
	oc_free_used(list, list->used);
	list->used = used;
	list->first_free_word = next / 64;

	__atomic_store_n(&list->head.array, &block->array, __ATOMIC_RELEASE);
	__atomic_store_n(&list->head.scan_limit, next, __ATOMIC_RELEASE);
	oc_retire_array(list, old);
	__atomic_fetch_add(&oc_list_resize_count, 1, __ATOMIC_RELAXED);
	return OC_OK;
}

/* Lowest free index below the capacity, or the capacity when full. Lock held. */
static uint32_t
oc_lowest_free_locked(struct oc_list *list)
{
	uint32_t capacity = list->head.array->capacity;
	size_t words = oc_words_for(capacity);
	size_t word;

	for (word = list->first_free_word; word < words; word++) {
		uint64_t bits = list->used[word];

		if (bits != UINT64_MAX) {
			uint32_t index = (uint32_t)(word * 64) + (uint32_t)__builtin_ctzll(~bits);

			list->first_free_word = (uint32_t)word;
			return index < capacity ? index : capacity;
		}
	}
	list->first_free_word = (uint32_t)words;
	return capacity;
}

/* Highest used index plus one, searching down from `below`. Lock held. */
static uint32_t
oc_scan_limit_below_locked(const struct oc_list *list, uint32_t below)
{
	size_t word = oc_words_for(below);

	while (word > 0) {
		uint64_t bits = list->used[word - 1];

		if (word * 64 > below)
			bits &= (below % 64 == 0) ? UINT64_MAX : ((UINT64_C(1) << (below % 64)) - 1);
		if (bits != 0)
			return (uint32_t)((word - 1) * 64) + 64u - (uint32_t)__builtin_clzll(bits);
		word--;
	}
	return 0;
}

oc_status_t
oc_list_add(oc_list_t *list, void *context, oc_handle_t *handle)
{
	struct oc_slot *slot;
	uint32_t index;
	uint64_t sequence;

	if (handle != NULL)
		*handle = oc_handle_none();
	if (list == NULL || context == NULL || handle == NULL)
		return OC_EINVAL;

	oc_word_lock(&list->lock);
	index = oc_lowest_free_locked(list);
	if (index == list->head.array->capacity) {
		uint32_t capacity = list->head.array->capacity;
		oc_status_t status;

		if (capacity >= OC_LIST_MAX_SLOTS) {
			oc_word_unlock(&list->lock);
			return OC_EFULL;
		}
		status = oc_grow_locked(list, capacity * 2);
		if (status != OC_OK) {
			oc_word_unlock(&list->lock);
			return status;
		}
		index = oc_lowest_free_locked(list);
	}
	if (!oc__next_sequence(&sequence)) {
		oc_word_unlock(&list->lock);
		return OC_EEXHAUSTED;
	}
	slot = &list->head.array->slots[index];
	/*
	 * Sequence first (relaxed), then the context with release: a reader
	 * that acquires the context sees this sequence, so a view older than
	 * the add skips it even if it reaches the slot. The release is a plain
	 * store on x86 and `stlr` on ARM, required there: without it the
	 * context could be seen before its sequence (and before whatever the
	 * caller initialized in it).
	 */
	__atomic_store_n(&slot->sequence, sequence, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->context, context, __ATOMIC_RELEASE);
	list->used[index / 64] |= UINT64_C(1) << (index % 64);
	/* Release stores (see oc_set_scan_limit_locked): they order the slot
	 * stores before the raised limit. */
	if (index >= list->head.array->scan_limit)
		oc_set_scan_limit_locked(list, index + 1);
	/*
	 * Release: a view that acquires this sequence sees the slot, the scan
	 * limit and (after growth) the array stored above. Plain store on x86;
	 * `stlr` on ARM, required there (the view's guarantee 3 rests on it).
	 * The count is a statistic: relaxed.
	 */
	__atomic_store_n(&list->head.published_sequence, sequence, __ATOMIC_RELEASE);
	__atomic_store_n(&list->count, list->count + 1, __ATOMIC_RELAXED);
	oc_word_unlock(&list->lock);

	oc__live_contexts_add(1);
	handle->sequence = sequence;
	handle->index = index;
	oc__writer_poll();
	return OC_OK;
}

/*
 * Empties slot `index` (which holds a context) and returns the context;
 * forgets the context's moved entry, if it has one. Lock held. Does not
 * shrink; the caller decides when.
 */
static void *
oc_vacate_locked(struct oc_list *list, uint32_t index)
{
	struct oc_slot *slot = &list->head.array->slots[index];
	void *context = slot->context;

	if (list->moved != NULL)
		oc_moved_delete(list, slot->sequence);

	/*
	 * Release store of NULL: a view taken after this returns (and so after
	 * the remove call returns) loads NULL. The sequence is then marked
	 * free so that a reader which loaded the old context just before
	 * compares it against OC__SEQUENCE_FREE and skips it; skipping or
	 * calling are both allowed for a removal racing a send. The release on
	 * the NULL store is more than a reader needs (a NULL orders nothing
	 * for it; "a view taken after the remove returned sees NULL" follows
	 * from coherence and from what ordered that view after the remove):
	 * a plain store on x86, one `stlr` per removal on ARM, kept so that
	 * every store of `context` is a release and the pairing argument in
	 * oc_view_context needs no case for it. The scan limit's release pairs
	 * with the views' and oc_list_is_empty's acquire, as in oc_list_add.
	 */
	__atomic_store_n(&slot->context, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->sequence, OC__SEQUENCE_FREE, __ATOMIC_RELAXED);
	list->used[index / 64] &= ~(UINT64_C(1) << (index % 64));
	if (index / 64 < list->first_free_word)
		list->first_free_word = index / 64;
	if (index + 1 == list->head.array->scan_limit)
		oc_set_scan_limit_locked(list, oc_scan_limit_below_locked(list, index));
	__atomic_store_n(&list->count, list->count - 1, __ATOMIC_RELAXED);
	return context;
}

/*
 * Compacts the list into the smallest power-of-two array (at least
 * OC_MIN_CAPACITY) at least twice the count. Lock held.
 */
OC_NOINLINE static void
oc_shrink_locked(struct oc_list *list)
{
	uint32_t target = OC_MIN_CAPACITY;

	while (target < 2 * list->count)
		target *= 2;
	/* A failed allocation only means we stay larger. */
	(void)oc_compact_locked(list, target);
}

/*
 * When at most a quarter of the array is in use, shrinks it
 * (oc_shrink_locked, out of line: the check is all most removals pay).
 * Lock held.
 */
static inline void
oc_maybe_shrink_locked(struct oc_list *list)
{
	uint32_t capacity = list->head.array->capacity;

	if (capacity > OC_MIN_CAPACITY && list->count <= capacity / 4)
		oc_shrink_locked(list);
}

/*
 * Retires a removed context. The retirement record needs memory; when that
 * allocation fails we fall back to waiting for a grace period here and
 * releasing at once, which is impossible from inside a read section: then
 * the context is leaked on purpose (releasing it could free memory a reader
 * is using) and counted in oc_stats().leaked_contexts.
 */
static void
oc_retire_context(oc_release_fn *release, void *context)
{
	struct oc_retired_context *item = oc__context_record();

	oc__live_contexts_add(-1);
	if (item != NULL) {
		item->release = release;
		item->context = context;
		oc__retire(&item->retired, oc_release_context, sizeof *item);
		return;
	}
	if (oc_synchronize() == OC_OK) {
		if (release != NULL)
			release(context);
		return;
	}
	oc__count_leaked_context();
}

/*
 * The index of the context `handle` names, in *index; false when it names
 * none (stale, foreign, never issued). The handle's own index first; when
 * that slot holds another add (or none), the moved table. Sequences are
 * unique in the process, so a slot or entry with the handle's sequence is
 * its add's. A free slot never matches (its sequence is FREE or 0, and its
 * context NULL). Lock held.
 */
static bool
oc_find_locked(const struct oc_list *list, oc_handle_t handle, uint32_t *index)
{
	const struct oc_slot_array *array = list->head.array;
	const struct oc_moved *moved;
	const struct oc_slot *slot;

	if (oc_handle_is_none(handle))
		return false;
	if (handle.index < array->scan_limit) {
		slot = &array->slots[handle.index];
		if (slot->context != NULL && slot->sequence == handle.sequence) {
			*index = handle.index;
			return true;
		}
	}
	moved = oc_moved_find(list, handle.sequence);
	if (moved == NULL || moved->index >= array->scan_limit)
		return false;
	slot = &array->slots[moved->index];
	if (slot->context == NULL || slot->sequence != handle.sequence)
		return false;
	*index = moved->index;
	return true;
}

/*
 * With the list lock held: empties the slot `handle` names, shrinks the
 * array when it may, unlocks and retires the context; OC_ENOENT (unlocked
 * too) when `handle` names no context of the list.
 */
static oc_status_t
oc_remove_locked_then_unlock(struct oc_list *list, oc_handle_t handle)
{
	void *context;
	uint32_t index;

	if (!oc_find_locked(list, handle, &index)) {
		oc_word_unlock(&list->lock);
		return OC_ENOENT;
	}
	context = oc_vacate_locked(list, index);
	oc_maybe_shrink_locked(list);
	oc_word_unlock(&list->lock);
	oc_retire_context(list->release, context);
	oc__writer_poll();
	return OC_OK;
}

oc_status_t
oc_list_remove(oc_list_t *list, oc_handle_t handle)
{
	if (list == NULL)
		return OC_EINVAL;
	oc_word_lock(&list->lock);
	return oc_remove_locked_then_unlock(list, handle);
}

oc_status_t
oc__list_take(oc_list_t *list, oc_handle_t handle, void **context)
{
	uint32_t index;

	oc_word_lock(&list->lock);
	if (!oc_find_locked(list, handle, &index)) {
		oc_word_unlock(&list->lock);
		return OC_ENOENT;
	}
	*context = oc_vacate_locked(list, index);
	oc_maybe_shrink_locked(list);
	oc_word_unlock(&list->lock);
	return OC_OK;
}

void
oc__list_retire_taken(oc_release_fn *release, void *context)
{
	oc_retire_context(release, context);
}

oc_status_t
oc_list_try_remove(oc_list_t *list, oc_handle_t handle)
{
	if (list == NULL)
		return OC_EINVAL;
	if (!oc_word_trylock(&list->lock))
		return OC_EBUSY;
	return oc_remove_locked_then_unlock(list, handle);
}

oc_status_t
oc_list_remove_wait(oc_list_t *list, oc_handle_t handle)
{
	oc_status_t status = oc_list_remove(list, handle);

	if (status != OC_OK)
		return status;
	return oc_synchronize();
}

/*
 * Removes every context selected by `predicate` (all when NULL). Works in
 * batches gathered under the lock into a stack buffer and retired after
 * unlocking, so it needs no memory and no release runs under the lock.
 * Contexts added while it runs, into slots it has already passed, stay. A
 * compaction (by another writer's removal between two batches) only moves
 * contexts down and keeps their order, so the contexts below the cursor are
 * still below it; one it has passed may land below it and be asked again.
 */
#define OC_REMOVE_BATCH 256

/*
 * Removes every context `predicate` accepts (every one when NULL), in
 * batches of OC_REMOVE_BATCH taken under the lock and retired outside it (a
 * release function may take the lock again); returns how many. Slots are
 * visited from the highest down; a context added between two batches is
 * removed when it lands below the cursor, and kept otherwise.
 */
static size_t
oc_remove_matching(struct oc_list *list,
    oc_context_predicate_fn *predicate, void *argument)
{
	size_t total = 0;
	uint32_t index = UINT32_MAX;
	bool done;

	do {
		void *batch[OC_REMOVE_BATCH];
		size_t gathered = 0;
		size_t i;

		oc_word_lock(&list->lock);
		if (index > list->head.array->scan_limit)
			index = list->head.array->scan_limit;
		while (index > 0 && gathered < OC_REMOVE_BATCH) {
			void *context = list->head.array->slots[--index].context;

			if (context == NULL)
				continue;
			if (predicate != NULL && !predicate(context, argument))
				continue;
			oc_vacate_locked(list, index);
			batch[gathered++] = context;
		}
		done = index == 0;
		if (done)
			oc_maybe_shrink_locked(list);
		oc_word_unlock(&list->lock);

		for (i = 0; i < gathered; i++)
			oc_retire_context(list->release, batch[i]);
		total += gathered;
	} while (!done);
	oc__writer_poll();
	return total;
}

size_t
oc_list_remove_if(oc_list_t *list,
    oc_context_predicate_fn *predicate, void *argument)
{
	if (list == NULL || predicate == NULL)
		return 0;
	return oc_remove_matching(list, predicate, argument);
}

size_t
oc_list_clear(oc_list_t *list)
{
	if (list == NULL)
		return 0;
	return oc_remove_matching(list, NULL, NULL);
}

size_t
oc_list_count(const oc_list_t *list)
{
	if (list == NULL)
		return 0;
	return __atomic_load_n(&list->count, __ATOMIC_RELAXED);
}

size_t
oc_list_capacity(const oc_list_t *list)
{
	if (list == NULL)
		return 0;
	/* Acquire: the capacity is read through the pointer (see resize). */
	return __atomic_load_n(&list->head.array, __ATOMIC_ACQUIRE)->capacity;
}

size_t
oc_list_bytes_held(oc_list_t *list)
{
	size_t bytes;

	if (list == NULL)
		return 0;
	oc_word_lock(&list->lock);
	bytes = oc_list_bytes();
	if (list->head.array != oc_first_array(list))
		bytes += oc_block_bytes(list->head.array->capacity);
	if (list->used != &list->first_used)
		bytes += oc_words_for(list->head.array->capacity) * sizeof(uint64_t);
	if (list->moved != NULL)
		bytes += oc_moved_table_bytes(list->moved->capacity);
	oc_word_unlock(&list->lock);
	return bytes;
}

bool
oc_list_contains(oc_list_t *list, oc_handle_t handle)
{
	bool matches;
	uint32_t index;

	if (list == NULL)
		return false;
	oc_word_lock(&list->lock);
	matches = oc_find_locked(list, handle, &index);
	oc_word_unlock(&list->lock);
	return matches;
}

void
oc__list_finish(oc_list_t *list)
{
	/* Relaxed: the caller guarantees that no writer call is in progress or
	 * follows (as for oc_list_destroy), so the count is settled. */
	if (__atomic_load_n(&list->count, __ATOMIC_RELAXED) != 0)
		oc_list_clear(list);
	oc_free_used(list, list->used);
	/* Empty after the clear above (each removal deleted its entry). */
	free(list->moved);
	/* Readers that took a view before may still read the array and head
	 * (the first array, inside the list, goes with the list's memory). */
	oc_retire_array(list, list->head.array);
}

void
oc_list_destroy(oc_list_t *list)
{
	if (list == NULL)
		return;
	oc__list_finish(list);
	oc__retire(&list->retired, oc_release_list, oc_list_bytes());
}
