import Dispatch
import Foundation
import ObserverEngine

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

    /// `observe(_:activate:_:)` with a `@Sendable` handler run where
    /// `delivery` says: on the writing thread or on
    /// a queue. The values cross to that place, so they must be `Sendable`.
    /// A handler that touches main-actor state is marked instead:
    /// `observe(\.$score) { @MainActor old, new in ... }` is the one way,
    /// checked by the compiler (`delivery: .mainActor` does not compile).
    public func observe<Value: Sendable>(
        _ keyPath: KeyPath<Self, PropertyChanges<Value>>, delivery: Delivery, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        self[keyPath: keyPath].makeObserver(delivery: delivery, activate: activate, handler)
    }

    /// Observes with a main-actor handler: it runs synchronously inside a
    /// write made on the main actor, and is enqueued on the main queue for a
    /// write made elsewhere (behind any main-actor delivery still queued: see
    /// the main-actor delivery of ``ObserverSource/subscribe(limit:fileID:line:_:)``).
    ///
    /// Selected by marking the closure:
    /// `observe(\.$score) { @MainActor old, new in ... }`. An unmarked
    /// closure selects the `@Sendable` `observe(_:activate:_:)`, whose
    /// handler runs on the writing thread, so touching main-actor
    /// state from it does not compile.
    public func observe<Value: Sendable>(
        _ keyPath: KeyPath<Self, PropertyChanges<Value>>, activate: Bool = true,
        _ handler: @escaping @MainActor (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        self[keyPath: keyPath].makeObserver(delivery: .onMainActor, activate: activate) { old, new in
            MainActor.assumeIsolated { handler(old, new) }
        }
    }
}
