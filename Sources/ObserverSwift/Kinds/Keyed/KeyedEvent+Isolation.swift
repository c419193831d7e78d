import Dispatch

/// Keyed subscriptions whose handlers run somewhere other than the sending
/// thread: a dispatch queue, the main actor, or any actor. Keys and values
/// cross to that place, so both must be `Sendable`.
extension KeyedEvent where Key: Sendable, Value: Sendable {
    // MARK: On a dispatch queue or the main actor

    /// ``subscribe(key:limit:_:)-(_,_,(Value)->Void)`` with the handler
    /// where `delivery` says (see ``Event/subscribe(delivery:limit:_:)``).
    /// The token must be kept: nothing but cancelling or the limit ends it.
    public func subscribe(
        key: Key, delivery: HandlerDelivery, limit: Int? = nil,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        let engineDelivery = delivery.delivery
        if case .synchronous = engineDelivery { return subscribe(key: key, limit: limit, handler) }
        return subscribeClosure(CollectionOfOne(key), delivery: engineDelivery, limit: limit) { _, value in
            handler(value)
        }
    }

    /// ``subscribe(keys:limit:_:)-(_,_,(Key,Value)->Void)`` with the handler
    /// where `delivery` says.
    public func subscribe(
        keys: some Sequence<Key>, delivery: HandlerDelivery, limit: Int? = nil,
        _ handler: @escaping @Sendable (Key, Value) -> Void
    ) -> Subscription {
        let engineDelivery = delivery.delivery
        if case .synchronous = engineDelivery { return subscribe(keys: keys, limit: limit, handler) }
        return subscribeClosure(keys, delivery: engineDelivery, limit: limit, handler)
    }

    /// ``subscribe(_:key:limit:handler:)-(_,_,_,(Target,Value)->Void)`` with
    /// the handler where `delivery` says; the target is loaded again where
    /// the handler runs.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, key: Key, delivery: HandlerDelivery, limit: Int? = nil,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, CollectionOfOne(key), delivery: delivery.delivery, limit: limit) {
            target, _, value in handler(target, value)
        }
    }

    /// ``subscribe(_:keys:limit:handler:)-(_,_,_,(Target,Key,Value)->Void)``
    /// with the handler where `delivery` says.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, keys: some Sequence<Key>, delivery: HandlerDelivery, limit: Int? = nil,
        handler: @escaping @Sendable (Target, Key, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, keys, delivery: delivery.delivery, limit: limit, handler)
    }

    /// Subscribes a main-actor handler to one key, selected by marking the
    /// closure: `prices.subscribe(key: "AAPL") { @MainActor price in ... }`.
    /// It runs synchronously when the send happens on the main actor and is
    /// enqueued on the main queue otherwise (see ``Delivery/mainActor``).
    /// The token must be kept: nothing but cancelling or the limit ends it.
    public func subscribe(
        key: Key, limit: Int? = nil, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription {
        subscribeClosure(CollectionOfOne(key), delivery: .mainActor, limit: limit) { _, value in
            MainActor.assumeIsolated { handler(value) }
        }
    }

    /// The main-actor handler over several keys:
    /// `subscribe(keys: ["a", "b"]) { @MainActor key, value in ... }`.
    public func subscribe(
        keys: some Sequence<Key>, limit: Int? = nil, _ handler: @escaping @MainActor (Key, Value) -> Void
    ) -> Subscription {
        subscribeClosure(keys, delivery: .mainActor, limit: limit) { key, value in
            MainActor.assumeIsolated { handler(key, value) }
        }
    }

    /// A main-actor handler on behalf of a weakly held `target`, selected by
    /// marking the closure: `subscribe(self, key: "AAPL") { @MainActor me, price in ... }`.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, key: Key, limit: Int? = nil,
        handler: @escaping @MainActor (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, CollectionOfOne(key), delivery: .mainActor, limit: limit) { target, _, value in
            MainActor.assumeIsolated { handler(target, value) }
        }
    }

    // MARK: On an actor

    /// Subscribes a handler to one key that runs isolated to `actor`, in the
    /// order the values were sent (per sending thread). The actor is held
    /// weakly: the subscription ends when it is deallocated.
    ///
    /// ```swift
    /// actor Portfolio {
    ///     var last: Double = 0
    ///     func watch(_ prices: KeyedEvent<String, Double>) {
    ///         prices.subscribe(isolatedTo: self, key: "AAPL") { portfolio, price in portfolio.last = price }
    ///     }
    /// }
    /// ```
    ///
    /// The limit and the backlog behave as in
    /// ``Event/subscribe(isolatedTo:limit:bufferingPolicy:handler:)``.
    @discardableResult
    public func subscribe<A: Actor>(
        isolatedTo actor: A, key: Key, limit: Int? = nil, bufferingPolicy: ObserverBufferingPolicy = .unbounded,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> Subscription {
        subscribe(isolatedTo: actor, keys: CollectionOfOne(key), limit: limit, bufferingPolicy: bufferingPolicy) {
            actor, _, value in
            handler(actor, value)
        }
    }

    /// ``subscribe(isolatedTo:key:limit:bufferingPolicy:handler:)`` over
    /// several keys; the handler also receives the key.
    @discardableResult
    public func subscribe<A: Actor>(
        isolatedTo actor: A, keys: some Sequence<Key>, limit: Int? = nil,
        bufferingPolicy: ObserverBufferingPolicy = .unbounded,
        handler: @escaping @Sendable (isolated A, Key, Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        let mailbox = ActorMailbox<A, (Key, Value)>(
            actor: actor, limit: limit ?? Int.max, policy: bufferingPolicy
        ) { actor, item in
            handler(actor, item.0, item.1)
        }
        let subscription = subscribeTarget(actor, keys, delivery: .synchronous, limit: nil) { _, key, value in
            mailbox.receive((key, value))
        }
        mailbox.attach(subscription)
        return subscription
    }
}
