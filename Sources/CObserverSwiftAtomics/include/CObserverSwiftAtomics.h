/*
 * CObserverSwiftAtomics: the atomic words ObserverSwift's engine uses (the Swift
 * standard library's `Atomic` type needs macOS 15 / iOS 18; these need
 * nothing but a C11 compiler). A Swift-only internal module: ObserverSwift depends on
 * it, it is not a product, and C or C++ embedders of CObserverCore never
 * see it.
 *
 * Every function is `static inline` and always inlined: Swift's Clang
 * importer compiles it into the caller, so an atomic costs what the
 * instruction costs (no call), and `order` is a constant there, so the
 * compiler emits that ordering's instruction and no switch.
 *
 * Words: `ea_u8` (Bool), `ea_u32`, `ea_u64`, `ea_word` (uintptr_t: Int, UInt,
 * pointers). Each is a plain integer in memory the caller owns; every
 * access to it while another thread may access it goes through these
 * functions (mixing plain and atomic accesses is a data race).
 *
 * Orderings (`order`, one of the EA_ constants), with C11's meaning:
 * - EA_RELAXED: atomic, orders nothing else.
 * - EA_ACQUIRE (loads, the load half of updates): no later access moves
 *   before it; it sees everything written before the release it reads from.
 * - EA_RELEASE (stores, the store half of updates): no earlier access moves
 *   after it.
 * - EA_ACQ_REL (updates): both.
 * - EA_SEQ_CST: acquire and/or release, and one total order over all
 *   sequentially consistent operations (what Dekker-style handshakes need).
 * A load takes RELAXED, ACQUIRE or SEQ_CST; a store RELAXED, RELEASE or
 * SEQ_CST; updates any of the five. Swift's ordering types only offer those.
 */
#ifndef C_OBSERVER_SWIFT_ATOMICS_H
#define C_OBSERVER_SWIFT_ATOMICS_H

#include <stdbool.h>
#include <stdint.h>

#define EA_RELAXED __ATOMIC_RELAXED
#define EA_ACQUIRE __ATOMIC_ACQUIRE
#define EA_RELEASE __ATOMIC_RELEASE
#define EA_ACQ_REL __ATOMIC_ACQ_REL
#define EA_SEQ_CST __ATOMIC_SEQ_CST

#define EA_INLINE static inline __attribute__((always_inline))

/*
 * The failure ordering of a compare-exchange with success ordering `order`:
 * the strongest load ordering it implies (release -> relaxed, acquire-release
 * -> acquire), since a failed compare-exchange stores nothing.
 */
EA_INLINE int
ea_failure_order(int order)
{
	if (order == EA_RELEASE) return EA_RELAXED;
	if (order == EA_ACQ_REL) return EA_ACQUIRE;
	return order;
}

/*
 * ea_fence: a memory fence with `order` (ACQUIRE, RELEASE, ACQ_REL or
 * SEQ_CST; RELAXED does nothing). SEQ_CST is a full barrier: no load or
 * store moves across it in either direction, and it joins the single total
 * order of sequentially consistent operations.
 */
EA_INLINE void
ea_fence(int order)
{
	__atomic_thread_fence(order);
}

/*
 * EA_DEFINE_WORD(name, type) defines, for one word type, these functions.
 * `word` must be non-null, aligned for `type`, and valid for the call.
 *
 * ea_<name>_load(word, order): returns the word's value, atomically, with
 *   `order` (RELAXED, ACQUIRE or SEQ_CST).
 * ea_<name>_store(word, value, order): sets the word to `value`, atomically,
 *   with `order` (RELAXED, RELEASE or SEQ_CST).
 * ea_<name>_exchange(word, value, order): sets the word to `value` and
 *   returns the value it replaced, as one atomic read-modify-write with
 *   `order` (any).
 * ea_<name>_compare_exchange(word, expected, desired, order): if the word
 *   equals `expected`, sets it to `desired` (one atomic read-modify-write
 *   with `order`); otherwise only reads it (an atomic load with
 *   ea_failure_order(order)). Returns the value found: it equals `expected`
 *   exactly when the word was set. Strong: never fails spuriously. (By
 *   value, not through an `expected` pointer: a Swift caller passing the
 *   address of a local gets a stack-protector check in its function.)
 * ea_<name>_fetch_add(word, delta, order) / ea_<name>_fetch_sub: adds
 *   (subtracts) `delta`, wrapping modulo 2^bits, and returns the value
 *   before, as one atomic read-modify-write with `order` (any).
 */
#define EA_DEFINE_WORD(name, type)                                                      \
	EA_INLINE type ea_##name##_load(const type *word, int order)                    \
	{                                                                               \
		return __atomic_load_n(word, order);                                    \
	}                                                                               \
	EA_INLINE void ea_##name##_store(type *word, type value, int order)             \
	{                                                                               \
		__atomic_store_n(word, value, order);                                   \
	}                                                                               \
	EA_INLINE type ea_##name##_exchange(type *word, type value, int order)          \
	{                                                                               \
		return __atomic_exchange_n(word, value, order);                         \
	}                                                                               \
	EA_INLINE type ea_##name##_compare_exchange(type *word, type expected,          \
	    type desired, int order)                                                    \
	{                                                                               \
		__atomic_compare_exchange_n(word, &expected, desired, false, order,     \
		    ea_failure_order(order));                                           \
		return expected;                                                        \
	}                                                                               \
	EA_INLINE type ea_##name##_fetch_add(type *word, type delta, int order)         \
	{                                                                               \
		return __atomic_fetch_add(word, delta, order);                          \
	}                                                                               \
	EA_INLINE type ea_##name##_fetch_sub(type *word, type delta, int order)         \
	{                                                                               \
		return __atomic_fetch_sub(word, delta, order);                          \
	}

EA_DEFINE_WORD(u8, uint8_t)
EA_DEFINE_WORD(u32, uint32_t)
EA_DEFINE_WORD(u64, uint64_t)
EA_DEFINE_WORD(word, uintptr_t)

#undef EA_DEFINE_WORD

#include "ea_subscription_tracking.h"

#endif /* C_OBSERVER_SWIFT_ATOMICS_H */
