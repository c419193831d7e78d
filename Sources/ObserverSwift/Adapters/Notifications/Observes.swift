import ObserverEngine

/// An observer that can be switched on and off: ``NotificationObserver`` and
/// ``KeyPathObserver`` (HSObserver's `HSObserves`).
///
/// A ``HasObservers`` owner keeps any number of them as a group and switches
/// them together with `activateObservers()` / `deactivateObservers()`.
///
/// Conformers must allow `activate()` / `deactivate()` from any thread, make
/// both idempotent, and stop observing when deallocated.
public protocol Observes: AnyObject {
    /// Starts observing. Idempotent; returns `self` for chaining.
    @discardableResult
    func activate() -> Self

    /// Stops observing. Idempotent; returns `self` for chaining.
    @discardableResult
    func deactivate() -> Self

    /// Whether the observer is registered now.
    var isActive: Bool { get }
}

extension Observes {
    /// Adds this observer to `owner`'s group (see ``HasObservers``), which
    /// keeps it until the owner is deallocated; returns `self` for chaining.
    ///
    /// Only the first owner an observer is added to gates it: once that
    /// owner is deallocated, the observer never calls its handler again.
    ///
    /// <!-- snippet: fragment of WaveOwner -->
    /// ```swift
    /// NotificationObserver(forName: .wave) { _ in print("wave") }
    ///     .add(to: self)
    ///     .activate()
    /// ```
    @discardableResult
    public func add<Owner: HasObservers>(to owner: Owner) -> Self {
        owner.addToGroup(self)
        return self
    }
}

/// Implemented by the library's own observers so that a group can gate them
/// on its owner's life (see ``OwnerGate``).
protocol OwnerGated: AnyObject {
    var ownerGate: OwnerGate { get }
}
