#if !canImport(ObjectiveC)
    import CObserverSwiftRuntime
#endif

/// A registered observer, held without owning it, that a send can call only
/// while it lives: the one place where ObserverSwift probes an object's
/// liveness through the Swift runtime.
///
/// Invariant: `address` is the address of an object whose memory stays
/// allocated while this value exists (the `unowned` reference keeps the
/// allocation, not the object), so probing it is never a use after free and
/// the address is never reused for another object meanwhile.
///
/// One word without Objective-C: there every object is a native Swift
/// object, whose `unowned` reference is stored as its address, so the
/// address is read from the reference's bits (never loaded as a reference,
/// which would trap once the deinit has started). Where Objective-C exists,
/// the address is stored beside the reference.
/// ``retainIfAlive()`` takes a strong reference only if the object's deinit
/// has not started, so a deinitializing observer is never called and one
/// being called cannot be deinitialized under the call.
///
/// How the probe is chosen, so that it can be checked by reading:
/// - Without Objective-C (Linux, Windows, ...) every class instance is a
///   native Swift object, and the probe is `swift_tryRetain` (one atomic on
///   the object's inline reference count, no side table): cheaper than a
///   `weak` load, which is why the protocol-typed send path uses it.
/// - Where Objective-C exists (Apple platforms) an object may be reference
///   counted by Objective-C (an `NSObject` subclass, a proxy, a bridged
///   Core Foundation object); `swift_tryRetain` must never see such an
///   object. Telling them apart would mean walking the class hierarchy at
///   runtime, which cannot be tested here, so on those platforms *every*
///   observer takes the safe path: a Swift `weak` reference, loaded strong.
///   That path is correct for any object and costs a weak load per call.
///   The `#if` below is the only switch; `CObserverSwiftRuntime` is not even
///   imported there, so the fast path cannot be reached by mistake.
@usableFromInline
package struct UnownedObserver: @unchecked Sendable {
    // @unchecked: immutable after init; the weak reference (Objective-C
    // platforms) is read through the runtime's thread-safe weak load.

    /// Keeps the observer's allocation alive. Never loaded: loading an
    /// unowned reference to a deinitialized object traps.
    @usableFromInline package unowned let object: AnyObject
    #if canImport(ObjectiveC)
        /// The observer's address.
        @usableFromInline package let storedAddress: UnsafeRawPointer
        /// The probe where Objective-C reference counting may be in use.
        @usableFromInline package weak var probe: AnyObject?
    #endif

    @inlinable
    package init(_ object: AnyObject) {
        self.object = object
        #if canImport(ObjectiveC)
            self.storedAddress = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            self.probe = object
        #else
            assert(
                address == UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()),
                "UnownedObserver: an unowned reference is not stored as its object's address")
        #endif
    }

    /// The observer's address: stable and unique while this value exists.
    @inlinable
    package var address: UnsafeRawPointer {
        #if canImport(ObjectiveC)
            return storedAddress
        #else
            // The reference's bits, not a load of the reference (see above).
            return unsafeBitCast(self, to: UnsafeRawPointer.self)
        #endif
    }

    /// Takes one strong reference to the observer unless its deinit has
    /// started. On true the caller owns that reference (for example through
    /// `Unmanaged.fromOpaque(address).takeRetainedValue()`) and must release it.
    @inlinable @inline(__always)
    package func retainIfAlive() -> Bool {
        #if canImport(ObjectiveC)
            guard let strong = probe else { return false }
            _ = Unmanaged.passRetained(strong)
            return true
        #else
            return csr_try_retain(address)
        #endif
    }

    /// Calls `body` with a strong reference to the observer as a `T`, or
    /// returns nil (nothing called) once its deinit has started. The caller
    /// guarantees that the observer is a `T` (it was stored as one).
    @inlinable @inline(__always)
    package func withLive<T: AnyObject, Result>(_ type: T.Type, _ body: (T) -> Result) -> Result? {
        guard retainIfAlive() else { return nil }
        // Takes over the reference just retained; released after `body`.
        let strong = Unmanaged<T>.fromOpaque(address).takeRetainedValue()
        return body(strong)
    }

    /// The observer's identity: its address, which no other object takes
    /// while this value exists. Readable after the observer's deallocation.
    @inlinable
    package var identifier: ObjectIdentifier { unsafeBitCast(address, to: ObjectIdentifier.self) }

    /// Whether `word` is a reference to the observer (its address), as the
    /// first word of the observer's cast to a class-bound existential is.
    @inlinable
    package func isReference(_ word: UInt) -> Bool { word == UInt(bitPattern: address) }

    /// Whether `object` is this observer. Exact even after the observer's
    /// deallocation: its memory stays allocated while this value exists, so
    /// no other object can be at its address.
    package func refers(to object: AnyObject) -> Bool {
        address == UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
    }

    /// Whether the observer's deinit has started, without taking a
    /// reference (a probe cheaper than ``isAlive`` for sweeps: one load, no
    /// atomic write, and no release that could run the observer's deinit).
    package var hasStartedDeinit: Bool {
        #if canImport(ObjectiveC)
            return probe == nil
        #else
            return csr_is_deallocating(address)
        #endif
    }

    /// Whether the observer's deinit has not started.
    package var isAlive: Bool {
        guard retainIfAlive() else { return false }
        Unmanaged<AnyObject>.fromOpaque(address).release()
        return true
    }

    /// A strong reference to the observer, or nil once it is deinitializing.
    @inlinable
    package func strongObserver() -> AnyObject? {
        guard retainIfAlive() else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(address).takeRetainedValue()
    }
}
