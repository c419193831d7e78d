/*
 * Allocation with failure injection: every allocation of the core that can
 * fail goes through oc__alloc, which fails the next N of them while a test
 * asked for it (oc_debug_fail_allocations in include/oc_testing.h).
 */
#include "oc_internal.h"

#include <stdlib.h>

/* Relaxed: failure injection for tests, no ordering implied. */
unsigned int oc__failing_allocations;

/*
 * oc__alloc: malloc(bytes), or NULL without allocating while
 * oc__failing_allocations is above 0 (each such call consumes one). Any
 * thread. The count is taken by a relaxed compare-exchange: concurrent
 * callers fail exactly as many allocations as were asked for.
 */
void *
oc__alloc(size_t bytes)
{
	unsigned int left = __atomic_load_n(&oc__failing_allocations, __ATOMIC_RELAXED);

	while (left > 0) {
		if (__atomic_compare_exchange_n(&oc__failing_allocations, &left, left - 1,
		    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return NULL;
	}
	return malloc(bytes);
}

/* oc_debug_fail_allocations: the next `count` oc__alloc calls fail. */
void
oc_debug_fail_allocations(unsigned int count)
{
	__atomic_store_n(&oc__failing_allocations, count, __ATOMIC_RELAXED);
}
