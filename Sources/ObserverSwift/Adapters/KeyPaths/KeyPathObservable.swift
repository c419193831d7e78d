import Dispatch
import Foundation

/// Key-path observation for classes with ``ObservableProperty`` properties
/// (KVO's `observe` does not exist on Linux).
///
/// ```swift
/// final class Player: KeyPathObservable {
///     @ObservableProperty var score = 0
/// }
/// let player = Player()
/// let observer = player.observe(\.$score) { old, new in print(old, "→", new) }
/// player.score = 10               // prints "0 → 10"
/// ```
///
/// The key path names the property's projected value (`\.$score`), so a
/// property that is not an `@ObservableProperty` does not compile. The
/// protocol has no requirements: adopting it adds `observe`.
public protocol KeyPathObservable: AnyObject {}

extension KeyPathObservable {
    /// Observes the ``ObservableProperty`` whose projected value `keyPath`
    /// names: the handler receives the old and the new value of every write.
    ///
    /// - Parameters:
    ///   - keyPath: `\.$property` of an `@ObservableProperty` of this class.
    ///   - activate: start observing at once (default true, like KVO's
    ///     `observe`); pass false to start later with `activate()`.
    ///   - handler: receives the old and the new value of each write, on the
    ///     writing thread, synchronously inside the write (so it is
    ///     `@Sendable`: writes may come from several threads).
    /// - Returns: the observer; keep it (or `add(to:)` an owner): releasing it
    ///   ends the observation.
    public func observe<Value>(
        _ keyPath: KeyPath<Self, PropertyChanges<Value>>, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        self[keyPath: keyPath].makeObserver(delivery: .synchronous, activate: activate, handler)
    }

    /// ``observe(_:activate:_:)-(KeyPath<Self,PropertyChanges<Value>>,_,_)``
    /// with `handler` run where `delivery` says. The values cross to that
    /// place, so they must be `Sendable`.
    public func observe<Value: Sendable>(
        _ keyPath: KeyPath<Self, PropertyChanges<Value>>, delivery: Delivery, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        self[keyPath: keyPath].makeObserver(delivery: delivery, activate: activate, handler)
    }
}
