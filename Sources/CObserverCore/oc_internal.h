/*
 * Internals shared by the core's .c files: allocation (with failure
 * injection for tests) and retirement of memory readers may still see.
 */
#ifndef OC_INTERNAL_H
#define OC_INTERNAL_H

#include "CObserverCore.h"
#include "oc_testing.h"

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

/* malloc that honours oc_debug_fail_allocations. */
void *oc__alloc(size_t bytes);

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

/*
 * oc__retire: hands `retired` to the reclamation domain. Any thread, with or
 * without a list lock held; never waits for readers. `retired->release`
 * runs later, on some thread that polls, outside every lock of the core.
 */
void oc__retire(struct oc_retired *retired, void (*release)(struct oc_retired *),
    size_t bytes);

/*
 * Writers call this after every change: it polls reclamation only once
 * OC_WRITER_POLL_THRESHOLD (oc_epoch.h) retired objects are pending, so a
 * burst of subscribe/cancel pairs does not poll on each change, while the
 * garbage a writer leaves behind stays bounded.
 */

/* Ready objects a sender releases per poll (see oc__reader_poll). */
#define OC_READER_RELEASE_LIMIT 8u
void oc__writer_poll(void);

/* Counts a context leaked because its retirement could not be recorded. */
void oc__count_leaked_context(void);

/* Process-wide count of stored contexts (maintained by the list code). */
void oc__live_contexts_add(int64_t delta);

/*
 * Takes the next sequence number for an add: unique in the process, never 0
 * and never OC__SEQUENCE_FREE. False when every one has been issued.
 */
bool oc__next_sequence(uint64_t *sequence);

#endif
