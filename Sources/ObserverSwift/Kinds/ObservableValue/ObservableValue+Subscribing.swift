import Dispatch

/// Subscribing to a value: every form of ``ObserverSource`` (closure, weak
/// target or actor; on the setting thread, a queue, the main actor or an
/// actor; `limit:`), and `replay: true`, which delivers the current value
/// first, with no gap and no repeat even while other threads set the value.
///
/// ```swift
/// let count = ObservableValue(0)
/// let token = count.subscribe(replay: true) { print("count is", $0) }  // prints "count is 0"
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

    /// Holds the turn (no set delivers meanwhile) and passes the current
    /// value when `replay` is true. (`ReplayOption` is `Bool`, inferred from
    /// this witness.)
    public func _withCurrentValue<Result>(replay: Bool?, _ body: (Value?) -> Result) -> Result {
        guard replay == true else { return body(nil) }
        return withTurn { current in body(current) }
    }

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

    /// Cancels the subscription `token` names if it is one of this value's;
    /// false (and nothing done) for a token already cancelled or issued by
    /// another source. For `ObserverSwiftCompat`'s `removeObserver(_:)`.
    @discardableResult
    package func unsubscribe(token: Subscription) -> Bool {
        observers.unsubscribe(token: token)
    }

    /// Subscriptions that can still be called: those with a live target and
    /// closure subscriptions not cancelled.
    public var subscribersCount: Int { observers.subscribersCount }

    /// How many times the subscribers were notified (sets skipped as
    /// duplicates are not counted; replays are not counted).
    public var triggersCount: Int { observers.triggers.value }

    /// Sets ``triggersCount`` back to zero.
    public func resetTriggersCount() {
        observers.triggers.reset()
    }
}
