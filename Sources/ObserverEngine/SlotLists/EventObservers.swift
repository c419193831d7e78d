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
/// The observers word has three forms:
/// - nil: nobody subscribed; the owner pays its 24 bytes of words alone;
/// - one plain closure (synchronous, no limit) and nothing else: a
///   ``SoleHandler`` (retained, tagged with bit 0), with no slot list;
/// - the slot list (retained; bit 0 clear), which every other subscription
///   needs. The second subscription moves a sole handler into a new list
///   (``grow(_:handler:)``); a list stays until the owner's `deinit`.
///
/// Writers change the word with atomic exchanges only: nil to a handler or
/// a list (compare-exchange from nil, the first to publish wins), and a
/// handler out of it only under that handler's lock (cancel,
/// ``unsubscribeAll()``, the move, `deinit`). Senders load it with acquire
/// inside a read section, so a handler taken out is released only after a
/// grace period.
@usableFromInline
package struct EventObservers<Value> {
    @usableFromInline
    package typealias Slots = SlotList<EventSubscriber<Void, Value>>

    @usableFromInline
    package typealias Sole = SoleHandler<Value>

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

    /// The word's address, as a sole handler records it.
    @usableFromInline
    package var wordAddress: UnsafeMutableRawPointer { UnsafeMutableRawPointer(word.word) }

    /// Removes every handler and releases the list and the trigger counter's
    /// block. For the owner's deinit, when no send of the owner runs.
    package func release() {
        while true {
            switch current {
            case .none:
                break
            case .list(let slots):
                // Tokens may keep the list itself alive; the handlers go now.
                slots._withUnsafeGuaranteedRef { _ = $0.removeAll() }
                slots.release()
            case .sole(let sole, _):
                // Removed or moved meanwhile by a token: look again.
                guard case .attached = sole.lockIfAttached() else { continue }
                // No send of the owner runs once its deinit has begun, so no
                // reader can be calling the handler: its closure goes at once
                // (its token may keep the object).
                Self.removeLocked(sole, from: word, readersDone: true)
            }
            break
        }
        triggers.deallocateContendedCounts()
    }

    /// What the word holds, for writers.
    package enum Current {
        case none
        /// The list, unretained (the owner keeps it).
        case list(Unmanaged<Slots>)
        /// The sole handler, retained by this value (so that a concurrent
        /// removal cannot free it before its lock is taken), and its
        /// closure, copied while the handler was in the word (a removed
        /// one drops its closure after a grace period).
        case sole(Sole, handler: (Value) -> Void)
    }

    /// What the word holds now. A handler is retained inside a read section
    /// that loaded it: a removal releases the word's reference only after
    /// that section, so the object is alive when retained.
    package var current: Current {
        guard let loaded = word.load(ordering: .acquiring) else { return .none }
        if !Self.isTagged(loaded) { return .list(Unmanaged.fromOpaque(loaded)) }
        return withReadSection {
            guard let loaded = word.load(ordering: .acquiring) else { return .none }
            if !Self.isTagged(loaded) { return .list(Unmanaged.fromOpaque(loaded)) }
            let sole = Self.sole(fromTagged: loaded).takeUnretainedValue()
            return .sole(sole, handler: sole.closure.handler)
        }
    }

    /// Calls `body` with the slot list borrowed (no retain), or returns nil
    /// when there is no list (nobody subscribed, or one sole handler).
    @inlinable @inline(__always)
    package func withExistingSlots<Result>(_ body: (Slots) -> Result) -> Result? {
        // Acquire: pairs with the release that published the list, so its
        // fields are visible. A plain move on x86.
        guard let loaded = word.load(ordering: .acquiring), !Self.isTagged(loaded) else { return nil }
        return Unmanaged<Slots>.fromOpaque(loaded)._withUnsafeGuaranteedRef(body)
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
        if let loaded = word.load(ordering: .acquiring), !Self.isTagged(loaded) {
            return Unmanaged.fromOpaque(loaded)
        }
        while true {
            switch current {
            case .list(let slots):
                return slots
            case .sole(let sole, let handler):
                if let grown = grow(sole, handler: handler) { return grown }
            case .none:
                let made = Unmanaged.passRetained(Slots())
                // Acquire and release: the list is initialized before a
                // sender sees it; a loser looks again at what won (a list or
                // a sole handler).
                guard LazyObjectWord<Slots>(word).publish(made) != nil else { return made }
                made.release()
            }
        }
    }

    /// Moves `sole` into a new slot list published in its place, as a cell
    /// of the same closure (`handler`, copied while it was in the word) whose subscription the handler's token then
    /// forwards to. Nil when the handler left the word before its lock was
    /// taken (the caller looks again).
    ///
    /// The list is made before the lock is taken: adding to it may release
    /// retired objects, whose deinit may cancel this very handler's token,
    /// which waits for the lock. Under the lock nothing runs but the
    /// exchange and the token's allocation.
    ///
    /// A send that loaded the handler calls it, one that loads the list
    /// calls the cell: each send calls the closure once. The exchange
    /// releases the list's contents to senders, which load the word with
    /// acquire.
    package func grow(_ sole: Sole, handler: @escaping (Value) -> Void) -> Unmanaged<Slots>? {
        let slots = Slots()
        let handle = slots.addHandler(handler)
        guard case .attached = sole.lockIfAttached() else {
            _ = slots.removeAll()
            return nil
        }
        let made = Unmanaged.passRetained(slots)
        let taken = word.exchange(made.toOpaque(), ordering: .acquiringAndReleasing)
        sole.move(into: Subscription(list: slots, handle: handle))
        Sole.retire(Self.sole(fromTagged: taken!))
        return made
    }

    // MARK: The word's encoding

    /// The word's value for `handler`: its address with bit 0 set (a slot
    /// list's address has bit 0 clear).
    @inlinable @inline(__always)
    package static func tagged(_ handler: Unmanaged<Sole>) -> UnsafeMutableRawPointer {
        handler.toOpaque() + 1
    }

    /// Whether a value of the word is a sole handler's (tagged) rather than
    /// a slot list's.
    @inlinable @inline(__always)
    package static func isTagged(_ loaded: UnsafeMutableRawPointer) -> Bool {
        UInt(bitPattern: loaded) & 1 != 0
    }

    /// The handler a tagged value of the word names, unretained (the word
    /// keeps it).
    @inlinable @inline(__always)
    package static func sole(fromTagged loaded: UnsafeMutableRawPointer) -> Unmanaged<Sole> {
        Unmanaged.fromOpaque(loaded - 1)
    }

    /// Takes `sole` out of `word`, which holds it: the one removal of a sole
    /// handler (a cancel of its token, ``removeAll(where:)``, the owner's
    /// ``release()``). The caller holds the handler's lock
    /// (``SoleHandler/lockIfAttached()`` returned `.attached`), which this
    /// ends as removed. `readersDone`: no send of the owner can be calling
    /// the handler (its `deinit`), so its closure and the word's reference
    /// go now; otherwise after a grace period.
    package static func removeLocked(_ sole: Sole, from word: AtomicWord<UnsafeMutableRawPointer?>, readersDone: Bool) {
        let taken = word.exchange(nil, ordering: .acquiringAndReleasing)
        precondition(
            taken == tagged(Unmanaged.passUnretained(sole)),
            "ObserverSwift: a sole handler's source word changed under its lock")
        sole.detach()
        if readersDone {
            sole.dropHandler()
            Unmanaged.passUnretained(sole).release()
        } else {
            Sole.retire(Unmanaged.passUnretained(sole))
        }
    }

    /// Takes `sole` out of the observers word at `address` (its source's,
    /// as the handler records it), holding its lock: see
    /// ``removeLocked(_:from:readersDone:)``.
    package static func removeLocked(_ sole: Sole, fromWordAt address: UnsafeMutableRawPointer) {
        let word = AtomicWord<UnsafeMutableRawPointer?>(
            at: address.assumingMemoryBound(to: AtomicWordStorage<UnsafeMutableRawPointer?>.self))
        removeLocked(sole, from: word, readersDone: false)
    }

    // MARK: Sending

    /// Counts a trigger and calls every subscription that existed when the
    /// send started, inside a read section of its own entered on `reader`
    /// (the calling thread's).
    @inlinable @inline(__always)
    package func send(_ value: Value, as reader: SectionReader) {
        triggers.increment(by: reader)
        guard let loaded = word.load(ordering: .acquiring) else { return }
        if Self.isTagged(loaded) { return sendToSole(value, as: reader) }
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
        if Self.isTagged(loaded) {
            Self.sole(fromTagged: loaded)._withUnsafeGuaranteedRef { $0.closure.call(value) }
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
            if Self.isTagged(loaded) {
                // One plain closure and no list: call it for as long as the
                // word still holds it, which is what a send of each value
                // would call.
                Self.sole(fromTagged: loaded)._withUnsafeGuaranteedRef { sole in
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
        let sole = Sole(handler, attachedTo: wordAddress)
        let tagged = Self.tagged(Unmanaged.passRetained(sole))
        // Release: the handler is initialized before a sender sees it.
        guard word.compareExchange(expected: nil, desired: tagged, ordering: .acquiringAndReleasing).exchanged else {
            Unmanaged.passUnretained(sole).release()
            return nil
        }
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
        while true {
            switch current {
            case .none:
                return 0
            case .list(let slots):
                return slots._withUnsafeGuaranteedRef { $0.removeAll(where: predicate) }
            case .sole(let sole, _):
                guard predicate(HandlerCell.asSubscriber) else { return 0 }
                // Removed or moved meanwhile: look again.
                guard case .attached = sole.lockIfAttached() else { continue }
                Self.removeLocked(sole, from: word, readersDone: false)
                return 1
            }
        }
    }

    /// Subscriptions that can still deliver. Also frees slots of dead targets.
    package var subscribersCount: Int {
        guard let loaded = word.load(ordering: .acquiring) else { return 0 }
        if Self.isTagged(loaded) { return 1 }
        return Unmanaged<Slots>.fromOpaque(loaded)._withUnsafeGuaranteedRef { $0.liveCount }
    }
}
