/*
 * CObserverSwiftRuntime: the Swift runtime entry points ObserverSwift calls directly.
 * A Swift-only internal module (ObserverSwift depends on it; it is not a
 * product, and C or C++ embedders of CObserverCore never see it).
 */
#ifndef C_OBSERVER_SWIFT_RUNTIME_H
#define C_OBSERVER_SWIFT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__APPLE__)
#include <malloc/malloc.h>
#else
#include <malloc.h>
#endif

/*
 * csr_heap_block_bytes: the bytes the C allocator holds for `block`, an
 * address malloc returned and not yet freed: at least the size asked for,
 * rounded up to the allocator's size class. The Swift runtime allocates an
 * object whose alignment is at most 16 bytes with malloc, so a native Swift
 * object's address is such a block. Any thread; reads the block's header.
 */
static inline size_t
csr_heap_block_bytes(const void *block)
{
#if defined(__APPLE__)
	return malloc_size(block);
#else
	return malloc_usable_size((void *)(uintptr_t)block);
#endif
}

/*
 * swift_tryRetain: exported by the Swift runtime (swift/Runtime/HeapObject.h,
 * C calling convention). Adds a strong reference and returns the object,
 * unless the object's deinit has started: then it returns NULL and changes
 * nothing. Defined for native Swift objects only: an object whose reference
 * counting is Objective-C's must never be passed (ObserverSwift's only
 * caller, `UnownedObserver`, is compiled out where Objective-C exists).
 * (The Swift 6 runtime returns the object pointer, not a bool. Comparing
 * the result with the argument stays correct for a runtime whose result
 * would be a bool: it never equals an object's address, so nothing would
 * be called rather than a dead object.) The object's memory must still be
 * allocated: the caller holds an unowned reference, which keeps the
 * allocation, not the object.
 */
extern void *swift_tryRetain(void *object);

/*
 * csr_try_retain: strong-retains the native Swift object at `object` unless
 * its deinit has started. Any thread. On true the caller owns one strong
 * reference and must release it. One atomic on the object's inline
 * reference count, no side table: cheaper than a Swift `weak` load.
 */
static inline bool
csr_try_retain(const void *object)
{
	return swift_tryRetain((void *)(uintptr_t)object) == object;
}

/*
 * swift_isDeallocating: exported by the Swift runtime (HeapObject.h, C
 * calling convention). Whether the native Swift object's deinit has
 * started; one load of its inline reference count, no reference taken.
 * Same precondition as swift_tryRetain (native object, memory allocated).
 */
extern bool swift_isDeallocating(void *object);

/*
 * csr_is_deallocating: whether the native Swift object at `object` has
 * started its deinit. A snapshot: a live object may start it right after.
 */
static inline bool
csr_is_deallocating(const void *object)
{
	return swift_isDeallocating((void *)(uintptr_t)object);
}

/*
 * swift_conformsToProtocolWithExecutionContext: exported by the Swift 6.2+
 * runtime (swift/Runtime/Casting.h, C calling convention): the witness
 * table of `type`'s conformance to `protocol` (NULL when it does not
 * conform), whatever the calling thread's isolation, and in `context` the
 * global actor the conformance is isolated to (its first word: that actor's
 * metadata, NULL for a nonisolated conformance). A dynamic cast (`as? P`)
 * fails for an isolated conformance unless it runs on that actor; this
 * answers the same question without that dependence. Weak: a runtime that
 * predates isolated conformances (an older Darwin OS) lacks it, and then
 * every conformance is nonisolated.
 */
extern const void *swift_conformsToProtocolWithExecutionContext(
	const void *type, const void *protocol, void *context) __attribute__((weak));
extern const size_t swift_ConformanceExecutionContextSize __attribute__((weak));

/*
 * csr_conformance_isolation: 1 when `type` conforms to `protocol`, 0 when it
 * does not, -1 when the runtime cannot tell (no such entry point). On 1,
 * `*isolation` is the metadata of the global actor the conformance is
 * isolated to, or NULL.
 */
static inline int
csr_conformance_isolation(const void *type, const void *protocol, const void **isolation)
{
	void *context[8] = {0};
	*isolation = 0;
	if (!swift_conformsToProtocolWithExecutionContext || !&swift_ConformanceExecutionContextSize ||
	    swift_ConformanceExecutionContextSize > sizeof(context))
		return -1;
	if (!swift_conformsToProtocolWithExecutionContext(type, protocol, context))
		return 0;
	*isolation = context[0];
	return 1;
}

#endif /* C_OBSERVER_SWIFT_RUNTIME_H */
