import Dispatch
import ObserverEngine

/// A source of values that observers subscribe to: ``Event``,
/// ``ObservableValue`` (and its ``ObservableValue/replaying`` view), one key
/// of a ``KeyedEvent`` and a ``KeySelection``.
///
/// Every source offers the same subscriptions, defined once here. A handler
/// runs where its code is isolated: written in nonisolated code, on the
/// sending thread before `send` returns; written in `@MainActor` code (a
/// view model's method, top-level code), on the main actor; written in an
/// actor's method that uses `self`, on that actor.
///
/// | observer | where its code is isolated | `delivery: .queue(q)` | on an actor it names |
/// |---|---|---|---|
/// | a closure | `subscribe { v in }` | `subscribe(delivery:) { v in }` | — |
/// | a weak target | `subscribe(t) { t, v in }` | `subscribe(t, delivery:) { t, v in }` | `subscribe(isolatedTo: a) { a, v in }` |
///
/// Each takes `limit:` (deliver at most this many values, then cancel). A
/// combination that cannot deliver does not compile: a value that crosses
/// to a queue, the main actor or an actor must be `Sendable`, and a
/// `delivery:` handler is a plain `@Sendable` closure, which cannot touch
/// main-actor state.
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
/// A type of your own becomes a source by forwarding to one of the
/// library's sources, and only so: the requirements are the engine's entry
/// points (named with a leading underscore), and a ``Subscription`` has no
/// public initializer, so `_subscribe` can only return one that a library
/// source made. Forward all three requirements to the same source; every
/// subscribe form above then works on your type as on that source
/// (`_withCurrentValue` forwarded from a ``ObservableValue/replaying`` view
/// keeps its replay).
///
/// ```swift
/// struct Downloads: ObserverSource {
///     let finished = Event<String>()
///
///     func _subscribe(
///         delivery: Delivery, limit: Int?, replaying current: String?,
///         _ handler: @escaping @Sendable (String) -> Void
///     ) -> Subscription {
///         finished._subscribe(delivery: delivery, limit: limit, replaying: current, handler)
///     }
///
///     func _subscribe<Target: AnyObject>(
///         _ target: Target, delivery: Delivery, limit: Int?, replaying current: String?,
///         _ handler: @escaping @Sendable (Target, String) -> Void
///     ) -> Subscription {
///         finished._subscribe(target, delivery: delivery, limit: limit, replaying: current, handler)
///     }
///
///     func _withCurrentValue<Result>(_ body: (String?) -> Result) -> Result {
///         finished._withCurrentValue(body)
///     }
/// }
///
/// let downloads = Downloads()
/// let token = downloads.subscribe { file in print("downloaded", file) }
/// downloads.finished.send("report.pdf")
/// token.cancel()
/// ```
public protocol ObserverSource<Value> {
    /// What each delivery carries.
    associatedtype Value

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
    /// value to deliver first (a replaying view's current value), or nil.
    func _withCurrentValue<Result>(_ body: (Value?) -> Result) -> Result
}

extension ObserverSource {
    /// A source with nothing to replay passes nil.
    @inlinable
    public func _withCurrentValue<Result>(_ body: (Value?) -> Result) -> Result {
        body(nil)
    }
}

// MARK: - Where the handler is isolated

extension ObserverSource {
    /// Subscribes a closure that runs where its code is isolated; the
    /// returned token cancels it.
    ///
    /// The handler's isolation is read once, here, from the context the
    /// closure is written in:
    ///
    /// - **nonisolated code** (a free function, a nonisolated method, a
    ///   `Sendable` class): the handler runs on the sending thread, before
    ///   `send` returns. It may run on several threads at once (one per
    ///   concurrent sender), so the compiler rejects handlers that mutate
    ///   captured variables.
    /// - **the main actor** (a method of a `@MainActor` type, top-level
    ///   code, a closure marked `@MainActor`): the handler runs on the main
    ///   actor and may touch main-actor state with no annotation. A send
    ///   made on the main actor calls it at once when no earlier main-actor
    ///   delivery is still queued; any other send enqueues it on the main
    ///   queue, in order.
    /// - **another actor** (a closure in an actor's method that uses
    ///   `self`, or one written in code isolated to a global actor): the
    ///   handler runs isolated to that actor, in the order the values were
    ///   sent, through a mailbox the actor drains between its other work
    ///   (as ``ObserverSource/subscribe(isolatedTo:limit:bufferingPolicy:fileID:line:handler:)``
    ///   does). The subscription keeps the actor, as the closure does.
    ///
    /// ```swift
    /// @MainActor final class Inbox {
    ///     var title = ""
    ///     let tokens = SubscriptionBag()
    ///     func bind(to titles: Event<String>) {
    ///         titles.subscribe { text in self.title = text }.store(in: tokens)
    ///     }
    /// }
    /// ```
    ///
    /// A closure in an actor's method that does not use `self` is not
    /// isolated to the actor (it cannot touch the actor's state), so it runs
    /// on the sending thread. A `for await` loop over `values` runs in the
    /// consuming task, wherever that task is isolated: the sequence buffers
    /// on the sending thread and takes no isolation from anywhere else.
    ///
    /// A value that is not `Sendable` is not checked where it crosses to the
    /// handler's actor. Such a source is not `Sendable` either, so it is
    /// used from one isolation domain: keep its handlers there (written in
    /// the same actor's code, or nonisolated).
    ///
    /// To run a handler written in main-actor code on the sending thread
    /// instead, say so: pass `delivery: .synchronous`
    /// (``ObserverSource/subscribe(delivery:limit:fileID:line:_:)``, whose plain `@Sendable` closure
    /// takes no isolation from its context), or pass a nonisolated function
    /// (a `nonisolated func`, or a closure stored first in a
    /// `let h: @Sendable (Value) -> Void`).
    ///
    /// - Parameters:
    ///   - limit: deliver at most this many values, then cancel (exact under
    ///     concurrent sends). `nil` (the default) means no limit; zero or
    ///     less subscribes nothing and returns an inactive token.
    ///   - fileID: the file of the call, which ``ObserverCore/liveSubscriptions``
    ///     lists while tracking is on (leave the default).
    ///   - line: the line of the call (leave the default).
    ///   - handler: called with each value sent, where its code is isolated.
    /// - Returns: a ``Subscription``. A closure subscription ends only when
    ///   it is cancelled, its limit is spent or the source is deallocated, so
    ///   the result may not be ignored: keep the token, `store(in:)` a
    ///   ``SubscriptionBag`` or a `Set<Subscription>`, or discard it
    ///   explicitly with `_ =`.
    @inlinable
    public func subscribe(
        limit: Int? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        @_inheritActorContext _ handler: @escaping @isolated(any) @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeWhereIsolated(limit: limit, fileID: fileID, line: line, handler)
    }

    /// Subscribes `handler` on behalf of `target`, which is held weakly: no
    /// `[weak self]` needed. The handler receives the live target; once the
    /// target is deallocated the subscription stops and its slot is freed.
    ///
    /// The handler runs where its code is isolated, as in
    /// ``ObserverSource/subscribe(limit:fileID:line:_:)``: written in a `@MainActor` type it runs on
    /// the main actor; written in nonisolated code, on the sending thread
    /// before `send` returns. The target is handed to wherever it runs, so
    /// it must be `Sendable` (a `@MainActor` class, an actor, or a class
    /// whose state is immutable or locked).
    ///
    /// In an actor, a handler that touches the actor's state uses `self`,
    /// so it holds the actor as any closure does: for a subscription that
    /// ends with the actor, use
    /// ``ObserverSource/subscribe(isolatedTo:limit:bufferingPolicy:fileID:line:handler:)``.
    ///
    /// <!-- snippet: fragment of SendableTarget -->
    /// ```swift
    /// event.subscribe(self) { me, value in me.render(value) }
    /// ```
    ///
    /// - Parameters:
    ///   - target: passed to `handler`, held weakly.
    ///   - limit: deliver at most this many values, then cancel. `nil` (the
    ///     default) means no limit; zero or less subscribes nothing.
    ///   - fileID: the file of the call, which ``ObserverCore/liveSubscriptions``
    ///     lists while tracking is on (leave the default).
    ///   - line: the line of the call (leave the default).
    ///   - handler: receives the live target and each value.
    /// - Returns: a token; the subscription also ends with its target, so the
    ///   token may be ignored.
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, limit: Int? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        @_inheritActorContext handler: @escaping @isolated(any) @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeWhereIsolated(target, limit: limit, fileID: fileID, line: line, handler)
    }
}

// MARK: - On a queue or an actor (Sendable values)

extension ObserverSource where Value: Sendable {
    /// Subscribes a closure that runs where `delivery` says: on the sending
    /// thread (`.synchronous`) or asynchronously on a queue (in the order
    /// the sends enqueued).
    ///
    /// The handler is a plain `@Sendable` closure: it takes no isolation
    /// from the code it is written in, so a handler written in a
    /// `@MainActor` type that touches main-actor state does not compile
    /// here, even with `.queue(.main)`. Leave `delivery:` out to run it on
    /// the main actor (``ObserverSource/subscribe(limit:fileID:line:_:)``).
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
    ///   - limit: deliver at most this many values, then cancel; `nil` (the
    ///     default) means no limit, zero or less subscribes nothing.
    ///   - fileID: the file of the call, which ``ObserverCore/liveSubscriptions``
    ///     lists while tracking is on (leave the default).
    ///   - line: the line of the call (leave the default).
    ///   - handler: called with each value sent.
    /// - Returns: a ``Subscription`` that must be kept (or stored in a bag,
    ///   or discarded explicitly).
    @inlinable
    public func subscribe(
        delivery: Delivery, limit: Int? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeClosure(delivery: delivery, limit: limit, fileID: fileID, line: line, handler)
    }

    /// Subscribes `handler` on behalf of a weakly held `target`, running
    /// where `delivery` says. The target is loaded again where the handler
    /// runs: it may be gone by then, and then the handler is not called.
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, delivery: Delivery, limit: Int? = nil, fileID: StaticString = #fileID, line: UInt = #line,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, delivery: delivery, limit: limit, fileID: fileID, line: line, handler)
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
    ///   - fileID: the file of the call, which ``ObserverCore/liveSubscriptions``
    ///     lists while tracking is on (leave the default).
    ///   - line: the line of the call (leave the default).
    ///   - handler: receives the isolated actor and each value.
    /// - Returns: a token; the subscription also ends with the actor.
    @discardableResult
    public func subscribe<A: Actor>(
        isolatedTo actor: A, limit: Int? = nil,
        bufferingPolicy: ObserverBufferingPolicy = .unbounded, fileID: StaticString = #fileID, line: UInt = #line,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> Subscription {
        subscribeActor(
            actor, limit: limit, bufferingPolicy: bufferingPolicy, fileID: fileID, line: line, handler: handler
        ).subscription
    }

    /// The actor subscription and its mailbox (nil for an inactive token).
    func subscribeActor<A: Actor>(
        _ actor: A, limit: Int?, bufferingPolicy: ObserverBufferingPolicy,
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
        return _withCurrentValue { current in
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

// MARK: - The one definition of isolation, limit and replay

extension ObserverSource {
    /// Routes a handler by its isolation, read once here (never per send):
    /// nil runs it on the sending thread, the main actor through the
    /// engine's main-actor delivery, any other actor through a mailbox.
    /// Inlinable: a client's plain `subscribe { ... }` specializes to the
    /// kind's entry point.
    @inlinable
    func subscribeWhereIsolated(
        limit: Int?, fileID: StaticString, line: UInt, _ handler: @escaping @isolated(any) @Sendable (Value) -> Void
    ) -> Subscription {
        let isolation = handler.isolation
        let call = unsafeSynchronousForm(of: IsolatedHandler(handler), as: SynchronousHandler<Value>.self).call
        if isolation == nil {
            return subscribeClosure(delivery: .synchronous, limit: limit, fileID: fileID, line: line, call)
        }
        return subscribeIsolated(to: isolation!, limit: limit, fileID: fileID, line: line, call)
    }

    /// The target form of ``subscribeWhereIsolated(limit:fileID:line:_:)``.
    @inlinable
    func subscribeWhereIsolated<Target: AnyObject & Sendable>(
        _ target: Target, limit: Int?, fileID: StaticString, line: UInt,
        _ handler: @escaping @isolated(any) @Sendable (Target, Value) -> Void
    ) -> Subscription {
        let isolation = handler.isolation
        let call = unsafeSynchronousForm(
            of: IsolatedTargetHandler(handler), as: SynchronousTargetHandler<Target, Value>.self
        ).call
        if isolation == nil {
            return subscribeTarget(target, delivery: .synchronous, limit: limit, fileID: fileID, line: line, call)
        }
        return subscribeIsolated(target, to: isolation!, limit: limit, fileID: fileID, line: line, call)
    }

    /// A handler isolated to `isolation`: `call` is its synchronous form,
    /// called only where that isolation holds. The value crosses to it
    /// unchecked (see ``subscribe(limit:fileID:line:_:)`` for a value that is not
    /// `Sendable`).
    @usableFromInline
    func subscribeIsolated(
        to isolation: any Actor, limit: Int?, fileID: StaticString, line: UInt,
        _ call: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if isolation === MainActor.shared {
            return subscribeClosure(delivery: .onMainActor, limit: limit, fileID: fileID, line: line) { value in
                let value = UncheckedSendable(value)
                MainActor.assumeIsolated { call(value.wrapped) }
            }
        }
        return subscribeThroughMailbox(on: isolation, limit: limit, fileID: fileID, line: line, call) { receive in
            _subscribe(delivery: .synchronous, limit: nil, replaying: nil, receive)
        }
    }

    /// The target form of ``subscribeIsolated(to:limit:fileID:line:_:)``: the
    /// target is held weakly and loaded again on the actor.
    @usableFromInline
    func subscribeIsolated<Target: AnyObject & Sendable>(
        _ target: Target, to isolation: any Actor, limit: Int?, fileID: StaticString, line: UInt,
        _ call: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        if isolation === MainActor.shared {
            return subscribeTarget(
                target, delivery: .onMainActor, limit: limit, fileID: fileID, line: line
            ) { target, value in
                let value = UncheckedSendable(value)
                MainActor.assumeIsolated { call(target, value.wrapped) }
            }
        }
        let weakTarget = WeakTarget(target)
        let deliver: @Sendable (Value) -> Void = { value in
            if let target = weakTarget.object { call(target, value) }
        }
        return subscribeThroughMailbox(on: isolation, limit: limit, fileID: fileID, line: line, deliver) { receive in
            _subscribe(target, delivery: .synchronous, limit: nil, replaying: nil) { _, value in receive(value) }
        }
    }

    /// A subscription whose values wait in a mailbox that `actor` drains
    /// in order, calling `deliver`; `subscribe` stores the engine's
    /// subscription, given the function that feeds the mailbox. The mailbox
    /// keeps the actor, as the handler's closure does (a global actor's
    /// shared instance gets no weak reference).
    func subscribeThroughMailbox<A: Actor>(
        on actor: A, limit: Int?, fileID: StaticString, line: UInt, _ deliver: @escaping @Sendable (Value) -> Void,
        subscribe: (_ receive: @escaping @Sendable (Value) -> Void) -> Subscription
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        let record =
            _slowPath(SubscriptionTracking.isOn)
            ? TrackedSubscription(.actor, of: Self.self, delivery: .synchronous, fileID: fileID, line: line) : nil
        record?.setActor(actor)
        let delivered = record?.counting(deliver) ?? deliver
        let mailbox = ActorMailbox<A, UncheckedSendable<Value>>(
            actor: actor, limit: limit ?? Int.max, keepsActor: true
        ) { _, item in delivered(item.wrapped) }
        return _withCurrentValue { current in
            let subscription = subscribe { value in mailbox.receive(UncheckedSendable(value)) }
            mailbox.attach(subscription)
            // No send reaches the mailbox before this: the current value is
            // its first item, and the mailbox's limit counts it.
            if let current, subscription.isActive { mailbox.receive(UncheckedSendable(current)) }
            return record?.attach(subscription) ?? subscription
        }
    }

    /// A closure subscription: the limit, then the store, with the value to
    /// replay first when the source has one (no value is sent between the
    /// two; the replayed value is the first of `limit` deliveries).
    /// Inlinable: a client's `subscribe` specializes to the kind's entry
    /// point.
    @inlinable
    func subscribeClosure(
        delivery: Delivery, limit: Int?, fileID: StaticString? = nil, line: UInt = 0,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        if _slowPath(SubscriptionTracking.isOn) {
            let record = TrackedSubscription(.closure, of: Self.self, delivery: delivery, fileID: fileID, line: line)
            return record.attach(storeClosure(delivery: delivery, limit: limit, record.counting(handler)))
        }
        return storeClosure(delivery: delivery, limit: limit, handler)
    }

    /// ``subscribeClosure(delivery:limit:fileID:line:_:)`` past the limit
    /// check and tracking: the store, with the value to replay first.
    @inlinable
    func storeClosure(
        delivery: Delivery, limit: Int?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        _withCurrentValue { current in
            _subscribe(delivery: delivery, limit: limit, replaying: current, handler)
        }
    }

    /// The target form of ``subscribeClosure(delivery:limit:_:)``.
    @inlinable
    func subscribeTarget<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, fileID: StaticString? = nil, line: UInt = 0,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        if _slowPath(SubscriptionTracking.isOn) {
            let record = TrackedSubscription(.weakTarget, of: Self.self, delivery: delivery, fileID: fileID, line: line)
            record.setTarget(target)
            return record.attach(storeTarget(target, delivery: delivery, limit: limit, record.counting(handler)))
        }
        return storeTarget(target, delivery: delivery, limit: limit, handler)
    }

    /// ``subscribeTarget(_:delivery:limit:fileID:line:_:)`` past the limit
    /// check and tracking.
    @inlinable
    func storeTarget<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        _withCurrentValue { current in
            _subscribe(target, delivery: delivery, limit: limit, replaying: current, handler)
        }
    }
}

/// A target the engine holds weakly, loaded again where a deferred
/// delivery runs. Written once, in `init`; weak loads are safe from any
/// thread.
final class WeakTarget<Target: AnyObject>: @unchecked Sendable {
    weak var object: Target?

    init(_ object: Target) {
        self.object = object
    }
}

/// An `@isolated(any)` handler, stored as the subscribe forms receive it.
@usableFromInline
struct IsolatedHandler<Value> {
    @usableFromInline let call: @isolated(any) @Sendable (Value) -> Void
    @inlinable init(_ call: @escaping @isolated(any) @Sendable (Value) -> Void) { self.call = call }
}

/// ``IsolatedHandler``'s function typed without its isolation.
@usableFromInline
struct SynchronousHandler<Value> {
    @usableFromInline let call: @Sendable (Value) -> Void
}

/// The target form of ``IsolatedHandler``.
@usableFromInline
struct IsolatedTargetHandler<Target: AnyObject, Value> {
    @usableFromInline let call: @isolated(any) @Sendable (Target, Value) -> Void
    @inlinable init(_ call: @escaping @isolated(any) @Sendable (Target, Value) -> Void) { self.call = call }
}

/// ``IsolatedTargetHandler``'s function typed without its isolation.
@usableFromInline
struct SynchronousTargetHandler<Target: AnyObject, Value> {
    @usableFromInline let call: @Sendable (Target, Value) -> Void
}
