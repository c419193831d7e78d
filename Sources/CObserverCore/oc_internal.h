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
 * A list inside memory its owner allocates (the keymap puts each key's list
 * in the key's entry): oc__list_bytes() bytes, 8-byte aligned. oc__list_init
 * makes an empty list there (false: no mutex; nothing to undo).
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
