import Dispatch

/// A typed event: observers subscribe closures, senders call ``send(_:)``.
///
/// `Event` keeps SwiftEvents' names (`subscribe`, `unsubscribe`,
/// `subscribersCount`, `triggersCount`, ...); with the ObserverSwiftCompat
/// product's `trigger`, `notify` and `EventTS`, code written for SwiftEvents
/// compiles after changing its import to `import ObserverSwiftCompat`.
///
/// ```swift
/// final class Screen: Sendable {
///     func show(_ title: String) { print("showing", title) }
/// }
/// let titleChanged = Event<String>()
/// let screen = Screen()
/// titleChanged.subscribe(screen) { screen, title in screen.show(title) }
/// let token = titleChanged.subscribe { title in print("title:", title) }
/// titleChanged.send("Inbox")      // both handlers run, on this thread
/// token.cancel()
/// ```
///
/// Threading: every method may be called from any thread at any time. A
/// handler runs on the sending thread, inside `send`, unless it was given a
/// queue or the main actor. Sends never take a lock and never wait for
/// subscribers being added or removed.
///
/// Reentrancy: a handler may send again (to this or any event), subscribe,
/// cancel itself or others, or unsubscribe all. A subscription added during a
/// send is not called by that send; one removed during a send may or may not
/// be called by it, and is never called by a send that starts afterwards.
public final class Event<Value> {
    @usableFromInline
    typealias Slots = EventObservers<Value>.Slots

    /// First stored property: the words of `triggers` and of the slot list's
    /// reference (see `AtomicWord`). Nothing else: an event with no
    /// subscriber is 40 bytes (a 48-byte heap block); its slot list is made
    /// by the first subscribe, the trigger counter's padded lines by the
    /// first send from a second thread.
    @usableFromInline
    var words = Words()

    @usableFromInline
    typealias Words = EventObserverWords

    /// The subscriptions and the trigger count, on `words`.
    @inlinable
    var observers: EventObservers<Value> { EventObservers(in: self, at: 0) }

    @inlinable
    var triggers: TriggerCounter { observers.triggers }

    /// Creates an event with no subscribers.
    public init() {}

    deinit {
        observers.release()
    }

    /// Calls `body` with the slot list borrowed (no retain), or returns nil
    /// when nobody ever subscribed. The send path.
    @inlinable @inline(__always)
    func withExistingSlots<Result>(_ body: (Slots) -> Result) -> Result? {
        observers.withExistingSlots(body)
    }

    /// The slot list, made now if nobody subscribed yet. Writers only.
    @usableFromInline
    var slots: Slots { observers.slots }

    // MARK: Sending

    /// Calls every subscription that existed when the send started.
    ///
    /// Synchronous subscriptions run on the calling thread before this
    /// returns, in subscription-slot order; queued ones are enqueued.
    @inlinable
    public func send(_ value: Value) {
        // The reader first: the words' addresses are then computed after
        // the thread-local lookup, not kept across it.
        let reader = SectionReader.current
        observers.send(value, as: reader)
    }

    // MARK: Subscribing closures

    /// Subscribes a closure called on the sending thread; the returned token
    /// cancels it.
    ///
    /// The handler may run on several threads at once (one per concurrent
    /// sender), so it is `@Sendable`: the compiler rejects handlers that
    /// mutate captured variables or touch actor state.
    ///
    /// - Parameters:
    ///   - limit: deliver at most this many values, then cancel (exact under
    ///     concurrent sends). `nil` (the default) means no limit; zero or
    ///     less subscribes nothing and returns an inactive token.
    ///   - handler: called with each value sent.
    /// - Returns: a ``Subscription``. A closure subscription ends only when
    ///   it is cancelled, its limit is spent or the event is deallocated, so
    ///   the result may not be ignored: keep the token, `store(in:)` a
    ///   ``SubscriptionBag`` or a `Set<Subscription>`, or discard it
    ///   explicitly with `_ =`.
    @inlinable
    public func subscribe(limit: Int? = nil, _ handler: @escaping @Sendable (Value) -> Void) -> Subscription {
        subscribeClosure(delivery: .synchronous, limit: limit, handler)
    }

    // MARK: Subscribing targets (SwiftEvents)

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
    ///   - limit: deliver at most this many values, then cancel. `nil` (the
    ///     default) means no limit; zero or less subscribes nothing.
    ///   - handler: receives the live target and each value.
    /// - Returns: a token; the subscription also ends with its target, so the
    ///   token may be ignored.
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, limit: Int? = nil, handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, delivery: .synchronous, limit: limit, handler)
    }

    /// ``subscribe(_:limit:handler:)-(_,_,(Target,Value)->Void)`` with a
    /// main-actor handler, selected by marking the closure:
    /// `event.subscribe(self) { @MainActor me, value in ... }`. It runs as
    /// ``Delivery/mainActor`` says.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, limit: Int? = nil,
        handler: @escaping @MainActor (Target, Value) -> Void
    ) -> Subscription where Value: Sendable {
        subscribeTarget(target, delivery: .mainActor, limit: limit) { target, value in
            MainActor.assumeIsolated { handler(target, value) }
        }
    }

    // MARK: Unsubscribing

    /// Removes every subscription made for `target`; returns how many.
    /// A target never subscribed is a no-op (returns 0), also when it lives
    /// at the address of a deallocated target whose subscription is still
    /// stored (that one is freed as expired, not counted).
    @discardableResult
    public func unsubscribe(_ target: AnyObject) -> Int {
        observers.unsubscribe(target)
    }

    /// Removes every subscription; returns how many were stored.
    @discardableResult
    public func unsubscribeAll() -> Int {
        observers.unsubscribeAll()
    }

    // MARK: Counting

    /// Subscriptions that can still deliver: not cancelled, target alive,
    /// limit not spent. Reading it also frees slots of dead targets.
    public var subscribersCount: Int { observers.subscribersCount }

    /// How many times ``send(_:)`` was called.
    public var triggersCount: Int { triggers.value }

    /// Sets ``triggersCount`` back to zero.
    public func resetTriggersCount() {
        triggers.reset()
    }

    // MARK: Internals

    @inlinable
    func subscribeClosure(
        delivery: Delivery, limit: Int?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        observers.subscribeClosure(delivery: delivery, limit: limit, handler)
    }

    @inlinable
    func subscribeTarget<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        observers.subscribeTarget(target, delivery: delivery, limit: limit, handler)
    }
}

extension Event: @unchecked Sendable where Value: Sendable {}
// @unchecked: all state is the internally synchronized C list and an atomic.
