import ObserverEngine

/// Gives any class a group of observers that it can switch on and off
/// together, with no stored property (HSObserver's `HSHasObservers`).
///
/// <!-- snippet: fragment of WaveNotifications -->
/// ```swift
/// final class ScreenController: HasObservers {
///     init() {
///         NotificationObserver(forName: .wave, queue: nil) { _ in print("wave") }
///             .add(to: self)
///     }
///     func willAppear() { activateObservers() }
///     func didDisappear() { deactivateObservers() }
/// }
/// ```
///
/// The group lives in a side table (`ObserverOwners`) and goes away
/// with its owner: once the owner is deallocated none of its observers calls
/// a handler again, and the table entry is removed (deactivating them) on a
/// later table access or periodic sweep. Handlers that capture the owner
/// strongly keep it alive (as with HSObserver): capture `[weak self]`.
/// Every method may be called from any thread.
public protocol HasObservers: AnyObject {}

extension HasObservers {
    /// Adds `observer` to this object's group (what `observer.add(to: self)`
    /// calls), unchanged in state.
    func addToGroup(_ observer: any Observes) {
        (observer as? OwnerGated)?.ownerGate.bind(to: self)
        ObserverOwnerTable.shared.group(for: self, create: true)?.add(observer)
    }

    /// Activates every observer in the group.
    public func activateObservers() {
        ObserverOwnerTable.shared.group(for: self, create: false)?.activateAll()
    }

    /// Deactivates every observer in the group.
    public func deactivateObservers() {
        ObserverOwnerTable.shared.group(for: self, create: false)?.deactivateAll()
    }

    /// The observers in this object's group, in no particular order.
    public var observers: [any Observes] {
        var result: [any Observes] = []
        ObserverOwnerTable.shared.group(for: self, create: false)?.forEachObserver { result.append($0) }
        return result
    }
}
