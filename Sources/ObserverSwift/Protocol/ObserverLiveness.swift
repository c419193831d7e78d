import CObserverCore

/// Liveness probes for observers the registry holds without owning.
///
/// A registered observer is held by an `unowned` reference: that keeps its
/// memory allocated (so its address stays valid and is never reused while
/// the registry knows it) but not the object itself. Before calling an
/// observer a send takes a strong reference with `oc_swift_try_retain`,
/// which fails once the observer's deinit has started: a deallocated
/// observer is never called, and one that is being called cannot be
/// deallocated under the call. This is the cost of a Swift `weak` load minus
/// the side-table indirection (a weak reference would also push every
/// retain of the observer onto its side table).
@usableFromInline
enum ObserverLiveness {
    /// Whether the object at `address` has not started deinitializing.
    /// The caller must hold an unowned reference to it.
    static func isAlive(_ address: UnsafeRawPointer) -> Bool {
        guard oc_swift_try_retain(address) else { return false }
        Unmanaged<AnyObject>.fromOpaque(address).release()
        return true
    }
}
