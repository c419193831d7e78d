import Dispatch

/// A source of values that observers subscribe to: ``Event``,
/// ``ObservableValue``, one key of a ``KeyedEvent`` and a ``KeySelection``.
///
/// Every source offers the same subscriptions, defined once here:
///
/// | observer | on the sending thread | `delivery: .queue(q)` | on the main actor | on an actor |
/// |---|---|---|---|---|
/// | a closure | `subscribe { v in }` | `subscribe(delivery:) { v in }` | `subscribe { @MainActor v in }` | — |
/// | a weak target | `subscribe(t) { t, v in }` | `subscribe(t, delivery:) { t, v in }` | `subscribe(t) { @MainActor t, v in }` | `subscribe(isolatedTo: a) { a, v in }` |
///
/// Each takes `limit:` (deliver at most this many values, then cancel) and
/// `replay:`, which exists where the source has a current value
/// (``ObservableValue``: `replay: true` delivers the current value first,
/// and it counts as the first of `limit`). A source without one has
/// `ReplayOption == Never`, so `event.subscribe(replay: true)` does not
/// compile. A combination that cannot deliver does not compile either: a
/// closure that touches main-actor state must be marked `@MainActor`
/// (``HandlerDelivery`` has no main-actor case), and a value that crosses to
/// a queue, the main actor or an actor must be `Sendable`.
///
/// ```swift
/// let saved = Event<Int>()
/// let log = DispatchQueue(label: "log")
/// let onThread = saved.subscribe(limit: 2) { count in print("saved", count) }
/// let onQueue = saved.subscribe(delivery: .queue(log)) { count in print("logged", count) }
/// saved.send(1)
/// onThread.cancel()
/// onQueue.cancel()
/// ```
///
/// Conforming is for the library's own kinds: the requirements are the
/// engine's entry points, named with a leading underscore.
public protocol ObserverSource<Value> {
    /// What each delivery carries.
    associatedtype Value

    /// The type of `replay:`: `Bool` for a source with a current value,
    /// `Never` (no argument can be passed) for one without.
    associatedtype ReplayOption = Never

    /// Engine entry point: stores a closure called with each value where
    /// `delivery` says, at most `limit` times (`nil`: no limit; a positive
    /// number: callers pass nothing else). A `current` value is delivered
    /// to it first, as a sent value would be (and counted by `limit`).
    func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Value?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription

    /// Engine entry point: as the closure form, on behalf of a weakly held
    /// target that the handler receives (loaded again where it runs).
    func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription

    /// Engine entry point: runs `body` so that no value is sent between the
    /// subscription `body` makes and the replay it delivers, passing the
    /// current value when `replay` asks for it and there is one, nil
    /// otherwise.
    func _withCurrentValue<Result>(replay: ReplayOption?, _ body: (Value?) -> Result) -> Result
}

extension ObserverSource where ReplayOption == Never {
    @inlinable
    public func _withCurrentValue<Result>(replay: Never?, _ body: (Value?) -> Result) -> Result {
        body(nil)
    }
}

// MARK: - On the sending thread (any Value)

extension ObserverSource {
    /// Subscribes a closure called on the sending thread; the returned token
    /// cancels it.
    ///
    /// The handler may run on several threads at once (one per concurrent
    /// sender), so it is `@Sendable`: the compiler rejects handlers that
    /// mutate captured variables or touch actor state. For main-actor state,
    /// mark the closure `@MainActor` instead.
    ///
    /// - Parameters:
    ///   - replay: where the source has a current value, `true` calls the
    ///     handler with it first (counted by `limit`); no later value is
    ///     delivered before it.
    ///   - limit: deliver at most this many values, then cancel (exact under
    ///     concurrent sends). `nil` (the default) means no limit; zero or
    ///     less subscribes nothing and returns an inactive token.
    ///   - handler: called with each value sent.
    /// - Returns: a ``Subscription``. A closure subscription ends only when
    ///   it is cancelled, its limit is spent or the source is deallocated, so
    ///   the result may not be ignored: keep the token, `store(in:)` a
    ///   ``SubscriptionBag`` or a `Set<Subscription>`, or discard it
    ///   explicitly with `_ =`.
    @inlinable
    public func subscribe(
        replay: ReplayOption? = nil, limit: Int? = nil, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeClosure(replay: replay, delivery: .synchronous, limit: limit, handler)
    }

    /// Subscribes `handler` on behalf of `target`, which is held weakly: no
    /// `[weak self]` needed. The handler runs on the sending thread and
    /// receives the live target; once the target is deallocated the
    /// subscription stops and its slot is freed.
    ///
    /// The target is handed to whichever thread sends, so it must be
    /// `Sendable` (a `@MainActor` class, an actor, or a class whose state is
    /// immutable or locked).
    ///
    /// <!-- snippet: fragment of SendableTarget -->
    /// ```swift
    /// event.subscribe(self) { me, value in me.render(value) }
    /// ```
    ///
    /// - Parameters:
    ///   - target: passed to `handler`, held weakly.
    ///   - replay: as in ``subscribe(replay:limit:_:)-(_,_,(Value)->Void)``.
    ///   - limit: deliver at most this many values, then cancel. `nil` (the
    ///     default) means no limit; zero or less subscribes nothing.
    ///   - handler: receives the live target and each value.
    /// - Returns: a token; the subscription also ends with its target, so the
    ///   token may be ignored.
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, replay: ReplayOption? = nil, limit: Int? = nil,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, replay: replay, delivery: .synchronous, limit: limit, handler)
    }
}

// MARK: - On a queue, the main actor or an actor (Sendable values)

extension ObserverSource where Value: Sendable {
    /// Subscribes a closure that runs where `delivery` says: on the sending
    /// thread or asynchronously on a queue (in the order the sends
    /// enqueued). A closure runs on the main actor by being marked
    /// `@MainActor`, not by a delivery: ``HandlerDelivery`` has no
    /// `.mainActor`.
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
    ///     `@Sendable`.
    ///   - replay: as in ``subscribe(replay:limit:_:)-(_,_,(Value)->Void)``;
    ///     the current value is delivered the same way, first.
    ///   - limit: deliver at most this many values, then cancel; `nil` (the
    ///     default) means no limit, zero or less subscribes nothing.
    ///   - handler: called with each value sent.
    /// - Returns: a ``Subscription`` that must be kept (or stored in a bag,
    ///   or discarded explicitly).
    @inlinable
    public func subscribe(
        delivery: HandlerDelivery, replay: ReplayOption? = nil, limit: Int? = nil,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeClosure(replay: replay, delivery: delivery.delivery, limit: limit, handler)
    }

    /// Subscribes `handler` on behalf of a weakly held `target`, running
    /// where `delivery` says. The target is loaded again where the handler
    /// runs: it may be gone by then, and then the handler is not called.
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, delivery: HandlerDelivery, replay: ReplayOption? = nil, limit: Int? = nil,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, replay: replay, delivery: delivery.delivery, limit: limit, handler)
    }

    /// Subscribes a main-actor handler. It runs synchronously when the send
    /// happens on the main actor and is enqueued on the main queue otherwise
    /// (behind any main-actor delivery still queued: see ``Delivery/mainActor``).
    ///
    /// Selected by marking the closure: `source.subscribe { @MainActor value in ... }`.
    /// An unmarked closure selects the sending-thread form, whose handler runs
    /// wherever the send happens, so touching main-actor state from it does
    /// not compile.
    public func subscribe(
        replay: ReplayOption? = nil, limit: Int? = nil, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription {
        subscribeClosure(replay: replay, delivery: .mainActor, limit: limit) { value in
            MainActor.assumeIsolated { handler(value) }
        }
    }

    /// A main-actor handler on behalf of a weakly held `target`, selected by
    /// marking the closure: `source.subscribe(self) { @MainActor me, value in ... }`.
    /// It runs as ``Delivery/mainActor`` says.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, replay: ReplayOption? = nil, limit: Int? = nil,
        handler: @escaping @MainActor (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, replay: replay, delivery: .mainActor, limit: limit) { target, value in
            MainActor.assumeIsolated { handler(target, value) }
        }
    }

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
    ///   - replay: as in ``subscribe(replay:limit:_:)-(_,_,(Value)->Void)``:
    ///     the current value is the mailbox's first item.
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
        isolatedTo actor: A, replay: ReplayOption? = nil, limit: Int? = nil,
        bufferingPolicy: ObserverBufferingPolicy = .unbounded,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> Subscription {
        subscribeActor(actor, replay: replay, limit: limit, bufferingPolicy: bufferingPolicy, handler: handler)
            .subscription
    }

    /// The actor subscription and its mailbox (nil for an inactive token).
    func subscribeActor<A: Actor>(
        _ actor: A, replay: ReplayOption?, limit: Int?, bufferingPolicy: ObserverBufferingPolicy,
        fileID: StaticString? = nil, line: UInt = 0, handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> (subscription: Subscription, mailbox: ActorMailbox<A, Value>?) {
        if let limit, limit <= 0 { return (Subscription.inactive, nil) }
        var handler = handler
        var record: TrackedSubscription?
        if _slowPath(SubscriptionTracking.isOn) {
            let made = TrackedSubscription(.actor, of: Self.self, delivery: .synchronous, fileID: fileID, line: line)
            made.setActor(actor)
            handler = { [handler] (actor: isolated A, value: Value) in
                made.beginDelivery()
                handler(actor, value)
                made.endDelivery()
            }
            record = made
        }
        let mailbox = ActorMailbox(
            actor: actor, limit: limit ?? Int.max, policy: bufferingPolicy, handler: handler)
        return _withCurrentValue(replay: replay) { current in
            let subscription = _subscribe(actor, delivery: .synchronous, limit: nil, replaying: nil) { _, value in
                mailbox.receive(value)
            }
            mailbox.attach(subscription)
            // No send reaches the mailbox before this: the current value is
            // its first item, and the mailbox's limit counts it.
            if let current, subscription.isActive { mailbox.receive(current) }
            return (record?.attach(subscription) ?? subscription, mailbox)
        }
    }
}

// MARK: - The one definition of limit and replay

extension ObserverSource {
    /// A closure subscription: the limit, then the store, with the current
    /// value first when `replay` asks for it (no value is sent between the
    /// two; the replayed value is the first of `limit` deliveries).
    /// Inlinable: a client's plain `subscribe { ... }` specializes to the
    /// kind's entry point.
    @inlinable
    func subscribeClosure(
        replay: ReplayOption?, delivery: Delivery, limit: Int?, fileID: StaticString? = nil, line: UInt = 0,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        if _slowPath(SubscriptionTracking.isOn) {
            let record = TrackedSubscription(.closure, of: Self.self, delivery: delivery, fileID: fileID, line: line)
            return record.attach(
                storeClosure(replay: replay, delivery: delivery, limit: limit, record.counting(handler)))
        }
        return storeClosure(replay: replay, delivery: delivery, limit: limit, handler)
    }

    /// ``subscribeClosure(replay:delivery:limit:fileID:line:_:)`` past the
    /// limit check and tracking: the store and the replay.
    @inlinable
    func storeClosure(
        replay: ReplayOption?, delivery: Delivery, limit: Int?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if replay == nil { return _subscribe(delivery: delivery, limit: limit, replaying: nil, handler) }
        return _withCurrentValue(replay: replay) { current in
            _subscribe(delivery: delivery, limit: limit, replaying: current, handler)
        }
    }

    /// The target form of ``subscribeClosure(replay:delivery:limit:_:)``.
    @inlinable
    func subscribeTarget<Target: AnyObject>(
        _ target: Target, replay: ReplayOption?, delivery: Delivery, limit: Int?, fileID: StaticString? = nil,
        line: UInt = 0, _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        if _slowPath(SubscriptionTracking.isOn) {
            let record = TrackedSubscription(.weakTarget, of: Self.self, delivery: delivery, fileID: fileID, line: line)
            record.setTarget(target)
            return record.attach(
                storeTarget(target, replay: replay, delivery: delivery, limit: limit, record.counting(handler)))
        }
        return storeTarget(target, replay: replay, delivery: delivery, limit: limit, handler)
    }

    /// ``subscribeTarget(_:replay:delivery:limit:fileID:line:_:)`` past the
    /// limit check and tracking.
    @inlinable
    func storeTarget<Target: AnyObject>(
        _ target: Target, replay: ReplayOption?, delivery: Delivery, limit: Int?,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        if replay == nil { return _subscribe(target, delivery: delivery, limit: limit, replaying: nil, handler) }
        return _withCurrentValue(replay: replay) { current in
            _subscribe(target, delivery: delivery, limit: limit, replaying: current, handler)
        }
    }
}
