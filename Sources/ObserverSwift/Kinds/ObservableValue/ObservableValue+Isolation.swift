import Dispatch

/// Observers that run somewhere other than the setting thread: a dispatch
/// queue, the main actor, or any actor. The value crosses to that place, so
/// it must be `Sendable`. These observers do not hold the value's turn.
extension ObservableValue where Value: Sendable {
    /// ``bind(_:replay:handler:)-(_,_,(Target,Value)->Void)`` with the handler on `queue` (`nil` means
    /// the setting thread). A replayed current value is enqueued first.
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, replay: Bool = false,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribe(target, queue: queue, handler: handler)
        }
        return subscribeReplaying(delivery: Delivery(queue: queue)) {
            changes.subscribe(target, queue: queue, handler: handler)
        } replay: { [weak target] current in
            if let target { handler(target, current) }
        }
    }

    /// SwiftEvents 2's form with a queue: `target` only bounds the binding's
    /// life; the handler receives the value alone.
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, replay: Bool = false,
        handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        bind(target, queue: queue, replay: replay) { _, value in handler(value) }
    }

    /// ``bind(_:replay:handler:)-(_,_,(Target,Value)->Void)`` with a main-actor handler: it runs
    /// synchronously when the value is set on the main actor, and is
    /// enqueued on the main queue otherwise (behind any main-actor delivery
    /// still queued, so it sees the sets in set order).
    @discardableResult
    public func bindOnMainActor<Target: AnyObject & Sendable>(
        _ target: Target, replay: Bool = false,
        handler: @escaping @MainActor (Target, Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribeOnMainActor(target, handler: handler)
        }
        return subscribeReplaying(delivery: .mainActor) {
            changes.subscribeOnMainActor(target, handler: handler)
        } replay: { [weak target] current in
            guard let target else { return }
            MainActor.assumeIsolated { handler(target, current) }
        }
    }

    /// Calls `handler` isolated to `actor` with every new value, in the order
    /// the values were set. The actor is held weakly: the binding ends when
    /// it is deallocated.
    ///
    /// ```swift
    /// actor Recorder {
    ///     var seen: [Int] = []
    ///     func start(_ count: ObservableValue<Int>) {
    ///         count.bind(isolatedTo: self, replay: true) { recorder, value in recorder.seen.append(value) }
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
    public func bind<A: Actor>(
        isolatedTo actor: A, replay: Bool = false, bufferingPolicy: ObserverBufferingPolicy = .unbounded,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribe(isolatedTo: actor, bufferingPolicy: bufferingPolicy, handler: handler)
        }
        return withTurn { current in
            let (subscription, mailbox) = changes.subscribeActor(
                actor, limit: nil, bufferingPolicy: bufferingPolicy, handler: handler)
            // Holding the turn: no set can deliver between these two lines,
            // so the current value is first in the mailbox.
            mailbox?.enqueue(current)
            return subscription
        }
    }

    /// ``addObserver(replay:_:)`` with the handler on `queue` (`nil` means the
    /// setting thread).
    public func addObserver(
        queue: DispatchQueue?, replay: Bool = false, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribe(queue: queue, handler)
        }
        return subscribeReplaying(delivery: Delivery(queue: queue)) {
            changes.subscribe(queue: queue, handler)
        } replay: {
            handler($0)
        }
    }

    /// ``addObserver(replay:_:)`` with a main-actor handler.
    public func addObserverOnMainActor(
        replay: Bool = false, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribeOnMainActor(handler)
        }
        return subscribeReplaying(delivery: .mainActor) {
            changes.subscribeOnMainActor(handler)
        } replay: { current in
            MainActor.assumeIsolated { handler(current) }
        }
    }
}
