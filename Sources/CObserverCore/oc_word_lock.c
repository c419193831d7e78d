/*
 * The writers' lock's slow paths (oc_word_lock_t in oc_internal.h, whose
 * fast paths are inline there). Darwin uses os_unfair_lock instead and
 * compiles nothing here.
 */
#include "oc_internal.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif !defined(__APPLE__)
#include <sched.h>
#endif

#if !defined(__APPLE__)
/* Attempts to take a busy writer lock before parking (see oc_word_lock_t). */
#define OC_WORD_LOCK_SPINS 64u

/*
 * oc_word_lock's slow path: spins while the holder is likely to release soon,
 * then marks the lock contended (2) and parks until an exchange finds it
 * free. Taking it by exchange leaves it marked 2 even when no other thread
 * waits: at worst the next unlock makes one needless wake call. Acquire on
 * both the compare-exchange and the exchange: what the previous holder
 * wrote happens before what this one reads (see oc_word_lock_t).
 */
void
oc__word_lock_wait(oc_word_lock_t *lock)
{
	unsigned int spins;

	for (spins = 0; spins < OC_WORD_LOCK_SPINS; spins++) {
		uint32_t expected = 0;

		/* Relaxed look first: spinning on a load does not take the line. */
		if (__atomic_load_n(&lock->word, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&lock->word, &expected, 1, false,
		    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		ck_pr_stall();
	}
	while (__atomic_exchange_n(&lock->word, 2, __ATOMIC_ACQUIRE) != 0) {
#if defined(__linux__)
		/* Sleeps only while the word is still 2; any wake or change returns. */
		syscall(SYS_futex, &lock->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
#else
		sched_yield();
#endif
	}
}

/* oc_word_unlock's slow path: the word said a thread may be parked; wake one. */
void
oc__word_lock_wake(oc_word_lock_t *lock)
{
#if defined(__linux__)
	syscall(SYS_futex, &lock->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
#else
	(void)lock;
#endif
}
#endif
