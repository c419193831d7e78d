/*
 * CObserverCore read sections and reclamation: one Concurrency Kit epoch
 * domain for the process, one epoch record per reading thread.
 *
 * Readers (the send path) enter a read section, take views of lists (see
 * oc_list.h) and leave it; memory a reader may still see is released only
 * after a grace period, i.e. once every section in progress when it was
 * retired has ended. A thread gets an epoch record the first time it reads;
 * the record is recycled when the thread exits.
 *
 * fork(): in the child, the records of threads that do not exist there (any
 * thread but the one that called fork) are reset, so a thread that was
 * inside a section at the fork does not block grace periods in the child,
 * and the core's own locks are reinitialized. A list or map whose writer
 * lock another thread held at the fork stays locked in the child (POSIX
 * semantics of an inherited mutex): writers on it would block there.
 */
#ifndef OC_EPOCH_H
#define OC_EPOCH_H

#include "oc_status.h"

#ifndef __cplusplus
/* Concurrency Kit's headers are C only; C++ uses the out-of-line section
 * functions below instead of the inline ones. */
#if defined(__has_include) && !__has_include(<ck_epoch.h>)
#error "ObserverSwift needs Concurrency Kit: apt-get install libck-dev (Debian/Ubuntu) or brew install concurrencykit pkg-config (macOS)"
#endif
#include <ck_epoch.h>
#endif

OC__DECLS_BEGIN

/* ------------------------------------------------------------------------ */
/* Read sections (the send path)                                            */
/* ------------------------------------------------------------------------ */

/* Per-thread reader state (an epoch record and a poll countdown). */
struct oc_thread;
typedef struct oc_thread oc_reader_t;

/* Outermost section exits between two reclamation polls by a reader. */
#define OC_READER_POLL_INTERVAL 1024u

/*
 * Out-of-line equivalents of oc_read_begin, oc_read_end,
 * oc_in_read_section, oc_reader_current and oc_read_begin_reader, with the
 * same contracts: for C++ (which cannot include Concurrency Kit's headers)
 * and for foreign-function interfaces.
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

extern __thread struct oc_thread *OC_NULLABLE oc__current_thread;

/* Slow path of oc_read_begin: registers (or recycles) this thread's record. */
struct oc_thread *oc__thread_attach(void);
/* Slow path of oc_read_end: runs reclamation work that is ready. */
void oc__reader_poll(struct oc_thread *thread);
/* oc_read_end found no section to end: counted, the thread left as it is. */
void oc__read_end_unbalanced(struct oc_thread *thread);

/*
 * oc_reader_current: the calling thread's reader, registering its epoch
 * record on first use (may allocate; aborts if that fails). The pointer
 * identifies the thread while it lives (a record is recycled only after its
 * thread exited). Does not enter a section.
 */
static inline oc_reader_t *
oc_reader_current(void)
{
	struct oc_thread *OC_NULLABLE thread = oc__current_thread;

	if (CK_CC_UNLIKELY(thread == NULL))
		return oc__thread_attach();
	return (struct oc_thread *)thread;
}

/*
 * oc__epoch_observe: the last step of entering an outermost section: loads
 * the global epoch and records it in the thread's record.
 *
 * Memory ordering: the load is an acquire load. It orders every load of the
 * section (the list head, the slot array, the contexts) after the epoch
 * load, so the epoch a section records is never newer than what the
 * section reads. Without it a reader on a machine that reorders loads could
 * read a slot array before it was unlinked, then an epoch advanced after
 * the unlink, and record that newer epoch: the reclaimer's scan would then
 * count the section as having started after the retirement and release the
 * array under it (the scenario of Concurrency Kit commit 1faa673, "add
 * missing barrier for RMO architectures in begin", which Concurrency Kit
 * 0.7.1's ck_epoch_begin lacks). x86 never reorders loads with loads: the
 * acquire load is the same `mov` as ck_pr_load_uint (no instruction added).
 * AArch64: `ldar` (required). 32-bit ARMv7: `ldr` then `dmb ish`
 * (required). The store of the record's epoch is plain (ck_pr_store_uint):
 * a scan that reads a stale value sees an older epoch, which only delays a
 * grace period.
 */
static inline void
oc__epoch_observe(ck_epoch_record_t *record)
{
	unsigned int epoch = __atomic_load_n(&record->global->epoch, __ATOMIC_ACQUIRE);

	ck_pr_store_uint(&record->epoch, epoch);
}

/*
 * oc__membarrier_active: true when the reclaimer issues
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) before every scan of the
 * epoch records, so that read sections need no store-load fence of their
 * own (Linux, where registering for it succeeded at core initialization and
 * OBSERVER_CORE_MEMBARRIER=0 did not force the fence). Written only at
 * initialization, before any thread can enter a section (pthread_once
 * orders it before every reader's first section), and in the child of a
 * fork (single-threaded then); readers load it relaxed: it never changes
 * while they run.
 */
#if defined(__linux__)
#define OC__MEMBARRIER_POSSIBLE 1
extern bool oc__membarrier_active;
#else
#define OC__MEMBARRIER_POSSIBLE 0
#endif

/*
 * oc__section_enter: ck_epoch_begin of Concurrency Kit 0.7.1 (no section
 * object), with the acquire load of oc__epoch_observe, and without the
 * store-load fence where the reclaimer issues membarrier instead.
 *
 * Memory ordering, outermost entry: either the reclaimer's scan sees this
 * section active, or the section's loads see the unlink that preceded the
 * retirement (a store-buffering pair: the section stores "active" then
 * loads the lists, the reclaimer has unlinked then loads "active").
 *  - Fenced (no membarrier): the store of "active" is followed by a
 *    store-load fence. On x86 (CK_MD_TSO) the `xchg` of ck_pr_fas_uint (a
 *    locked instruction, a full barrier); elsewhere a plain store then
 *    ck_pr_fence_memory (`dmb ish` on ARM).
 *  - membarrier (oc__membarrier_active): a plain store and a compiler
 *    barrier only. The reclaimer's membarrier, issued after every
 *    retirement it hands to ck_epoch and before it scans the records, runs
 *    a full barrier on every CPU executing one of our threads at some point
 *    P of this thread's execution: if the store of "active" precedes P, the
 *    scan sees it; if it follows P, every load of the section follows P and
 *    sees the unlinks made before the membarrier. The compiler barrier keeps
 *    the compiler from moving the section's loads above the store.
 * Nested entry: only this thread reads its depth, a plain increment (the
 * outermost entry ordered everything).
 */
static inline void
oc__section_enter(ck_epoch_record_t *record)
{
	unsigned int active = ck_pr_load_uint(&record->active);

	if (CK_CC_LIKELY(active == 0)) {
#if OC__MEMBARRIER_POSSIBLE
		if (CK_CC_LIKELY(__atomic_load_n(&oc__membarrier_active, __ATOMIC_RELAXED))) {
			ck_pr_store_uint(&record->active, 1);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			oc__epoch_observe(record);
			return;
		}
#endif
#if defined(CK_MD_TSO)
		ck_pr_fas_uint(&record->active, 1);
		ck_pr_fence_atomic_load();
#else
		ck_pr_store_uint(&record->active, 1);
		ck_pr_fence_memory();
#endif
		oc__epoch_observe(record);
		return;
	}
	ck_pr_store_uint(&record->active, active + 1);
}

/*
 * oc_read_begin_reader: oc_read_begin for a reader already obtained from
 * oc_reader_current on the calling thread.
 */
static inline void
oc_read_begin_reader(oc_reader_t *reader)
{
	OC_DEBUG_CHECK(reader == oc__current_thread,
	    "oc_read_begin_reader: the reader belongs to another thread");
	oc__section_enter(&reader->record);
}

/*
 * ThreadSanitizer support. TSan cannot see Concurrency Kit's inline-assembly
 * atomics nor the uninstrumented libck.so, so it would miss the edge that
 * makes epoch reclamation safe: everything a reader did inside a section
 * happens before the section's exit (release fence + store to the record),
 * which happens before the reclaimer's scan of that record in
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
 * Cost: a thread-local load plus oc__section_enter; the first call on a thread
 * also registers its epoch record (may allocate; aborts if that fails).
 */
static inline oc_reader_t *
oc_read_begin(void)
{
	struct oc_thread *thread = oc_reader_current();

	oc__section_enter(&thread->record);
	return thread;
}

/*
 * oc_read_end: leaves the section entered by the matching oc_read_begin on
 * this thread. Every OC_READER_POLL_INTERVAL outermost exits the thread also
 * polls reclamation — unless a writer polled since its last poll (writers do
 * that work while they are active) — and releases at most a few objects, so
 * memory is reclaimed without a dedicated thread and a send never carries a
 * writer's backlog; released contexts' callbacks may then run on this
 * thread, outside any section.
 *
 * An oc_read_end without a matching begin (the thread is in no section) is
 * ignored and counted in oc_stats().unbalanced_read_ends; debug builds
 * (OC_DEBUG_CHECKS) also report it as a failed check (abort). The thread's
 * state is never changed by it.
 *
 * This is ck_epoch_end (Concurrency Kit 0.7.1: release fence, then store of
 * active - 1) with the nesting depth read once, so that the outermost exit
 * costs what ck_epoch_end costs and depth 0 is caught on the rare path.
 * Memory ordering: the release fence orders every load and store of the
 * section before the store that ends it, which the reclaimer reads (then
 * fences) before it declares a grace period over. On x86 (TSO) the fence
 * compiles to nothing, stores are not reordered with earlier loads or
 * stores anyway; on ARM it is a `dmb ish`, and is required there.
 */
static inline void
oc_read_end(oc_reader_t *reader)
{
	unsigned int active = ck_pr_load_uint(&reader->record.active);

	OC_DEBUG_CHECK(reader == oc__current_thread,
	    "oc_read_end: the reader belongs to another thread");
#ifdef OC__TSAN_ANNOTATIONS
	oc__tsan_reader_exit();
#endif
	ck_pr_fence_release();
	if (CK_CC_LIKELY(active == 1)) {
		ck_pr_store_uint(&reader->record.active, 0);
		if (CK_CC_UNLIKELY(--reader->poll_countdown == 0))
			oc__reader_poll(reader);
		return;
	}
	if (CK_CC_UNLIKELY(active == 0)) {
		oc__read_end_unbalanced(reader);
		OC_DEBUG_CHECK(false, "oc_read_end without a matching oc_read_begin");
		return;
	}
	ck_pr_store_uint(&reader->record.active, active - 1);
}

/* True when the calling thread is inside a read section. */
static inline bool
oc_in_read_section(void)
{
	struct oc_thread *OC_NULLABLE thread = oc__current_thread;

	/* This thread's own record, written only by this thread: no ordering. */
	return thread != NULL && ck_pr_load_uint(&thread->record.active) != 0;
}

#else /* __cplusplus */

static inline oc_reader_t *oc_read_begin(void) { return oc_read_begin_outlined(); }
static inline void oc_read_end(oc_reader_t *reader) { oc_read_end_outlined(reader); }
static inline bool oc_in_read_section(void) { return oc_in_read_section_outlined(); }
static inline oc_reader_t *oc_reader_current(void) { return oc_reader_current_outlined(); }
static inline void oc_read_begin_reader(oc_reader_t *reader) { oc_read_begin_reader_outlined(reader); }

#endif /* __cplusplus */

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
 * Writers poll after a change once the calling thread has retired
 * OC_WRITER_POLL_THRESHOLD objects since its latest writer poll. Whether a poll scans the
 * epoch records (the scan is what completes grace periods): with fenced
 * read sections every poll scans. Where the reclaimer issues membarrier
 * instead (oc__membarrier_active), each scan interrupts every CPU running
 * one of the process's threads, a sender among them, so a poll scans only
 * when OC_SCAN_INTERVAL_NS have passed since the latest scan, or when
 * OC_SCAN_RETIRED_BYTES bytes of core memory or OC_SCAN_RETIRED_OBJECTS
 * objects were retired since it (OC_SCAN_RETIRED_OBJECTS_ALONE when no
 * poll since it saw another thread inside a read section: then the
 * membarrier interrupts nobody); otherwise it releases what is already
 * ready and leaves the rest to a later poll. Hence at most one polling
 * membarrier per interval plus one per object or byte limit's worth of
 * retirements, and, while readers leave their sections, fewer than 2 x
 * (OC_SCAN_RETIRED_OBJECTS + OC_WRITER_POLL_THRESHOLD) retired objects per
 * polling writer and 2 x OC_SCAN_RETIRED_BYTES (plus the largest object)
 * pending. A barrier and oc_synchronize always scan.
 */
#define OC_WRITER_POLL_THRESHOLD 64u
#define OC_SCAN_INTERVAL_NS 5000000u
#define OC_SCAN_RETIRED_OBJECTS 16384u
#define OC_SCAN_RETIRED_OBJECTS_ALONE 1024u
#define OC_SCAN_RETIRED_BYTES 4194304u

/*
 * oc_reclaim_poll: non-blocking. Releases retired memory and contexts whose
 * grace period is known to have passed, on the calling thread, and scans
 * for more when the policy above says so. Writers call it after a change
 * (see OC_WRITER_POLL_THRESHOLD; releasing all that is ready);
 * readers every OC_READER_POLL_INTERVAL sections when writers are quiet
 * (releasing a few), so memory is reclaimed without a dedicated thread; a
 * program may also call it at any time.
 */
void oc_reclaim_poll(void);

/*
 * oc_retire: releases `context` with `release(context)` once every read
 * section that was in progress on any thread when it was called has ended:
 * for an object readers find by an address they load inside a section
 * (a value published by pointer), retired once the address is replaced.
 * `record` is OC_RETIREMENT_BYTES bytes of the caller's memory, aligned for
 * a pointer, typically inside the object retired: the core keeps its
 * bookkeeping there, so retiring allocates nothing and cannot fail. The
 * caller does not touch `record` again; `release` runs on some thread that
 * polls, outside every lock of the core, and may free the memory holding
 * `record`. `bytes` is what oc_stats() counts as pending until then. Any
 * thread, inside a read section or not; never waits. Polls as writers do
 * (see OC_WRITER_POLL_THRESHOLD), so it may release other retired objects
 * on the calling thread.
 */
#define OC_RETIREMENT_BYTES 64u
void oc_retire(void *record, void (*release)(void *context), void *context,
    size_t bytes);

/*
 * oc_reclaim_barrier: waits for a grace period and releases everything
 * retired before the call, and what releasing it retires on the calling
 * thread in turn (a context holding the last reference to another list),
 * round after round until a round retires nothing more. Then frees the
 * retirement records the calling thread keeps for reuse (a thread that
 * releases removed contexts keeps up to OC_SCAN_RETIRED_OBJECTS_ALONE of
 * them, 64 bytes each, until it exits). For shutdown and tests. Returns
 * OC_EINSECTION (doing nothing) from inside a read section.
 */
oc_status_t oc_reclaim_barrier(void);

/*
 * Process-wide counters. Each is a sum of per-thread counts (each thread
 * counts its own adds, removals and retirements without a read-modify-
 * write), read atomically count by count: exact once the threads that
 * change them are quiet; while they run, a snapshot that may lag them.
 */
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
	/* oc_read_end calls that had no section to end (ignored). */
	uint64_t unbalanced_read_ends;
	/* Epoch records of threads that did not survive a fork(), reset in
	 * the child (counted in the child only). */
	uint64_t records_reset_after_fork;
} oc_stats_t;

oc_stats_t oc_stats(void);

OC__DECLS_END

#endif /* OC_EPOCH_H */
