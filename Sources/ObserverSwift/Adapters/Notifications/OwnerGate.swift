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

    /// First stored property: `slot`'s word (see `AtomicWord`).
    var slotWord = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
    /// nil until bound; then a +1 `WeakOwner`, released in deinit.
    private var slot: AtomicWord<UnsafeMutableRawPointer?> { AtomicWords.first(self) }

    init() {}

    deinit {
        if let bound = slot.load(ordering: .acquiring) {
            Unmanaged<WeakOwner>.fromOpaque(bound).release()
        }
    }

    /// Binds the gate to `owner` unless it is already bound; returns whether
    /// this call bound it.
    @discardableResult
    func bind(to owner: AnyObject) -> Bool {
        let candidate = Unmanaged.passRetained(WeakOwner(owner)).toOpaque()
        // Release on success publishes the fully initialised box to readers'
        // acquiring loads; acquire on failure is not needed (we only drop ours).
        let (exchanged, _) = slot.compareExchange(expected: nil, desired: candidate, ordering: .releasing)
        if !exchanged {
            Unmanaged<WeakOwner>.fromOpaque(candidate).release()
        }
        return exchanged
    }

    /// Whether the gate is bound to an owner.
    var isBound: Bool { slot.load(ordering: .acquiring) != nil }

    /// True once the bound owner has been deallocated; false when unbound.
    var ownerIsGone: Bool {
        // Acquire pairs with the releasing exchange in `bind(to:)`.
        guard let bound = slot.load(ordering: .acquiring) else { return false }
        return Unmanaged<WeakOwner>.fromOpaque(bound)._withUnsafeGuaranteedRef { $0.owner == nil }
    }
}
