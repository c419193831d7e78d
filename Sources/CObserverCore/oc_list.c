/*
 * Observer lists: the writer side (add, remove, clear, growth and shrink).
 * The reader side is oc_list_view / oc_view_context in include/oc_list.h.
 *
 * Layout: readers see `head` (array pointer, scan limit, published
 * sequence). Everything else is writer-only and guarded by `lock`.
 * Slot indices never move while a context is stored, so a handle can name
 * its slot directly; a new context takes the lowest free index (a bitmap
 * search from a hint), which keeps live slots dense at the front and lets
 * the scan limit, and then the array, shrink after mass removal.
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
	pthread_mutex_t lock;
	oc_release_fn *release;
	/* Bit i set: slot i holds a context. One bit per slot of the array. */
	uint64_t *used;
	/* Every word of `used` below this index is full. */
	uint32_t first_free_word;
	/* Contexts stored; written under the lock, read with relaxed loads. */
	uint32_t count;
	struct oc_retired retired;
	/* `used` until the array outgrows 64 slots: no allocation of its own. */
	uint64_t first_used;
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

/* A removed context waiting for its grace period. */
struct oc_retired_context {
	struct oc_retired retired;
	oc_release_fn *release;
	void *context;
};

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

static size_t
oc_words_for(uint32_t capacity)
{
	return ((size_t)capacity + 63) / 64;
}

static struct oc_array_block *
oc_block_of(struct oc_slot_array *array)
{
	return (struct oc_array_block *)(void *)
	    ((char *)array - offsetof(struct oc_array_block, array));
}

static size_t
oc_block_bytes(uint32_t capacity)
{
	return sizeof(struct oc_array_block) + (size_t)capacity * sizeof(struct oc_slot);
}

static void
oc_release_block(struct oc_retired *retired)
{
	free(retired);
}

static void
oc_release_context(struct oc_retired *retired)
{
	struct oc_retired_context *item = (struct oc_retired_context *)(void *)retired;

	if (item->release != NULL)
		item->release(item->context);
	free(item);
}

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
	memset(list, 0, oc_list_bytes());
	if (pthread_mutex_init(&list->lock, NULL) != 0)
		return false;
	list->release = release;
	list->used = &list->first_used;
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
 * Copies the live prefix into an array of `capacity` slots and publishes it.
 * Lock held. On allocation failure nothing changes.
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
static oc_status_t
oc_resize_locked(struct oc_list *list, uint32_t capacity)
{
	struct oc_slot_array *old = list->head.array;
	uint32_t limit = list->head.scan_limit;
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

	pthread_mutex_lock(&list->lock);
	index = oc_lowest_free_locked(list);
	if (index == list->head.array->capacity) {
		uint32_t capacity = list->head.array->capacity;
		oc_status_t status;

		if (capacity >= OC_LIST_MAX_SLOTS) {
			pthread_mutex_unlock(&list->lock);
			return OC_EFULL;
		}
		status = oc_resize_locked(list, capacity * 2);
		if (status != OC_OK) {
			pthread_mutex_unlock(&list->lock);
			return status;
		}
		index = oc_lowest_free_locked(list);
	}
	if (!oc__next_sequence(&sequence)) {
		pthread_mutex_unlock(&list->lock);
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
	/* Release: pairs with oc_list_is_empty's acquire (plain store on x86,
	 * `stlr` on ARM, where it orders the slot stores before the limit). */
	if (index >= list->head.scan_limit)
		__atomic_store_n(&list->head.scan_limit, index + 1, __ATOMIC_RELEASE);
	/*
	 * Release: a view that acquires this sequence sees the slot, the scan
	 * limit and (after growth) the array stored above. Plain store on x86;
	 * `stlr` on ARM, required there (the view's guarantee 3 rests on it).
	 * The count is a statistic: relaxed.
	 */
	__atomic_store_n(&list->head.published_sequence, sequence, __ATOMIC_RELEASE);
	__atomic_store_n(&list->count, list->count + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&list->lock);

	oc__live_contexts_add(1);
	handle->sequence = sequence;
	handle->index = index;
	oc__writer_poll();
	return OC_OK;
}

/*
 * Empties slot `index` (which holds a context) and returns the context.
 * Lock held. Does not shrink; the caller decides when.
 */
static void *
oc_vacate_locked(struct oc_list *list, uint32_t index)
{
	struct oc_slot *slot = &list->head.array->slots[index];
	void *context = slot->context;

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
	 * with oc_list_is_empty's acquire, as in oc_list_add.
	 */
	__atomic_store_n(&slot->context, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->sequence, OC__SEQUENCE_FREE, __ATOMIC_RELAXED);
	list->used[index / 64] &= ~(UINT64_C(1) << (index % 64));
	if (index / 64 < list->first_free_word)
		list->first_free_word = index / 64;
	if (index + 1 == list->head.scan_limit)
		__atomic_store_n(&list->head.scan_limit,
		    oc_scan_limit_below_locked(list, index), __ATOMIC_RELEASE);
	__atomic_store_n(&list->count, list->count - 1, __ATOMIC_RELAXED);
	return context;
}

/* Halves the array while at most a quarter of it is in use. Lock held. */
static void
oc_maybe_shrink_locked(struct oc_list *list)
{
	uint32_t capacity = list->head.array->capacity;

	while (capacity > OC_MIN_CAPACITY && list->head.scan_limit <= capacity / 4) {
		/* A failed allocation only means we stay larger. */
		if (oc_resize_locked(list, capacity / 2) != OC_OK)
			return;
		capacity /= 2;
	}
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
	struct oc_retired_context *item = oc__alloc(sizeof *item);

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

/* Lock held. A free slot never matches (its sequence is FREE or 0). */
static bool
oc_handle_matches_locked(const struct oc_list *list, oc_handle_t handle)
{
	const struct oc_slot *slot;

	if (oc_handle_is_none(handle) || handle.index >= list->head.scan_limit)
		return false;
	slot = &list->head.array->slots[handle.index];
	return slot->context != NULL && slot->sequence == handle.sequence;
}

static oc_status_t
oc_remove_locked_then_unlock(struct oc_list *list, oc_handle_t handle)
{
	void *context;

	if (!oc_handle_matches_locked(list, handle)) {
		pthread_mutex_unlock(&list->lock);
		return OC_ENOENT;
	}
	context = oc_vacate_locked(list, handle.index);
	oc_maybe_shrink_locked(list);
	pthread_mutex_unlock(&list->lock);
	oc_retire_context(list->release, context);
	oc__writer_poll();
	return OC_OK;
}

oc_status_t
oc_list_remove(oc_list_t *list, oc_handle_t handle)
{
	if (list == NULL)
		return OC_EINVAL;
	pthread_mutex_lock(&list->lock);
	return oc_remove_locked_then_unlock(list, handle);
}

oc_status_t
oc__list_take(oc_list_t *list, oc_handle_t handle, void **context)
{
	pthread_mutex_lock(&list->lock);
	if (!oc_handle_matches_locked(list, handle)) {
		pthread_mutex_unlock(&list->lock);
		return OC_ENOENT;
	}
	*context = oc_vacate_locked(list, handle.index);
	oc_maybe_shrink_locked(list);
	pthread_mutex_unlock(&list->lock);
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
	if (pthread_mutex_trylock(&list->lock) != 0)
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
 * Contexts added while it runs, into slots it has already passed, stay.
 */
#define OC_REMOVE_BATCH 256

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

		pthread_mutex_lock(&list->lock);
		if (index > list->head.scan_limit)
			index = list->head.scan_limit;
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
		pthread_mutex_unlock(&list->lock);

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

bool
oc_list_contains(oc_list_t *list, oc_handle_t handle)
{
	bool matches;

	if (list == NULL)
		return false;
	pthread_mutex_lock(&list->lock);
	matches = oc_handle_matches_locked(list, handle);
	pthread_mutex_unlock(&list->lock);
	return matches;
}

void
oc__list_finish(oc_list_t *list)
{
	/* Relaxed: the caller guarantees that no writer call is in progress or
	 * follows (as for oc_list_destroy), so the count is settled. */
	if (__atomic_load_n(&list->count, __ATOMIC_RELAXED) != 0)
		oc_list_clear(list);
	pthread_mutex_destroy(&list->lock);
	oc_free_used(list, list->used);
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
