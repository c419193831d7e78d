/// The words an event-like source keeps for its observers: a trigger
/// counter's words and the observers word (nil, a sole handler or the slot
/// list; see ``EventObservers``). 24 bytes, kept among the source's first
/// stored property's words (see `AtomicWord`).
@usableFromInline
package struct EventObserverWords {
    @usableFromInline package var triggers = TriggerCounter.Words()
    /// The observers word (see ``EventObservers``).
    @usableFromInline package var slots = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
    @usableFromInline package init() {}

    @inlinable package static var triggersOffset: Int { 0 }
    @inlinable package static var slotsOffset: Int { MemoryLayout<TriggerCounter.Words>.stride }
}

/// The observers of an ``Event`` or an ``ObservableValue``: a view of the
/// ``EventObserverWords`` its owner keeps, holding nothing itself (copy it
/// freely; it is valid while the owner lives). The trigger counter's padded
/// lines are made by the first send from a second thread.
///
/// Its observers word (``ObserversWord``) holds nil, a ``SoleHandler``
/// (one plain closure, synchronous and with no limit, and nothing else),
/// or the slot list, which every other subscription needs; a list stays
/// until the owner's `deinit`.
@usableFromInline
package struct EventObservers<Value> {
    @usableFromInline
    package typealias Slots = SlotList<EventSubscriber<Void, Value>>

    @usableFromInline
    package typealias Sole = SoleHandler<Value>

    /// The observers word's protocol, over this source's types.
    @usableFromInline
    package typealias Word = ObserversWord<Value, Sole, Slots>

    @usableFromInline
    package let triggers: TriggerCounter

    /// The observers word (see the type's documentation).
    @usableFromInline
    package let word: AtomicWord<UnsafeMutableRawPointer?>

    /// The observers whose words start `offset` bytes into `object`'s first
    /// stored property.
    @inlinable @inline(__always)
    package init(in object: AnyObject, at offset: Int) {
        triggers = TriggerCounter(in: object, at: offset + EventObserverWords.triggersOffset)
        word = AtomicWords.word(object, at: offset + EventObserverWords.slotsOffset)
    }

    /// The observers whose words `owner` keeps as its first stored property.
    @inlinable @inline(__always)
    package init(keptFirstBy owner: AnyObject) {
        self.init(in: owner, at: 0)
    }

    /// The observers word, read and written through its protocol.
    @inlinable @inline(__always)
    package var observersWord: Word { Word(word) }

    /// Removes every handler and releases the list and the trigger counter's
    /// block. For the owner's deinit, when no send of the owner runs.
    package func release() {
        // Tokens may keep the list itself alive; the handlers go now.
        observersWord.release { _ = $0.removeAll() }
        triggers.deallocateContendedCounts()
    }

    /// Calls `body` with the slot list borrowed (no retain), or returns nil
    /// when there is no list (nobody subscribed, or one sole handler).
    @inlinable @inline(__always)
    package func withExistingSlots<Result>(_ body: (Slots) -> Result) -> Result? {
        observersWord.existingLists?._withUnsafeGuaranteedRef(body)
    }

    /// The slot list's C list, or nil when there is no list.
    package var existingList: OpaquePointer? {
        withExistingSlots { $0.pointer }
    }

    /// The slot list, made now if there is none (moving a sole handler into
    /// it). Writers only.
    @usableFromInline
    package var slots: Slots { madeSlots.takeUnretainedValue() }

    /// ``slots``, unretained (the owner keeps it): what subscribes borrow.
    @usableFromInline
    package var madeSlots: Unmanaged<Slots> {
        // A list, once there, stays until the owner's deinit.
        if let slots = observersWord.existingLists { return slots }
        return observersWord.madeLists(
            make: Slots.init, copying: { _ in () }, moving: { sole, handler, _ in grow(sole, handler: handler) })
    }

    /// Moves `sole` into a new slot list published in its place, as a cell
    /// of the same closure (`handler`, copied while it was in the word)
    /// whose subscription the handler's token then forwards to
    /// (``ObserversWord/replace(_:with:subscription:)``). Nil when the
    /// handler left the word before its lock was taken (the caller looks
    /// again).
    package func grow(_ sole: Sole, handler: @escaping (Value) -> Void) -> Unmanaged<Slots>? {
        let slots = Slots()
        let handle = slots.addHandler(handler)
        let made = observersWord.replace(sole, with: slots) { Subscription(list: slots, handle: handle) }
        if let made { return made }
        _ = slots.removeAll()
        return nil
    }

    // MARK: Sending

    /// Counts a trigger and calls every subscription that existed when the
    /// send started, inside a read section of its own entered on `reader`
    /// (the calling thread's).
    @inlinable @inline(__always)
    package func send(_ value: Value, as reader: SectionReader) {
        triggers.increment(by: reader)
        guard let loaded = word.load(ordering: .acquiring) else { return }
        if Word.isTagged(loaded) { return sendToSole(value, as: reader) }
        // A list stays in the word until the owner's deinit: the send goes
        // through its C list alone (a Swift reference to the slot list, even
        // borrowed, costs a retain and a release per send here).
        let list = Unmanaged<Slots>.fromOpaque(loaded)._withUnsafeGuaranteedRef { $0.pointer }
        Slots.send(value, to: list, as: reader) { $0.receive((), value) }
    }

    /// ``send(_:as:)`` once the word was seen holding a sole handler: out of
    /// line (but specialized where inlined), so that the empty and list
    /// paths keep a small frame.
    @inlinable @inline(never)
    package func sendToSole(_ value: Value, as reader: SectionReader) {
        reader.begin()
        sendInSection(value)
        reader.end()
    }

    /// ``send(_:as:)`` for a caller already inside a read section entered on
    /// `reader`: neither enters nor leaves one.
    @inlinable @inline(__always)
    package func send(_ value: Value, inSectionOf reader: SectionReader) {
        triggers.increment(by: reader)
        sendInSection(value)
    }

    /// Calls every subscription, inside the caller's read section: the word
    /// is loaded here, so a sole handler found is not released before the
    /// section ends.
    @inlinable @inline(__always)
    package func sendInSection(_ value: Value) {
        guard let loaded = word.load(ordering: .acquiring) else { return }
        if Word.isTagged(loaded) {
            Word.sole(fromTagged: loaded)._withUnsafeGuaranteedRef { $0.closure.call(value) }
            return
        }
        let list = Unmanaged<Slots>.fromOpaque(loaded)._withUnsafeGuaranteedRef { $0.pointer }
        Slots.sendInSection(value, to: list) { $0.receive((), value) }
    }

    /// Sends every value `values` yields, in order, inside the caller's read
    /// section entered on `reader`: the deliveries of a ``send(_:as:)`` of
    /// each value in turn (``Event/send(contentsOf:)``).
    @inlinable
    package func send<Values: IteratorProtocol>(each values: inout Values, inSectionOf reader: SectionReader)
    where Values.Element == Value {
        var next = values.next()
        while let value = next {
            triggers.increment(by: reader)
            // Loaded per value: a handler (or another thread) may subscribe
            // or cancel. Loaded inside the section, so a sole handler found
            // is not released before it ends, and its address is not reused.
            guard let loaded = word.load(ordering: .acquiring) else {
                next = values.next()
                continue
            }
            if Word.isTagged(loaded) {
                // One plain closure and no list: call it for as long as the
                // word still holds it, which is what a send of each value
                // would call.
                Word.sole(fromTagged: loaded)._withUnsafeGuaranteedRef { sole in
                    sole.closure.call(value)
                    next = values.next()
                    while let value = next, word.load(ordering: .acquiring) == loaded {
                        triggers.increment(by: reader)
                        sole.closure.call(value)
                        next = values.next()
                    }
                }
                continue
            }
            Unmanaged<Slots>.fromOpaque(loaded)._withUnsafeGuaranteedRef { slots in
                if let sole = slots.soleVisibleHandler(of: Value.self) {
                    // One plain closure subscription in the list: call its
                    // closure directly for as long as the list holds that
                    // cell alone.
                    let handler = sole.cell.pointee.handler
                    handler(value)
                    next = values.next()
                    while let value = next, slots.stillHasOnly(sole) {
                        triggers.increment(by: reader)
                        handler(value)
                        next = values.next()
                    }
                } else {
                    Slots.sendInSection(value, to: slots.pointer) { $0.receive((), value) }
                    next = values.next()
                }
            }
        }
    }

    // MARK: Subscribing

    // Inlinable so that each client specializes them: the box's generic
    // metadata is then looked up once per type, not on every subscribe.
    @inlinable
    package func subscribeClosure(
        delivery: Delivery, limit: Int?, replaying current: Value? = nil,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        if case .synchronous = delivery.route, limit == nil, word.load(ordering: .relaxed) == nil,
            let subscription = subscribeSole(handler)
        {
            if let current { handler(current) }
            return subscription
        }
        return madeSlots._withUnsafeGuaranteedRef { slots in
            if case .synchronous = delivery.route, limit == nil {
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

    /// Publishes `handler` as the word's sole handler when the word is still
    /// nil; nil (nothing done) when another subscription came first.
    /// Out of line: the first subscribe of a source takes it once, and a
    /// token made here is not one a caller's list path shares a value with.
    @usableFromInline
    package func subscribeSole(_ handler: @escaping (Value) -> Void) -> Subscription? {
        let sole = Sole(handler, attachedTo: observersWord.address)
        guard observersWord.publish(sole) else { return nil }
        return Subscription(registration: sole)
    }

    @inlinable
    package func subscribeTarget<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value? = nil,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        return madeSlots._withUnsafeGuaranteedRef { slots in
            let box = EventTargetSubscriber(
                target: target, expiry: Expiry(list: slots), delivery: delivery, limit: limit ?? Int.max,
                handler: handler)
            let subscription = Subscription(list: slots, handle: slots.add(box))
            if let current { Self.replay(current, to: box) }
            return subscription
        }
    }

    /// Delivers `current` through `box` as a send would: its limit counts
    /// it, its delivery places it.
    @usableFromInline
    package static func replay(_ current: Value, to box: EventSubscriber<Void, Value>) {
        box.receive((), current)
    }

    // MARK: Unsubscribing and counting

    /// Removes every subscription made for `target`; returns how many (a
    /// sole handler has no target).
    package func unsubscribe(_ target: AnyObject) -> Int {
        withExistingSlots { $0.removeAll { $0.isTarget(target) } } ?? 0
    }

    /// Removes every subscription; returns how many were stored.
    package func unsubscribeAll() -> Int {
        removeAll { _ in true }
    }

    /// Removes every subscription for which `predicate` is true; returns how
    /// many. A sole handler is asked as ``HandlerCell/asSubscriber`` (a
    /// closure with no target), as its cell would be in a list.
    package func removeAll(where predicate: (Subscriber) -> Bool) -> Int {
        observersWord.removeAll(
            copying: { _ in () }, removesSole: { predicate(HandlerCell.asSubscriber) },
            removeFromLists: { $0.removeAll(where: predicate) })
    }

    /// Subscriptions that can still deliver. Also frees slots of dead targets.
    package var subscribersCount: Int {
        guard let loaded = word.load(ordering: .acquiring) else { return 0 }
        if Word.isTagged(loaded) { return 1 }
        return Unmanaged<Slots>.fromOpaque(loaded)._withUnsafeGuaranteedRef { $0.liveCount }
    }
}
