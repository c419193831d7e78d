import Dispatch

/// Keyed subscriptions whose handlers run somewhere other than the sending
/// thread: a dispatch queue, the main actor, or any actor. Keys and values
/// cross to that place, so both must be `Sendable`.
extension KeyedEvent where Key: Sendable, Value: Sendable {
    // MARK: On a dispatch queue

    /// ``subscribe(key:_:)`` with the handler on `queue` (`nil` means the
    /// sending thread). The token must be kept: nothing else ends it.
    public func subscribe(
        key: Key, queue: DispatchQueue?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribe(key: key, queue: queue, limit: nil, handler)
    }

    /// ``subscribe(key:queue:_:)`` for at most `limit` deliveries.
    @discardableResult
    public func subscribe(
        key: Key, queue: DispatchQueue?, limit: Int?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        let delivery = Delivery(queue: queue)
        if case .synchronous = delivery { return subscribe(key: key, limit: limit, handler) }
        return subscribeClosure(CollectionOfOne(key), delivery: delivery, limit: limit) { _, value in
            handler(value)
        }
    }

    /// ``subscribe(keys:_:)`` with the handler on `queue`.
    public func subscribe(
        keys: some Sequence<Key>, queue: DispatchQueue?, _ handler: @escaping @Sendable (Key, Value) -> Void
    ) -> Subscription {
        subscribe(keys: keys, queue: queue, limit: nil, handler)
    }

    /// ``subscribe(keys:queue:_:)`` for at most `limit` deliveries in total.
    @discardableResult
    public func subscribe(
        keys: some Sequence<Key>, queue: DispatchQueue?, limit: Int?,
        _ handler: @escaping @Sendable (Key, Value) -> Void
    ) -> Subscription {
        let delivery = Delivery(queue: queue)
        if case .synchronous = delivery { return subscribe(keys: keys, limit: limit, handler) }
        return subscribeClosure(keys, delivery: delivery, limit: limit, handler)
    }

    /// Subscribes a closure to one key for exactly one delivery, on `queue`.
    @discardableResult
    public func subscribeOnce(
        key: Key, queue: DispatchQueue?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribe(key: key, queue: queue, limit: 1, handler)
    }

    /// ``subscribe(_:key:limit:handler:)`` with the handler on `queue`; the
    /// target is loaded again where the handler runs.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, key: Key, queue: DispatchQueue?, limit: Int? = nil,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, CollectionOfOne(key), delivery: Delivery(queue: queue), limit: limit) {
            target, _, value in handler(target, value)
        }
    }

    /// ``subscribe(_:keys:limit:handler:)`` with the handler on `queue`.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, keys: some Sequence<Key>, queue: DispatchQueue?, limit: Int? = nil,
        handler: @escaping @Sendable (Target, Key, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, keys, delivery: Delivery(queue: queue), limit: limit, handler)
    }

    // MARK: On the main actor

    /// Subscribes a main-actor handler to one key. It runs synchronously when
    /// the send happens on the main actor and is enqueued on the main queue
    /// otherwise (see ``Delivery/mainActor``). The token must be kept:
    /// nothing else ends it.
    public func subscribeOnMainActor(
        key: Key, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription {
        subscribeOnMainActor(key: key, limit: nil, handler)
    }

    /// ``subscribeOnMainActor(key:_:)`` for at most `limit` deliveries.
    @discardableResult
    public func subscribeOnMainActor(
        key: Key, limit: Int?, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription {
        subscribeClosure(CollectionOfOne(key), delivery: .mainActor, limit: limit) { _, value in
            MainActor.assumeIsolated { handler(value) }
        }
    }

    /// ``subscribeOnMainActor(key:_:)`` over several keys.
    public func subscribeOnMainActor(
        keys: some Sequence<Key>, _ handler: @escaping @MainActor (Key, Value) -> Void
    ) -> Subscription {
        subscribeOnMainActor(keys: keys, limit: nil, handler)
    }

    /// ``subscribeOnMainActor(keys:_:)`` for at most `limit` deliveries in total.
    @discardableResult
    public func subscribeOnMainActor(
        keys: some Sequence<Key>, limit: Int?, _ handler: @escaping @MainActor (Key, Value) -> Void
    ) -> Subscription {
        subscribeClosure(keys, delivery: .mainActor, limit: limit) { key, value in
            MainActor.assumeIsolated { handler(key, value) }
        }
    }

    /// ``subscribe(_:key:limit:handler:)`` with a main-actor handler.
    @discardableResult
    public func subscribeOnMainActor<Target: AnyObject & Sendable>(
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
