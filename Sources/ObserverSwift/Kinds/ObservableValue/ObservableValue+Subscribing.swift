import Dispatch
import ObserverEngine

/// Subscribing to a value: every form of ``ObserverSource`` (closure, weak
/// target or actor; where the handler's code is isolated, on a queue or on
/// an actor; `limit:`). Subscribe through ``replaying`` to receive the
/// current value first, with no gap and no repeat even while other threads
/// set the value.
///
/// ```swift
/// let count = ObservableValue(0)
/// let token = count.replaying.subscribe { print("count is", $0) }  // prints "count is 0"
/// count.value += 1            // prints "count is 1"
/// token.cancel()
/// ```
extension ObservableValue: ObserverSource {
    // MARK: The engine's entry points (ObserverSource)

    @inlinable
    public func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Value?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        observers.subscribeClosure(delivery: delivery, limit: limit, replaying: current, handler)
    }

    @inlinable
    public func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        observers.subscribeTarget(target, delivery: delivery, limit: limit, replaying: current, handler)
    }

    /// The value as a source whose subscriptions first deliver the current
    /// value, then every value set afterwards: no set is delivered between
    /// the two, and the current value counts as the first of `limit`. Every
    /// ``ObserverSource`` form works on it.
    ///
    /// ```swift
    /// let volume = ObservableValue(3)
    /// let shown = volume.replaying.subscribe(limit: 2) { level in print("volume", level) }
    /// volume.value = 4            // prints "volume 3" first (at subscribe), then "volume 4"
    /// shown.cancel()
    /// ```
    public var replaying: ObservableValueReplay<Value> { ObservableValueReplay(value: self) }

    /// Removes every subscription made for `target`; returns how many. A
    /// target never subscribed is a no-op (returns 0).
    @discardableResult
    public func unsubscribe(_ target: AnyObject) -> Int {
        observers.unsubscribe(target)
    }

    /// Removes every subscription; returns how many were stored.
    @discardableResult
    public func unsubscribeAll() -> Int {
        observers.unsubscribeAll()
    }

    /// Removes the subscriptions made with a target (`withTargets: true`) or
    /// those made with a closure alone (`false`); returns how many. For
    /// `ObserverSwiftCompat`'s `unbindAll()` and `removeObserver()`.
    @discardableResult
    package func unsubscribeAll(withTargets: Bool) -> Int {
        observers.removeAll { $0.hasTarget == withTargets }
    }

    /// Subscriptions that can still be called: those with a live target and
    /// closure subscriptions not cancelled.
    public var subscribersCount: Int { observers.subscribersCount }

    /// How many times the subscribers were notified (sets skipped as
    /// duplicates are not counted; replays are not counted). Exact once
    /// the setting threads are done; read while they set, a value between
    /// the count when the read began and the count when it ended.
    public var triggersCount: Int { observers.triggers.value }

    /// Sets ``triggersCount`` back to zero.
    public func resetTriggersCount() {
        observers.triggers.reset()
    }
}

/// An ``ObservableValue`` whose subscriptions first deliver its current
/// value (made by ``ObservableValue/replaying``). The handler runs as the
/// form says for a sent value; the replay is delivered the same way, before
/// any later set.
public struct ObservableValueReplay<Value> {
    let value: ObservableValue<Value>
}

extension ObservableValueReplay: ObserverSource {
    public func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Value?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        value._subscribe(delivery: delivery, limit: limit, replaying: current, handler)
    }

    public func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        value._subscribe(target, delivery: delivery, limit: limit, replaying: current, handler)
    }

    /// Holds the value's turn (no set delivers meanwhile) and passes the
    /// current value.
    public func _withCurrentValue<Result>(_ body: (Value?) -> Result) -> Result {
        value.withTurn { current in body(current) }
    }
}

extension ObservableValueReplay: Sendable where Value: Sendable {}
