/// The observers of a `KeyedEvent`: a view of the one word the event keeps
/// as its first stored property, holding nothing itself (copy it freely; it
/// is valid while the event lives).
///
/// The word (``ObserversWord``) holds nil, a ``KeyedSoleHandler`` (one
/// plain closure, synchronous and with no limit, under one key, and
/// nothing else), or the keyed lists, which every other subscription
/// needs; the lists stay until the event's `deinit`.
@frozen @usableFromInline
package struct KeyedEventObservers<Key: Hashable, Value> {
    @usableFromInline
    package typealias Lists = KeyedSlotLists<EventSubscriber<Key, Value>>

    @usableFromInline
    package typealias Sole = KeyedSoleHandler<Key, Value>

    /// The event word's protocol, over this event's types.
    @usableFromInline
    package typealias Word = ObserversWord<Value, Sole, Lists>

    /// The event word (see the type's documentation).
    @usableFromInline
    package let word: AtomicWord<UnsafeMutableRawPointer?>

    /// The observers whose word `owner` keeps as its first stored property,
    /// a ``LazyObjectStorage``.
    @inlinable @inline(__always)
    package init(keptFirstBy owner: AnyObject) {
        word = AtomicWords.first(owner)
    }

    /// The event word, read and written through its protocol.
    @inlinable @inline(__always)
    package var observersWord: Word { Word(word) }

    /// What the word holds, for writers, with a sole handler's closure and
    /// key copied while it was in the word.
    package var current: Word.Contents<Key> {
        observersWord.contents { $0.key }
    }

    /// Calls `body` with the lists borrowed (no retain), or returns nil
    /// when there are none (nobody subscribed, or one sole handler).
    @inlinable @inline(__always)
    package func withExistingLists<Result>(_ body: (Lists) -> Result) -> Result? {
        observersWord.existingLists?._withUnsafeGuaranteedRef(body)
    }

    /// The lists, made now if there are none (moving a sole handler into
    /// them). Writers only; unretained (the event keeps them). Inlinable,
    /// so that a subscribe specialized for its types finds existing lists
    /// without a generic metadata lookup.
    @inlinable
    package var madeLists: Unmanaged<Lists> {
        if let lists = observersWord.existingLists { return lists }
        return makeLists()
    }

    /// ``madeLists`` when the word holds no lists: makes them, or moves the
    /// sole handler into them.
    @usableFromInline
    package func makeLists() -> Unmanaged<Lists> {
        observersWord.madeLists(
            make: { Lists() }, copying: { $0.key },
            moving: { sole, handler, key in grow(sole, handler: handler, key: key) })
    }

    /// Moves `sole` into new lists published in its place, as a cell of the
    /// same closure (`handler`) under its key (`key`; both copied while it
    /// was in the word), whose subscription the handler's token then
    /// forwards to (``ObserversWord/replace(_:with:subscription:)``). Nil
    /// when the handler left the word before its lock was taken (the
    /// caller looks again).
    package func grow(_ sole: Sole, handler: @escaping (Value) -> Void, key: Key) -> Unmanaged<Lists>? {
        let lists = Lists()
        let slot = lists.addHandler(handler, forKey: key)
        let made = observersWord.replace(sole, with: lists) { lists.subscription(storedAt: slot) }
        if let made { return made }
        _ = lists.removeAll()
        return nil
    }

    /// Removes every subscription and releases the lists: for the event's
    /// `deinit`, when no send of it runs. Tokens hold the lists strongly:
    /// emptying them here frees the handlers (and what they capture) now,
    /// and leaves a token that outlives the event only an empty map.
    package func release() {
        observersWord.release { _ = $0.removeAll() }
    }

    // MARK: Sending

    /// Calls every subscription of `key` that existed when the send started.
    /// The lists' path goes through their C map alone (a Swift reference to
    /// the lists, even borrowed, costs a retain and a release per send).
    @inlinable @inline(__always)
    package func send(_ value: Value, forKey key: Key) {
        guard let loaded = word.load(ordering: .acquiring) else { return }
        if Word.isTagged(loaded) { return sendToSole(value, forKey: key) }
        let map = Unmanaged<Lists>.fromOpaque(loaded)._withUnsafeGuaranteedRef { $0.pointer }
        Lists.send(map, forKey: key, value: value) { $0.receive(key, value) }
    }

    /// ``send(_:forKey:)`` once the word was seen holding a sole handler:
    /// out of line (but specialized where inlined), so that the lists' path
    /// keeps a small frame. The word is loaded again inside the section.
    @inlinable @inline(never)
    package func sendToSole(_ value: Value, forKey key: Key) {
        withReadSection {
            sendInSection(value, forKey: key, hash: AnyKeyedSlotLists.hash(key))
        }
    }

    /// Calls every subscription of `key` (whose hash is `hash`), inside the
    /// caller's read section: the word is loaded here, so a sole handler
    /// found is not released before the section ends. `hash` is computed
    /// on the lists' path only: a sole handler compares keys with `==`.
    @inlinable @inline(__always)
    package func sendInSection(_ value: Value, forKey key: Key, hash: @autoclosure () -> UInt64) {
        guard let loaded = word.load(ordering: .acquiring) else { return }
        if Word.isTagged(loaded) {
            Word.sole(fromTagged: loaded)._withUnsafeGuaranteedRef { sole in
                if sole.receives(key) { sole.closure.call(value) }
            }
            return
        }
        let map = Unmanaged<Lists>.fromOpaque(loaded)._withUnsafeGuaranteedRef { $0.pointer }
        Lists.sendInSection(map, forKey: key, hash: hash(), value: value) { $0.receive(key, value) }
    }

    // MARK: Subscribing

    /// Stores `handler`, a plain closure (synchronous, no limit), under
    /// `key` and returns its token: as the event's sole handler when nobody
    /// else is subscribed, else in a cell of the lists.
    @inlinable
    package func subscribe(_ handler: @escaping (Value) -> Void, forKey key: Key) -> Subscription {
        if word.load(ordering: .relaxed) == nil, let subscription = subscribeSole(handler, forKey: key) {
            return subscription
        }
        return madeLists._withUnsafeGuaranteedRef { $0.subscribe(handler, forKey: key) }
    }

    /// Publishes `handler` under `key` as the word's sole handler when the
    /// word is still nil; nil (nothing done) when another subscription came
    /// first.
    @usableFromInline
    package func subscribeSole(_ handler: @escaping (Value) -> Void, forKey key: Key) -> Subscription? {
        let sole = Sole(handler, key: key, attachedTo: observersWord.address)
        guard observersWord.publish(sole) else { return nil }
        // Counted until it leaves the word (`KeyedSoleHandler.didLeaveWord`).
        _ = ObserverCore.keysOfSoleHandlers.wrappingAdd(1, ordering: .relaxed)
        return Subscription(registration: sole)
    }

    // MARK: Removing and counting

    /// Removes every subscription; returns how many key registrations were
    /// stored.
    package func removeAll() -> Int {
        removeAll(forKey: nil)
    }

    /// Removes every subscription of `key` (of every key when nil); returns
    /// how many were removed. Subscriptions over several keys keep their
    /// other keys.
    package func removeAll(forKey key: Key?) -> Int {
        observersWord.removeAll(
            copying: { $0.key }, removesSole: { soleKey in key == nil || soleKey == key },
            removeFromLists: { lists in
                if let key { return lists.removeAll(forKey: key) }
                return lists.removeAll()
            })
    }
}
