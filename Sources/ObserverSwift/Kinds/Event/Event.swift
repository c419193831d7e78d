import Dispatch

/// A typed event: observers subscribe closures, senders call ``send(_:)``.
///
/// `Event` keeps SwiftEvents' names (`subscribe`, `unsubscribe`,
/// `subscribersCount`, `triggersCount`, ...); with the ObserverSwiftCompat
/// product's `trigger`, `notify` and `EventTS`, code written for SwiftEvents
/// compiles after changing its import to `import ObserverSwiftCompat`.
///
/// ```swift
/// final class Screen {
///     var shown: [String] = []
/// }
/// let titleChanged = Event<String>()
/// let screen = Screen()
/// titleChanged.subscribe(screen) { screen, title in screen.shown.append(title) }
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
    typealias Slots = SlotList<EventSubscriber<Void, Value>>

    /// First stored property: the words of `triggers` and of the slot list's
    /// reference (see `AtomicWord`). Nothing else: an event with no
    /// subscriber is 40 bytes (a 48-byte heap block); its slot list is made
    /// by the first subscribe, the trigger counter's padded lines by the
    /// first send from a second thread.
    @usableFromInline
    var words = Words()

    @usableFromInline
    struct Words {
        @usableFromInline var triggers = TriggerCounter.Words()
        /// The slot list (retained), or nil before the first subscribe.
        @usableFromInline var slots = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
        @usableFromInline init() {}

        @inlinable static var triggersOffset: Int { 0 }
        @inlinable static var slotsOffset: Int { MemoryLayout<TriggerCounter.Words>.stride }
    }

    @usableFromInline
    var triggers: TriggerCounter { TriggerCounter(in: self, at: Words.triggersOffset) }

    @usableFromInline
    var slotsWord: AtomicWord<UnsafeMutableRawPointer?> { AtomicWords.word(self, at: Words.slotsOffset) }

    /// Creates an event with no subscribers.
    public init() {}

    deinit {
        if let list = slotsWord.load(ordering: .acquiring) {
            let slots = Unmanaged<Slots>.fromOpaque(list)
            // Tokens may keep the list itself alive; the handlers go now.
            slots._withUnsafeGuaranteedRef { _ = $0.removeAll() }
            slots.release()
        }
        triggers.deallocateContendedCounts()
    }

    /// Calls `body` with the slot list borrowed (no retain), or returns nil
    /// when nobody ever subscribed. The send path.
    @inlinable @inline(__always)
    func withExistingSlots<Result>(_ body: (Slots) -> Result) -> Result? {
        // Acquire: pairs with the release that published the list, so its
        // fields are visible. A plain move on x86.
        guard let list = slotsWord.load(ordering: .acquiring) else { return nil }
        return Unmanaged<Slots>.fromOpaque(list)._withUnsafeGuaranteedRef(body)
    }

    /// The slot list's C list, or nil when nobody ever subscribed. The send
    /// path goes through the C list alone: a Swift reference to the slot
    /// list, even borrowed, costs a retain and a release per send here.
    /// The event keeps the list (and so its C list) alive.
    @inlinable @inline(__always)
    var existingList: OpaquePointer? {
        // Acquire: pairs with the release that published the list, so its
        // fields are visible. A plain move on x86.
        guard let list = slotsWord.load(ordering: .acquiring) else { return nil }
        return Unmanaged<Slots>.fromOpaque(list)._withUnsafeGuaranteedRef { $0.pointer }
    }

    /// The slot list, made now if nobody subscribed yet. Writers only.
    @usableFromInline
    var slots: Slots { madeSlots.takeUnretainedValue() }

    /// ``slots``, unretained (the event keeps it): what subscribes borrow.
    @usableFromInline
    var madeSlots: Unmanaged<Slots> {
        if let list = slotsWord.load(ordering: .acquiring) { return Unmanaged<Slots>.fromOpaque(list) }
        let made = Unmanaged.passRetained(Slots())
        // Release: the list is initialized before another thread sees it;
        // acquire on failure, to use the list another subscriber made first.
        let published = slotsWord.compareExchange(
            expected: nil, desired: made.toOpaque(), ordering: .acquiringAndReleasing)
        if published.exchanged { return made }
        made.release()
        return Unmanaged<Slots>.fromOpaque(published.original!)
    }

    // MARK: Sending

    /// Calls every subscription that existed when the send started.
    ///
    /// Synchronous subscriptions run on the calling thread before this
    /// returns, in subscription-slot order; queued ones are enqueued.
    @inlinable
    public func send(_ value: Value) {
        let reader = SectionReader.current
        triggers.increment(by: reader)
        guard let list = existingList else { return }
        Slots.send(value, to: list, as: reader) { $0.receive((), value) }
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
        withExistingSlots { $0.removeAll { $0.isTarget(target) } } ?? 0
    }

    /// Removes every subscription; returns how many were stored.
    @discardableResult
    public func unsubscribeAll() -> Int {
        withExistingSlots { $0.removeAll() } ?? 0
    }

    // MARK: Counting

    /// Subscriptions that can still deliver: not cancelled, target alive,
    /// limit not spent. Reading it also frees slots of dead targets.
    public var subscribersCount: Int { withExistingSlots { $0.liveCount } ?? 0 }

    /// How many times ``send(_:)`` was called.
    public var triggersCount: Int { triggers.value }

    /// Sets ``triggersCount`` back to zero.
    public func resetTriggersCount() {
        triggers.reset()
    }

    // MARK: Internals

    // Inlinable so that each client specializes them: the box's generic
    // metadata is then looked up once per type, not on every subscribe.
    @inlinable
    func subscribeClosure(
        delivery: Delivery, limit: Int?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        return madeSlots._withUnsafeGuaranteedRef { slots in
            if case .synchronous = delivery, limit == nil {
                // A plain closure: stored in a cell, not an object.
                return Subscription(list: slots, handle: slots.addHandler(handler))
            }
            let box = QueuedOrLimitedSubscriber(
                expiry: Expiry(list: slots), delivery: delivery, limit: limit ?? Int.max
            ) { _, value in handler(value) }
            return Subscription(list: slots, handle: slots.add(box))
        }
    }

    @inlinable
    func subscribeTarget<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        return madeSlots._withUnsafeGuaranteedRef { slots in
            let box = TargetSubscriber(
                target: target, expiry: Expiry(list: slots), delivery: delivery, limit: limit ?? Int.max
            ) { target, _, value in handler(target, value) }
            return Subscription(list: slots, handle: slots.add(box))
        }
    }
}

extension Event: @unchecked Sendable where Value: Sendable {}
// @unchecked: all state is the internally synchronized C list and an atomic.
