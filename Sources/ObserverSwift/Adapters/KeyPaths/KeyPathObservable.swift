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
/// let observer = player.observe(\.score) { old, new in print(old, "→", new) }
/// player.score = 10               // prints "0 → 10"
/// ```
///
/// The protocol has no requirements: adopting it adds `observe`.
public protocol KeyPathObservable: AnyObject {}

extension KeyPathObservable {
    /// Observes the ``ObservableProperty`` named by `keyPath`: the handler
    /// receives the old and the new value of every write.
    ///
    /// `keyPath` must name an `@ObservableProperty` of this object (plain or
    /// computed properties cannot be observed). Otherwise the returned
    /// observer is unresolved (``KeyPathObserver/isResolved`` is false; it
    /// observes nothing) and a message naming the key path is written to
    /// standard error. `observe(\.$property)` checks this at compile time.
    ///
    /// - Parameters:
    ///   - keyPath: the `@ObservableProperty` to observe.
    ///   - activate: start observing at once (default true, like KVO's
    ///     `observe`); pass false to start later with `activate()`.
    ///   - handler: receives the old and the new value of each write, on the
    ///     writing thread, synchronously inside the write (so it is
    ///     `@Sendable`: writes may come from several threads).
    /// - Returns: the observer; keep it (or `add(to:)` an owner): releasing it
    ///   ends the observation.
    // Disfavored so that `observe(\.$property)` picks the projected overload
    // below instead of observing the projection itself.
    @_disfavoredOverload
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        observe(keyPath, delivery: .synchronous, activate: activate, handler)
    }

    /// Observes the property whose projected value `keyPath` names:
    /// `observe(\.$title) { old, new in }` — resolved at compile time.
    public func observe<Value>(
        _ keyPath: KeyPath<Self, PropertyChanges<Value>>, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        self[keyPath: keyPath].makeObserver(keyPath: keyPath, delivery: .synchronous, activate: activate, handler)
    }

    /// `observe(_:activate:_:)` with `handler` run on `queue`
    /// (nil: the writing thread). The values cross to the queue, so they must be `Sendable`.
    @_disfavoredOverload
    public func observe<Value: Sendable>(
        _ keyPath: KeyPath<Self, Value>, queue: DispatchQueue?, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        observe(keyPath, delivery: Delivery(queue: queue), activate: activate, handler)
    }

    /// `observe(_:activate:_:)` of a projected property with `handler` run on `queue`.
    public func observe<Value: Sendable>(
        _ keyPath: KeyPath<Self, PropertyChanges<Value>>, queue: DispatchQueue?, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        self[keyPath: keyPath].makeObserver(
            keyPath: keyPath, delivery: Delivery(queue: queue), activate: activate, handler)
    }

    private func observe<Value>(
        _ keyPath: KeyPath<Self, Value>, delivery: Delivery, activate: Bool,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        let changes = PropertyAccessProbe.changes(for: keyPath) { _ = self[keyPath: keyPath] }
        guard let changes else {
            let message =
                "ObserverSwift: observe(\(keyPath)): not an @ObservableProperty of \(Self.self); nothing is observed\n"
            FileHandle.standardError.write(Data(message.utf8))
            return KeyPathObserver.unresolved(keyPath)
        }
        return changes.makeObserver(keyPath: keyPath, delivery: delivery, activate: activate, handler)
    }
}
