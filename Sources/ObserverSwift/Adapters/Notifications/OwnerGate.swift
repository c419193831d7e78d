/// Ties an observer to the life of the owner whose group it was added to.
///
/// On Linux there is no way to run code when an arbitrary object is
/// deallocated, so a group cannot deactivate its observers at the exact
/// moment its owner dies. Instead every delivery asks the gate first: once
/// the owner is gone the observer deactivates itself instead of calling the
/// handler. The gate is bound at most once, lock-free, so deliveries read it
/// without a lock while `add(to:)` binds it from another thread.
final class OwnerGate: @unchecked Sendable {
    // @unchecked: the only state is an atomic pointer to an immutable box.

    /// The weak reference, boxed so that it is written only in its own init
    /// (a weak variable written while another thread reads it is a race).
    private final class WeakOwner: @unchecked Sendable {
        // @unchecked: `owner` is written once, in init; weak loads are
        // thread-safe against each other and against deallocation.
        weak var owner: AnyObject?
        init(_ owner: AnyObject) { self.owner = owner }
    }

    /// First stored property: the word of ``owner`` (see `AtomicWord`).
    var slotWord = LazyObjectStorage(nil)

    /// nil until bound; then the `WeakOwner`, kept until deinit.
    private var owner: LazyObjectWord<WeakOwner> { LazyObjectWord.first(of: self) }

    init() {}

    deinit {
        owner.release()
    }

    /// Binds the gate to `owner` unless it is already bound; returns whether
    /// this call bound it.
    @discardableResult
    func bind(to owner: AnyObject) -> Bool {
        let candidate = Unmanaged.passRetained(WeakOwner(owner))
        // Release on success publishes the fully initialised box to readers'
        // acquiring loads; acquire on failure is not needed (we only drop ours).
        guard self.owner.publish(candidate, ordering: .releasing) == nil else {
            candidate.release()
            return false
        }
        return true
    }

    /// True once the bound owner has been deallocated; false when unbound.
    var ownerIsGone: Bool {
        // Acquire pairs with the releasing exchange in `bind(to:)`.
        owner.withExisting { $0.owner == nil } ?? false
    }
}
