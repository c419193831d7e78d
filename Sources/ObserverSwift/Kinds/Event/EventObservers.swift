/// The words an event-like source keeps for its observers: a trigger
/// counter's words and the slot list's reference (retained), nil before the
/// first subscribe. 24 bytes, kept among the source's first stored
/// property's words (see `AtomicWord`); ``EventObservers`` works on them.
@usableFromInline
struct EventObserverWords {
    @usableFromInline var triggers = TriggerCounter.Words()
    /// The slot list (retained), or nil before the first subscribe.
    @usableFromInline var slots = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
    @usableFromInline init() {}

    @inlinable static var triggersOffset: Int { 0 }
    @inlinable static var slotsOffset: Int { MemoryLayout<TriggerCounter.Words>.stride }
}

/// The observers of an ``Event`` or an ``ObservableValue``: a view of the
/// ``EventObserverWords`` its owner keeps, holding nothing itself (copy it
/// freely; it is valid while the owner lives). The slot list is made by the
/// first subscribe, the trigger counter's padded lines by the first send
/// from a second thread, so an owner nobody subscribed to pays its 24 bytes
/// of words and nothing else.
@usableFromInline
struct EventObservers<Value> {
    @usableFromInline
    typealias Slots = SlotList<EventSubscriber<Void, Value>>

    @usableFromInline
    let triggers: TriggerCounter

    /// The slot list (retained), or nil before the first subscribe.
    @usableFromInline
    let slotsWord: LazyObjectWord<Slots>

    /// The observers whose words start `offset` bytes into `object`'s first
    /// stored property.
    @inlinable @inline(__always)
    init(in object: AnyObject, at offset: Int) {
        triggers = TriggerCounter(in: object, at: offset + EventObserverWords.triggersOffset)
        slotsWord = LazyObjectWord(AtomicWords.word(object, at: offset + EventObserverWords.slotsOffset))
    }

    /// Removes every handler and releases the list and the trigger counter's
    /// block. For the owner's deinit, when nobody else uses the words.
    func release() {
        if let slots = slotsWord.existing {
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
        slotsWord.withExisting(body)
    }

    /// The slot list's C list, or nil when nobody ever subscribed. The send
    /// path goes through the C list alone: a Swift reference to the slot
    /// list, even borrowed, costs a retain and a release per send here.
    /// The owner keeps the list (and so its C list) alive.
    @inlinable @inline(__always)
    var existingList: OpaquePointer? {
        slotsWord.withExisting { $0.pointer }
    }

    /// The slot list, made now if nobody subscribed yet. Writers only.
    @usableFromInline
    var slots: Slots { madeSlots.takeUnretainedValue() }

    /// ``slots``, unretained (the owner keeps it): what subscribes borrow.
    @usableFromInline
    var madeSlots: Unmanaged<Slots> {
        slotsWord.made { Slots() }
    }

    // MARK: Sending

    /// Counts a trigger and calls every subscription that existed when the
    /// send started, inside a read section of its own entered on `reader`
    /// (the calling thread's).
    @inlinable @inline(__always)
    func send(_ value: Value, as reader: SectionReader) {
        triggers.increment(by: reader)
        guard let list = existingList else { return }
        Slots.send(value, to: list, as: reader) { $0.receive((), value) }
    }

    /// ``send(_:as:)`` for a caller already inside a read section entered on
    /// `reader`: neither enters nor leaves one.
    @inlinable @inline(__always)
    func send(_ value: Value, inSectionOf reader: SectionReader) {
        triggers.increment(by: reader)
        guard let list = existingList else { return }
        Slots.sendInSection(value, to: list) { $0.receive((), value) }
    }

    // MARK: Subscribing

    // Inlinable so that each client specializes them: the box's generic
    // metadata is then looked up once per type, not on every subscribe.
    @inlinable
    func subscribeClosure(
        delivery: Delivery, limit: Int?, replaying current: Value? = nil,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        return madeSlots._withUnsafeGuaranteedRef { slots in
            if case .synchronous = delivery, limit == nil {
                // A plain closure: stored in a cell, not an object.
                let subscription = Subscription(list: slots, handle: slots.addHandler(handler))
                if let current { handler(current) }
                return subscription
            }
            let box = QueuedOrLimitedSubscriber(
                expiry: Expiry(list: slots), delivery: delivery, limit: limit ?? Int.max
            ) { _, value in handler(value) }
            let subscription = Subscription(list: slots, handle: slots.add(box))
            // Through the box: the replay counts toward the limit, and a
            // deferred one is dropped only by a cancel, as a sent value is.
            if let current { Self.replay(current, to: box) }
            return subscription
        }
    }

    @inlinable
    func subscribeTarget<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value? = nil,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        if let limit, limit <= 0 { return Subscription.inactive }
        return madeSlots._withUnsafeGuaranteedRef { slots in
            let box = TargetSubscriber(
                target: target, expiry: Expiry(list: slots), delivery: delivery, limit: limit ?? Int.max
            ) { target, _, value in handler(target, value) }
            let subscription = Subscription(list: slots, handle: slots.add(box))
            if let current { Self.replay(current, to: box) }
            return subscription
        }
    }

    /// Delivers `current` through `box` as a send would: its limit counts
    /// it, its delivery places it.
    @usableFromInline
    static func replay(_ current: Value, to box: EventSubscriber<Void, Value>) {
        box.receive((), current)
    }

    // MARK: Unsubscribing and counting

    /// Removes every subscription made for `target`; returns how many.
    func unsubscribe(_ target: AnyObject) -> Int {
        withExistingSlots { $0.removeAll { $0.isTarget(target) } } ?? 0
    }

    /// Removes every subscription; returns how many were stored.
    func unsubscribeAll() -> Int {
        withExistingSlots { $0.removeAll() } ?? 0
    }

    /// Subscriptions that can still deliver. Also frees slots of dead targets.
    var subscribersCount: Int { withExistingSlots { $0.liveCount } ?? 0 }
}

extension EventObservers where Value: Sendable {
    /// The actor subscription and its mailbox (nil for an inactive token),
    /// so a replaying subscription can put the current value first.
    func subscribeActor<A: Actor>(
        _ actor: A, limit: Int?, bufferingPolicy: ObserverBufferingPolicy,
        handler: @escaping @Sendable (isolated A, Value) -> Void
    ) -> (subscription: Subscription, mailbox: ActorMailbox<A, Value>?) {
        if let limit, limit <= 0 { return (Subscription.inactive, nil) }
        let mailbox = ActorMailbox(
            actor: actor, limit: limit ?? Int.max, policy: bufferingPolicy, handler: handler)
        let subscription = subscribeTarget(actor, delivery: .synchronous, limit: nil) { _, value in
            mailbox.receive(value)
        }
        mailbox.attach(subscription)
        return (subscription, mailbox)
    }
}
