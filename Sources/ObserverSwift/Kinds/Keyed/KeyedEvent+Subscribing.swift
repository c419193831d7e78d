import Dispatch
import ObserverEngine

/// Subscribing to one key: every ``ObserverSource`` form with `key:` added.
/// Each is the form of that name on the key's own source (`KeyScope`), so
/// `limit:`, delivery and the weak target behave exactly as on an ``Event``.
/// For several keys with one token, see ``forKeys(_:)``.
extension KeyedEvent {
    /// Subscribes a closure to one key; the returned token cancels it. The
    /// handler runs where its code is isolated, as in
    /// ``ObserverSource/subscribe(limit:fileID:line:_:)``: written in nonisolated code,
    /// on the sending thread before `send` returns; written in `@MainActor`
    /// code, on the main actor; in an actor's method that uses `self`, on
    /// that actor.
    ///
    /// ```swift
    /// let prices = KeyedEvent<String, Double>()
    /// let apple = prices.subscribe(key: "AAPL") { price in print("AAPL", price) }
    /// prices.send(190.5, forKey: "AAPL")   // prints "AAPL 190.5"
    /// prices.send(412.0, forKey: "MSFT")   // no subscriber for MSFT
    /// apple.cancel()
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key whose sends the handler receives.
    ///   - limit: deliver at most this many values, then cancel (exact under
    ///     concurrent sends). `nil` (the default) means no limit; zero or
    ///     less subscribes nothing and returns an inactive token.
    ///   - fileID: the file of the call, which ``ObserverCore/liveSubscriptions``
    ///     lists while tracking is on (leave the default).
    ///   - line: the line of the call (leave the default).
    ///   - handler: receives each value sent for `key`; `@Sendable`, because
    ///     concurrent senders call it on their threads at once.
    /// - Returns: a ``Subscription``. Nothing but cancelling or its limit
    ///   ends this subscription, so the result may not be ignored: keep it,
    ///   `store(in:)` a ``SubscriptionBag`` or a `Set<Subscription>`, or
    ///   discard it explicitly with `_ =`.
    @inlinable
    public func subscribe(
        key: Key, limit: Int? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        @_inheritActorContext _ handler: @escaping @isolated(any) @Sendable (Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribeWhereIsolated(limit: limit, fileID: fileID, line: line, handler)
    }

    /// Subscribes `handler` to one key on behalf of `target`, which is held
    /// weakly: no `[weak self]` needed. The handler receives the live target
    /// (so the target must be `Sendable`) and runs where its code is
    /// isolated; once the target is deallocated the subscription stops and
    /// its slots (and keys left empty) are freed.
    ///
    /// <!-- snippet: fragment of SendableTarget -->
    /// ```swift
    /// prices.subscribe(self, key: "AAPL") { me, price in me.show(price) }
    /// ```
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, key: Key, limit: Int? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Target, Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribeWhereIsolated(target, limit: limit, fileID: fileID, line: line, handler)
    }
}

/// Keyed subscriptions whose handlers run on a queue or an actor. Keys and
/// values cross to that place, so both must be `Sendable`.
extension KeyedEvent where Key: Sendable, Value: Sendable {
    /// ``subscribe(key:limit:fileID:line:_:)`` with the handler where `delivery` says
    /// (see ``ObserverSource/subscribe(delivery:limit:fileID:line:_:)``): a plain
    /// `@Sendable` handler, on the sending thread or a queue.
    /// The token must be kept: nothing but cancelling or the limit ends it.
    public func subscribe(
        key: Key, delivery: Delivery, limit: Int? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribe(delivery: delivery, limit: limit, fileID: fileID, line: line, handler)
    }

    /// The weak-target form with the handler where `delivery` says; the
    /// target is loaded again where the handler runs.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, key: Key, delivery: Delivery, limit: Int? = nil,
        fileID: StaticString = #fileID, line: UInt = #line, handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribe(
            target, delivery: delivery, limit: limit, fileID: fileID, line: line, handler: handler)
    }

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
    /// ``ObserverSource/subscribe(isolatedTo:limit:bufferingPolicy:fileID:line:handler:)``.
    @discardableResult
    public func subscribe<A: Actor>(
        isolatedTo actor: A, key: Key, limit: Int? = nil, bufferingPolicy: ObserverBufferingPolicy = .unbounded,
        fileID: StaticString = #fileID, line: UInt = #line, handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribe(
            isolatedTo: actor, limit: limit, bufferingPolicy: bufferingPolicy, fileID: fileID, line: line,
            handler: handler)
    }
}
