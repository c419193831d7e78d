/*
 * CObserverCore entry points for tests only: failure injection, fast-
 * forwarding the handle sequence, switching debug checks from aborting to
 * counting, and sizes that tests compare. Not part of the umbrella header
 * CObserverCore.h; C tests include this header, Swift tests import the
 * submodule `CObserverCore.Testing`.
 */
#ifndef OC_TESTING_H
#define OC_TESTING_H

#include "CObserverCore.h"

OC__DECLS_BEGIN

/*
 * oc_debug_fail_allocations: makes the next `count` core allocations fail,
 * so that tests can check that OC_ENOMEM is reported and nothing is lost.
 */
void oc_debug_fail_allocations(unsigned int count);

/*
 * oc_testing_advance_sequence: makes `next` the sequence number of the next
 * add in the process, if it is above every number issued so far (the
 * counter only moves forward, so live lists keep their ordering); returns
 * the sequence number of the next add after the call. `next` is clamped to
 * OC__SEQUENCE_FREE (exhausted). Any thread.
 */
uint64_t oc_testing_advance_sequence(uint64_t next);

/*
 * oc_testing_set_checks_fatal: whether a failed debug check (OC_DEBUG_CHECK)
 * aborts the process (the default) or is only reported and counted, so that
 * tests can exercise the checks. Process-wide.
 */
void oc_testing_set_checks_fatal(bool fatal);

/* Failed debug checks so far (process-wide, relaxed). */
uint64_t oc_testing_check_failures(void);

/*
 * oc_testing_sections_use_membarrier: true when read sections run without
 * their store-load fence because the reclaimer issues
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) before each scan (Linux,
 * registration succeeded, OBSERVER_CORE_MEMBARRIER=0 not set when the core
 * initialized); false when sections keep the fence. Initializes the core.
 */
bool oc_testing_sections_use_membarrier(void);

/* Private expedited membarriers the reclaimer has issued (relaxed). */
uint64_t oc_testing_membarriers(void);

/* The limits of the scan policy (see OC_SCAN_INTERVAL_NS in oc_epoch.h). */
typedef struct oc_scan_policy {
	uint64_t interval_ns;
	uint64_t retired_objects;
	uint64_t retired_objects_alone;
	uint64_t retired_bytes;
} oc_scan_policy_t;

/*
 * oc_testing_set_scan_policy: replaces the scan policy's limits (defaults:
 * OC_SCAN_INTERVAL_NS, OC_SCAN_RETIRED_OBJECTS,
 * OC_SCAN_RETIRED_OBJECTS_ALONE, OC_SCAN_RETIRED_BYTES) and
 * returns the previous ones, so that a test can isolate one trigger (a
 * limit of UINT64_MAX never triggers). Takes the reclaim lock, which a
 * barrier holds while it waits for read sections: never call it from
 * inside one.
 */
oc_scan_policy_t oc_testing_set_scan_policy(oc_scan_policy_t policy);

/* oc_list_capacity: slots in the list's current array. NULL: 0. */
size_t oc_list_capacity(const oc_list_t *OC_NULLABLE list);

/*
 * oc_list_bytes_held: the bytes the list holds now, by the core's own
 * accounting: the list (with its first array), its current slot array and
 * bitmap when they are allocations of their own, and its table of moved
 * contexts. Retired arrays waiting for their grace period are not counted
 * (oc_stats counts them). Takes the list's writer lock. NULL: 0.
 */
size_t oc_list_bytes_held(oc_list_t *OC_NULLABLE list);

/*
 * oc_testing_list_resizes: slot arrays replaced so far by growth or shrink,
 * in all lists of the process (relaxed).
 */
uint64_t oc_testing_list_resizes(void);

/*
 * oc_keymap_table_bytes: bytes of the map's current table (it
 * shrinks again after mass removal). NULL map: 0.
 */
size_t oc_keymap_table_bytes(oc_keymap_t *OC_NULLABLE map);

OC__DECLS_END

#endif /* OC_TESTING_H */
