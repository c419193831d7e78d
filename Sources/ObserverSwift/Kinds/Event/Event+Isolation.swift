import Dispatch

/// Subscriptions whose handlers run somewhere other than the sending thread:
/// a dispatch queue, the main actor, or any actor. The value crosses to that
/// place, so it must be `Sendable`.
extension Event where Value: Sendable {
    // MARK: On a dispatch queue or the main actor

    /// Subscribes a closure that runs where `delivery` says: on the sending
    /// thread or asynchronously on a queue (in the order the sends
    /// enqueued). A closure runs on the main actor by being marked
    /// `@MainActor` (`subscribe { @MainActor value in ... }`), not by a
    /// delivery: ``HandlerDelivery`` has no `.mainActor`.
    ///
    /// ```swift
    /// let saves = Event<Int>()
    /// let log = DispatchQueue(label: "log")
    /// let token = saves.subscribe(delivery: .queue(log)) { count in print("saved", count) }
    /// saves.send(1)   // returns at once; "saved 1" prints on `log`
    /// token.cancel()
    /// ```
    ///
    /// - Parameters:
    ///   - delivery: where the handler runs. A concurrent queue may run
    ///     several deliveries at once, which is why the handler is
    ///     `@Sendable`. For a handler that touches main-actor state, mark the
    ///     closure instead: `subscribe { @MainActor value in ... }` is the one
    ///     way, checked by the compiler.
    ///   - limit: deliver at most this many values, then cancel; `nil` (the
    ///     default) means no limit, zero or less subscribes nothing.
    ///   - handler: called with each value sent.
    /// - Returns: a ``Subscription`` that must be kept (or stored in a bag,
    ///   or discarded explicitly).
    @inlinable
    public func subscribe(
        delivery: HandlerDelivery, limit: Int? = nil, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeClosure(delivery: delivery.delivery, limit: limit, handler)
    }

    /// Subscribes `handler` on behalf of a weakly held `target`, running
    /// where `delivery` says (see
    /// ``Event/subscribe(_:limit:handler:)-(_,_,(Target,Value)->Void)``). The
    /// target is loaded again where the handler runs: it may be gone by then.
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, delivery: HandlerDelivery, limit: Int? = nil,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, delivery: delivery.delivery, limit: limit, handler)
    }

    /// Subscribes a main-actor handler. It runs synchronously when the send
    /// happens on the main actor and is enqueued on the main queue otherwise
    /// (behind any main-actor delivery still queued: see ``Delivery/mainActor``).
    ///
    /// Selected by marking the closure: `event.subscribe { @MainActor value in ... }`.
    /// An unmarked closure selects ``subscribe(limit:_:)-(_,(Value)->Void)``,
    /// whose handler runs on the sending thread, so touching main-actor state
    /// from it does not compile.
    public func subscribe(
        limit: Int? = nil, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription {
        subscribeClosure(delivery: .mainActor, limit: limit) { value in
            MainActor.assumeIsolated { handler(value) }
        }
    }

    // MARK: On an actor

    /// Subscribes a handler that runs isolated to `actor`, in the order the
    /// values were sent (per sending thread). The actor is held weakly: the
    /// subscription ends when it is deallocated.
    ///
    /// This is how actor-isolated code observes: the handler receives the
    /// actor `isolated`, so it may read and mutate the actor's state.
    ///
    /// ```swift
    /// actor Tally {
    ///     var total = 0
    ///     func start(_ event: Event<Int>) {
    ///         event.subscribe(isolatedTo: self) { tally, value in tally.total += value }
    ///     }
    /// }
    /// ```
    ///
    /// Senders never wait for the actor. Values it has not taken yet wait in
    /// the subscription's mailbox, which the actor drains a few at a time
    /// between its other work; `bufferingPolicy` bounds that backlog
    /// (``ObserverCore/statistics`` counts what waits and what was dropped).
    ///
    /// - Parameters:
    ///   - actor: where the handler runs; held weakly.
    ///   - limit: call the handler at most this many times, then cancel.
    ///     Values the buffering policy drops are not counted. With
    ///     `.unbounded` this is exactly the first `limit` values sent,
    ///     whenever the actor runs them (the subscription ends with the
    ///     send of the last one); with `.bufferingOldest(n)`, the first
    ///     `limit` values the buffer kept; with `.bufferingNewest(n)`, the
    ///     newest values at each drain until `limit` calls were made (so
    ///     `limit: 10` with `.bufferingNewest(3)` still delivers ten
    ///     values). `nil` (the default) means no limit; zero or less
    ///     subscribes nothing.
    ///   - bufferingPolicy: how many values may wait for the actor:
    ///     `.unbounded` (the default) keeps all of them;
    ///     `.bufferingNewest(n)` / `.bufferingOldest(n)` keep `n` and drop
    ///     the oldest / the newest beyond them, releasing what they drop
    ///     when they drop it.
    ///   - handler: receives the isolated actor and each value.
    /// - Returns: a token; the subscription also ends with the actor.
    @discardableResult
    public func subscribe<A: Actor>(
        isolatedTo actor: A, limit: Int? = nil, bufferingPolicy: ObserverBufferingPolicy = .unbounded,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> Subscription {
        subscribeActor(actor, limit: limit, bufferingPolicy: bufferingPolicy, handler: handler).subscription
    }

    /// The actor subscription and its mailbox (nil for an inactive token),
    /// so a replaying subscription can put the current value first.
    func subscribeActor<A: Actor>(
        _ actor: A, limit: Int?, bufferingPolicy: ObserverBufferingPolicy,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> (subscription: Subscription, mailbox: ActorMailbox<A, Value>?) {
        observers.subscribeActor(actor, limit: limit, bufferingPolicy: bufferingPolicy, handler: handler)
    }
}
