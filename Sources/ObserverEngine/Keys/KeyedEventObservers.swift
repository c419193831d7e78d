/// The observers of a `KeyedEvent`: a view of the one word the event keeps
/// as its first stored property, holding nothing itself (copy it freely; it
/// is valid while the event lives).
///
/// The word has three forms, as an ``EventObservers`` word has:
/// - nil: nobody subscribed; the event pays for its own 32 bytes alone;
/// - one plain closure (synchronous, no limit) under one key and nothing
///   else: a ``KeyedSoleHandler`` (retained, tagged with bit 0), with no
///   keymap;
/// - the keyed lists (retained; bit 0 clear), which every other
///   subscription needs. The second subscription moves a sole handler into
///   new lists (``grow(_:handler:key:)``), under its key; the lists stay until
///   the event's `deinit`.
///
/// Writers change the word with atomic exchanges only: nil to a handler or
/// the lists (compare-exchange from nil, the first to publish wins), and a
/// handler out of it only under that handler's lock (its token's cancel,
/// ``removeAll()``, the move, ``release()``). Senders load the word with
/// acquire; a sole handler is used only inside a read section that loaded
/// it, so one taken out is released only after a grace period.
@frozen @usableFromInline
package struct KeyedEventObservers<Key: Hashable, Value> {
    @usableFromInline
    package typealias Lists = KeyedSlotLists<EventSubscriber<Key, Value>>

    @usableFromInline
    package typealias Sole = KeyedSoleHandler<Key, Value>

    /// The event word (see the type's documentation).
    @usableFromInline
    package let word: AtomicWord<UnsafeMutableRawPointer?>

    /// The observers whose word `owner` keeps as its first stored property,
    /// a ``LazyObjectStorage``.
    @inlinable @inline(__always)
    package init(keptFirstBy owner: AnyObject) {
        word = AtomicWords.first(owner)
    }

    /// The word's address, as a sole handler records it.
    @usableFromInline
    package var wordAddress: UnsafeMutableRawPointer { UnsafeMutableRawPointer(word.word) }

    // MARK: The word's encoding

    /// Whether a value of the word is a sole handler's (tagged) rather than
    /// the lists'.
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

    /// The word's value for `handler`: its address with bit 0 set, as
    /// ``EventObservers`` tags its handlers (the removal of a sole handler,
    /// ``EventObservers/removeLocked(_:from:readersDone:)``, is theirs).
    @inlinable @inline(__always)
    package static func tagged(_ handler: Unmanaged<Sole>) -> UnsafeMutableRawPointer {
        handler.toOpaque() + 1
    }

    // MARK: Reading the word

    /// What the word holds, for writers.
    package enum Current {
        case none
        /// The lists, unretained (the event keeps them).
        case lists(Unmanaged<Lists>)
        /// The sole handler, retained by this value (so that a concurrent
        /// removal cannot free it before its lock is taken), and its
        /// closure and key, copied while the handler was in the word (a
        /// removed one drops both after a grace period).
        case sole(Sole, handler: (Value) -> Void, key: Key)
    }

    /// What the word holds now. A handler is retained inside a read section
    /// that loaded it: a removal releases the word's reference only after
    /// that section, so the object is alive when retained.
    package var current: Current {
        guard let loaded = word.load(ordering: .acquiring) else { return .none }
        if !Self.isTagged(loaded) { return .lists(Unmanaged.fromOpaque(loaded)) }
        return withReadSection {
            guard let loaded = word.load(ordering: .acquiring) else { return .none }
            if !Self.isTagged(loaded) { return .lists(Unmanaged.fromOpaque(loaded)) }
            let sole = Self.sole(fromTagged: loaded).takeUnretainedValue()
            return .sole(sole, handler: sole.closure.handler, key: sole.key)
        }
    }

    /// Calls `body` with the lists borrowed (no retain), or returns nil
    /// when there are none (nobody subscribed, or one sole handler).
    @inlinable @inline(__always)
    package func withExistingLists<Result>(_ body: (Lists) -> Result) -> Result? {
        // Acquire: pairs with the release that published the lists. Lists
        // stay in the word until the event's deinit.
        guard let loaded = word.load(ordering: .acquiring), !Self.isTagged(loaded) else { return nil }
        return Unmanaged<Lists>.fromOpaque(loaded)._withUnsafeGuaranteedRef(body)
    }

    /// The lists, made now if there are none (moving a sole handler into
    /// them). Writers only; unretained (the event keeps them). Inlinable,
    /// so that a subscribe specialized for its types finds existing lists
    /// without a generic metadata lookup.
    @inlinable
    package var madeLists: Unmanaged<Lists> {
        if let loaded = word.load(ordering: .acquiring), !Self.isTagged(loaded) {
            return Unmanaged.fromOpaque(loaded)
        }
        return makeLists()
    }

    /// ``madeLists`` when the word holds no lists: makes them, or moves the
    /// sole handler into them.
    @usableFromInline
    package func makeLists() -> Unmanaged<Lists> {
        while true {
            switch current {
            case .lists(let lists):
                return lists
            case .sole(let sole, let handler, let key):
                if let grown = grow(sole, handler: handler, key: key) { return grown }
            case .none:
                let made = Unmanaged.passRetained(Lists())
                // Acquire and release: the lists are initialized before a
                // sender sees them; a loser looks again at what won.
                guard LazyObjectWord<Lists>(word).publish(made) != nil else { return made }
                made.release()
            }
        }
    }

    /// Moves `sole` into new lists published in its place, as a cell of the
    /// same closure (`handler`) under its key (`key`; both copied while it
    /// was in the word), whose subscription the
    /// handler's token then forwards to. Nil when the handler left the word
    /// before its lock was taken (the caller looks again).
    ///
    /// The lists are made and filled before the lock is taken: adding may
    /// release retired objects, whose deinit may cancel this very handler's
    /// token, which waits for the lock. Under the lock nothing runs but the
    /// exchange and the token's allocation.
    ///
    /// A send that loaded the handler calls it, one that loads the lists
    /// calls the cell: each send calls the closure once. The exchange
    /// releases the lists' contents to senders, which load the word with
    /// acquire.
    package func grow(_ sole: Sole, handler: @escaping (Value) -> Void, key: Key) -> Unmanaged<Lists>? {
        let lists = Lists()
        let slot = lists.addHandler(handler, forKey: key)
        guard case .attached = sole.lockIfAttached() else {
            _ = lists.removeAll()
            return nil
        }
        let made = Unmanaged.passRetained(lists)
        let taken = word.exchange(made.toOpaque(), ordering: .acquiringAndReleasing)
        sole.move(into: lists.subscription(storedAt: slot))
        SoleHandler<Value>.retire(Unmanaged.fromOpaque(Self.sole(fromTagged: taken!).toOpaque()))
        return made
    }

    /// Removes every subscription and releases the lists: for the event's
    /// `deinit`, when no send of it runs.
    package func release() {
        while true {
            switch current {
            case .none:
                break
            case .lists(let lists):
                // Tokens hold the lists strongly: removing every subscription
                // here frees the handlers (and what they capture) now, and
                // leaves a token that outlives the event only an empty map.
                lists._withUnsafeGuaranteedRef { _ = $0.removeAll() }
                lists.release()
            case .sole(let sole, _, _):
                // Removed or moved meanwhile by its token: look again.
                guard case .attached = sole.lockIfAttached() else { continue }
                // No send runs once the deinit has begun: the closure goes now.
                EventObservers<Value>.removeLocked(sole, from: word, readersDone: true)
            }
            break
        }
    }

    // MARK: Sending

    /// Calls every subscription of `key` that existed when the send started.
    /// The lists' path goes through their C map alone (a Swift reference to
    /// the lists, even borrowed, costs a retain and a release per send).
    @inlinable @inline(__always)
    package func send(_ value: Value, forKey key: Key) {
        guard let loaded = word.load(ordering: .acquiring) else { return }
        if Self.isTagged(loaded) { return sendToSole(value, forKey: key) }
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
        if Self.isTagged(loaded) {
            Self.sole(fromTagged: loaded)._withUnsafeGuaranteedRef { sole in
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
        let sole = Sole(handler, key: key, attachedTo: wordAddress)
        let tagged = Self.tagged(Unmanaged.passRetained(sole))
        // Release: the handler (its key included) is initialized before a
        // sender sees it.
        guard word.compareExchange(expected: nil, desired: tagged, ordering: .acquiringAndReleasing).exchanged else {
            Unmanaged.passUnretained(sole).release()
            return nil
        }
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
        while true {
            switch current {
            case .none:
                return 0
            case .lists(let lists):
                return lists._withUnsafeGuaranteedRef { lists in
                    if let key { return lists.removeAll(forKey: key) }
                    return lists.removeAll()
                }
            case .sole(let sole, _, let soleKey):
                if let key, soleKey != key { return 0 }
                // Removed or moved meanwhile: look again.
                guard case .attached = sole.lockIfAttached() else { continue }
                EventObservers<Value>.removeLocked(sole, from: word, readersDone: false)
                return 1
            }
        }
    }
}
