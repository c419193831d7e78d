import Dispatch

/// Subscriptions that run somewhere other than the setting thread: a
/// dispatch queue, the main actor, or any actor. The value crosses to that
/// place, so it must be `Sendable`. These subscriptions do not hold the
/// value's turn.
extension ObservableValue where Value: Sendable {
    /// ``subscribe(replay:_:)-(_,(Value)->Void)`` with the handler where
    /// `delivery` says. A replayed current value is delivered there first.
    public func subscribe(
        delivery: HandlerDelivery, replay: Bool = false, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        let engineDelivery = delivery.delivery
        guard replay else {
            return observers.subscribeClosure(delivery: engineDelivery, limit: nil, handler)
        }
        return subscribeReplaying(delivery: engineDelivery) {
            observers.subscribeClosure(delivery: engineDelivery, limit: nil, handler)
        } replay: {
            handler($0)
        }
    }

    /// ``subscribe(_:replay:handler:)-(_,_,(Target,Value)->Void)`` with the
    /// handler where `delivery` says. A replayed current value is delivered
    /// there first; the target is loaded again where the handler runs.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, delivery: HandlerDelivery, replay: Bool = false,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        let engineDelivery = delivery.delivery
        guard replay else {
            return observers.subscribeTarget(target, delivery: engineDelivery, limit: nil, handler)
        }
        return subscribeReplaying(delivery: engineDelivery) {
            observers.subscribeTarget(target, delivery: engineDelivery, limit: nil, handler)
        } replay: { [weak target] current in
            if let target { handler(target, current) }
        }
    }

    /// A main-actor handler, selected by marking the closure:
    /// `value.subscribe { @MainActor value in ... }`. It runs synchronously
    /// when the value is set on the main actor, and is enqueued on the main
    /// queue otherwise (behind any main-actor delivery still queued, so it
    /// sees the sets in set order).
    public func subscribe(
        replay: Bool = false, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription {
        func subscribe() -> Subscription {
            observers.subscribeClosure(delivery: .mainActor, limit: nil) { value in
                MainActor.assumeIsolated { handler(value) }
            }
        }
        guard replay else { return subscribe() }
        return subscribeReplaying(delivery: .mainActor, subscribe) { current in
            MainActor.assumeIsolated { handler(current) }
        }
    }

    /// A main-actor handler on behalf of a weakly held `target`, selected by
    /// marking the closure: `title.subscribe(self) { @MainActor me, title in ... }`.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, replay: Bool = false,
        handler: @escaping @MainActor (Target, Value) -> Void
    ) -> Subscription {
        func subscribe() -> Subscription {
            observers.subscribeTarget(target, delivery: .mainActor, limit: nil) { target, value in
                MainActor.assumeIsolated { handler(target, value) }
            }
        }
        guard replay else { return subscribe() }
        return subscribeReplaying(delivery: .mainActor, subscribe) { [weak target] current in
            guard let target else { return }
            MainActor.assumeIsolated { handler(target, current) }
        }
    }

    /// Calls `handler` isolated to `actor` with every new value, in the order
    /// the values were set. The actor is held weakly: the subscription ends
    /// when it is deallocated.
    ///
    /// ```swift
    /// actor Recorder {
    ///     var seen: [Int] = []
    ///     func start(_ count: ObservableValue<Int>) {
    ///         count.subscribe(isolatedTo: self, replay: true) { recorder, value in recorder.seen.append(value) }
    ///     }
    /// }
    /// ```
    ///
    /// Sets never wait for the actor: the backlog behaves as in
    /// ``Event/subscribe(isolatedTo:limit:bufferingPolicy:handler:)``
    /// (`.bufferingNewest(1)` keeps only the latest value).
    ///
    /// - Parameters:
    ///   - actor: where the handler runs; held weakly.
    ///   - replay: when true, the current value is delivered first.
    ///   - bufferingPolicy: how many values may wait for the actor.
    ///   - handler: receives the isolated actor and each value.
    @discardableResult
    public func subscribe<A: Actor>(
        isolatedTo actor: A, replay: Bool = false, bufferingPolicy: ObserverBufferingPolicy = .unbounded,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> Subscription {
        guard replay else {
            return observers.subscribeActor(
                actor, limit: nil, bufferingPolicy: bufferingPolicy, handler: handler
            ).subscription
        }
        return withTurn { current in
            let (subscription, mailbox) = observers.subscribeActor(
                actor, limit: nil, bufferingPolicy: bufferingPolicy, handler: handler)
            // Holding the turn: no set can deliver between these two lines,
            // so the current value is first in the mailbox.
            mailbox?.receive(current)
            return subscription
        }
    }
}
