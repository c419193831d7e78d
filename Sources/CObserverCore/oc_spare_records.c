/*
 * The spare retirement records of removed contexts (struct
 * oc_spare_records in oc_internal.h, whose fast paths are inline there):
 * the per-thread pool, its thread-exit destructor, and the barrier's way
 * to empty it.
 */
#include "oc_internal.h"

#include <pthread.h>
#include <stdlib.h>

__thread struct oc_spare_records oc__spare_records;
static pthread_once_t oc_spares_once = PTHREAD_ONCE_INIT;
static pthread_key_t oc_spares_key;
static bool oc_spares_key_made;

/* Frees every record of `spares` (its owner's thread only). */
static void
oc_spares_empty(struct oc_spare_records *spares)
{
	while (spares->top != NULL) {
		struct oc_retired_context *item = spares->top;

		spares->top = (struct oc_retired_context *)(void *)item->retired.next_ready;
		free(item);
	}
	spares->count = 0;
}

/* Thread-exit destructor: frees the cache and closes it. */
static void
oc_spares_free(void *value)
{
	struct oc_spare_records *spares = value;

	spares->state = 2;
	oc_spares_empty(spares);
}

/* oc__free_spare_records: frees the calling thread's spare records. */
void
oc__free_spare_records(void)
{
	oc_spares_empty(&oc__spare_records);
}

/* pthread_once routine: the key whose destructor frees a thread's pool. */
static void
oc_spares_make_key(void)
{
	oc_spares_key_made = pthread_key_create(&oc_spares_key, oc_spares_free) == 0;
}

/*
 * oc__keep_context_record_slow: oc__keep_context_record when the calling
 * thread's pool is not open (its destructor not yet registered, or closed)
 * or full. Registers the destructor on first use; keeps the record when
 * the pool is open and has room, frees it otherwise.
 */
void
oc__keep_context_record_slow(struct oc_retired_context *item)
{
	struct oc_spare_records *spares = &oc__spare_records;

	if (spares->state == 0) {
		(void)pthread_once(&oc_spares_once, oc_spares_make_key);
		spares->state = oc_spares_key_made &&
		    pthread_setspecific(oc_spares_key, spares) == 0 ? 1 : 2;
	}
	if (spares->state != 1 || spares->count >= OC_SPARE_RECORDS) {
		free(item);
		return;
	}
	item->retired.next_ready = (struct oc_retired *)(void *)spares->top;
	spares->top = item;
	spares->count++;
}
