/*
 * CObserverCore: lock-free observer lists with epoch-based reclamation.
 *
 * The umbrella header of the C API, in three parts:
 *   - oc_epoch.h: read sections (the send path), grace periods, reclamation
 *     and counters;
 *   - oc_list.h: observer lists, handles and views, with the send semantics;
 *   - oc_keymap.h: keyed observer lists (a lock-free map from keys to lists).
 * Status codes and shared build settings are in oc_status.h. Entry points
 * for tests only are in oc_testing.h, which this header does not include.
 *
 * Threads: every function may be called from any thread unless its contract
 * says otherwise. The fast paths (read sections, views) are static inline
 * in the headers; the slow paths live in the .c files.
 */
#ifndef C_OBSERVER_CORE_H
#define C_OBSERVER_CORE_H

#include "oc_status.h"
#include "oc_epoch.h"
#include "oc_list.h"
#include "oc_keymap.h"
#include "oc_claim.h"

#endif /* C_OBSERVER_CORE_H */
