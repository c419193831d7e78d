/*
 * Fatal errors and the debug consistency checks (OC_DEBUG_CHECK in
 * include/oc_status.h): what the core does when it cannot go on.
 */
#include "oc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relaxed counter and switch of the debug checks; they order nothing. */
static uint64_t oc_check_failures;
static bool oc_checks_not_fatal;

/*
 * oc__fatal: prints what failed with `error` (an errno value) and aborts.
 * For failures the core cannot report to its caller (a thread-local key,
 * a record's memory): never returns.
 */
void
oc__fatal(const char *what, int error)
{
	fprintf(stderr, "CObserverCore: %s failed (%d: %s)\n", what, error,
	    strerror(error));
	abort();
}

/*
 * oc__check_failed: a debug consistency check failed. Counts it, prints
 * `what`, and aborts unless a test made checks non-fatal.
 */
void
oc__check_failed(const char *what)
{
	bool fatal = !__atomic_load_n(&oc_checks_not_fatal, __ATOMIC_RELAXED);

	__atomic_fetch_add(&oc_check_failures, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "CObserverCore: failed check%s: %s\n",
	    fatal ? "" : " (counted; a test made checks non-fatal)", what);
	if (fatal)
		abort();
}

/* oc_testing_set_checks_fatal: whether a failed check aborts (default true). */
void
oc_testing_set_checks_fatal(bool fatal)
{
	__atomic_store_n(&oc_checks_not_fatal, !fatal, __ATOMIC_RELAXED);
}

/* oc_testing_check_failures: failed checks counted in the process so far. */
uint64_t
oc_testing_check_failures(void)
{
	return __atomic_load_n(&oc_check_failures, __ATOMIC_RELAXED);
}
