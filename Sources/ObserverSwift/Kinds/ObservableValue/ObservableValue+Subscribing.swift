import Dispatch

/// Subscribing to a value: the same verbs as ``Event``, and `replay:`.
extension ObservableValue {
    /// Calls `handler` on the setting thread with the new value after every
    /// set; the returned token cancels it.
    ///
    /// ```swift
    /// let count = ObservableValue(0)
    /// let token = count.subscribe { print("count is", $0) }
    /// count.value += 1            // prints "count is 1"
    /// token.cancel()
    /// ```
    ///
    /// - Parameters:
    ///   - replay: when true, the handler also gets the current value now,
    ///     and then every later value, with no gap and no repeat even while
    ///     other threads set the value.
    ///   - handler: receives each new value.
    /// - Returns: a token that cancels this subscription. Nothing else ends
    ///   it, so the result may not be ignored (keep it, store it in a bag, or
    ///   discard it explicitly with `_ =`).
    public func subscribe(
        replay: Bool = false, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        guard replay else {
            return observers.subscribeClosure(delivery: .synchronous, limit: nil, handler)
        }
        return subscribeReplaying(delivery: .synchronous) {
            observers.subscribeClosure(delivery: .synchronous, limit: nil, handler)
        } replay: {
            handler($0)
        }
    }

    /// Calls `handler` on the setting thread with the live `target` and the
    /// new value after every set. `target` is held weakly (no `[weak self]`
    /// needed); once it is deallocated the subscription stops and its slot is
    /// reclaimed. Sets may come from several threads, so the handler is
    /// `@Sendable` and the target `Sendable`.
    ///
    /// ```swift
    /// final class TitleLabel: @unchecked Sendable { var text = "" }
    /// let title = ObservableValue("Draft")
    /// let label = TitleLabel()
    /// title.subscribe(label, replay: true) { label, title in label.text = title }
    /// title.value = "Final"   // label.text == "Final"
    /// ```
    ///
    /// - Parameters:
    ///   - target: the object passed to `handler`, held weakly.
    ///   - replay: as in ``subscribe(replay:_:)-(_,(Value)->Void)``.
    ///   - handler: receives the live target and the new value.
    /// - Returns: a token that cancels this subscription alone (may be
    ///   ignored: the subscription also ends with its target).
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, replay: Bool = false,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        guard replay else {
            return observers.subscribeTarget(target, delivery: .synchronous, limit: nil, handler)
        }
        return subscribeReplaying(delivery: .synchronous) {
            observers.subscribeTarget(target, delivery: .synchronous, limit: nil, handler)
        } replay: { current in
            handler(target, current)
        }
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
        observers.withExistingSlots { $0.removeAll { $0.hasTarget == withTargets } } ?? 0
    }

    /// Cancels the subscription `token` names if it is one of this value's;
    /// false (and nothing done) for a token already cancelled or issued by
    /// another source. For `ObserverSwiftCompat`'s `removeObserver(_:)`.
    @discardableResult
    package func unsubscribe(token: Subscription) -> Bool {
        // Handles are unique in the process: a foreign one matches no slot.
        observers.withExistingSlots { $0.remove(token.handle) } ?? false
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

    /// Subscribes with `subscribe` and hands the current value to `replay`
    /// where `delivery` says, holding the turn so that no set comes between
    /// the two. A queued replay is dropped if the subscription is cancelled
    /// before it runs.
    func subscribeReplaying(
        delivery: Delivery, _ subscribe: () -> Subscription, replay: @escaping (Value) -> Void
    ) -> Subscription {
        withTurn { current in
            let subscription = subscribe()
            delivery.run(ifSubscribed: { subscription.isActive }) { replay(current) }
            return subscription
        }
    }
}
