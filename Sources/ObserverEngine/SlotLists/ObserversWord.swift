/// A source's observers word, read and written as one protocol: the word an
/// `Event` or an `ObservableValue` keeps (``EventObservers``, whose lists
/// are a slot list) and the one a `KeyedEvent` keeps
/// (``KeyedEventObservers``, whose lists are keyed). A view that holds
/// nothing itself: copy it freely; it is valid while the source lives.
///
/// The word has three forms:
/// - nil: nobody subscribed;
/// - one plain closure (synchronous, no limit) and nothing else: a `Sole`
///   handler (retained by the word, its address tagged with bit 0), with no
///   lists;
/// - the source's `Lists` (retained by the word; bit 0 clear), which every
///   other subscription needs. The second subscription moves a sole
///   handler into new lists (``replace(_:with:subscription:)``); lists,
///   once published, stay until the source's `deinit`.
///
/// Writers change the word with atomic operations only: nil to a handler
/// or to lists by a compare-exchange from nil (the first to publish wins),
/// and a handler out of it only under that handler's lock
/// (``SoleHandler/lockIfAttached()``: a cancel, a removal of all
/// subscriptions, the move into lists, the source's `deinit`). Senders load
/// the word with acquire; a sole handler is used only inside a read section
/// that loaded it, so one taken out is released only after a grace period.
@frozen @usableFromInline
package struct ObserversWord<Value, Sole: SoleHandler<Value>, Lists: AnyObject> {
    /// The word itself.
    @usableFromInline
    package let word: AtomicWord<UnsafeMutableRawPointer?>

    @inlinable @inline(__always)
    package init(_ word: AtomicWord<UnsafeMutableRawPointer?>) {
        self.word = word
    }

    /// The word's address, as a sole handler records it.
    @inlinable
    package var address: UnsafeMutableRawPointer { UnsafeMutableRawPointer(word.word) }

    // MARK: The encoding

    /// The word's value for `handler`: its address with bit 0 set (the
    /// lists' address has bit 0 clear: objects are 16-byte aligned).
    @inlinable @inline(__always)
    package static func tagged(_ handler: Unmanaged<Sole>) -> UnsafeMutableRawPointer {
        handler.toOpaque() + 1
    }

    /// Whether a value of the word names a sole handler rather than lists.
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

    // MARK: Reading

    /// The lists, unretained (the source keeps them), or nil when the word
    /// holds none (nobody subscribed, or one sole handler). Acquire: pairs
    /// with the release that published them, so their fields are visible
    /// (a plain move on x86).
    @inlinable @inline(__always)
    package var existingLists: Unmanaged<Lists>? {
        guard let loaded = word.load(ordering: .acquiring), !Self.isTagged(loaded) else { return nil }
        return Unmanaged.fromOpaque(loaded)
    }

    /// What the word holds, for writers.
    package enum Contents<Extra> {
        case none
        /// The lists, unretained (the source keeps them).
        case lists(Unmanaged<Lists>)
        /// The sole handler, retained by this value (so that a concurrent
        /// removal cannot free it before its lock is taken), its closure and
        /// what else the caller copied of it (`Extra`), copied while it was
        /// in the word (a removed handler drops them after a grace period).
        /// The closure has its own type, not a generic one: a closure
        /// passed through a generic value would come back wrapped in
        /// reabstraction thunks, which every later delivery would run.
        case sole(Sole, handler: (Value) -> Void, Extra)
    }

    /// What the word holds now, with a sole handler's closure and `copy`'s
    /// copy of its other fields. The handler is retained, and both are
    /// copied, inside a read section that loaded it: a removal releases the
    /// word's reference, and drops the fields, only after that section, so
    /// both are alive.
    package func contents<Extra>(copying copy: (Sole) -> Extra) -> Contents<Extra> {
        guard let loaded = word.load(ordering: .acquiring) else { return .none }
        if !Self.isTagged(loaded) { return .lists(Unmanaged.fromOpaque(loaded)) }
        return withReadSection {
            guard let loaded = word.load(ordering: .acquiring) else { return .none }
            if !Self.isTagged(loaded) { return .lists(Unmanaged.fromOpaque(loaded)) }
            let sole = Self.sole(fromTagged: loaded).takeUnretainedValue()
            return .sole(sole, handler: sole.closure.handler, copy(sole))
        }
    }

    // MARK: Publishing

    /// Publishes `sole`, which the caller made attached to this word, when
    /// the word is still nil: true when it did (the word then owns the +1
    /// reference this takes); false, with nothing done, when another
    /// subscription came first. Release: the handler is initialized before
    /// a sender sees it.
    package func publish(_ sole: Sole) -> Bool {
        let retained = Unmanaged.passRetained(sole)
        guard
            word.compareExchange(expected: nil, desired: Self.tagged(retained), ordering: .acquiringAndReleasing)
                .exchanged
        else {
            retained.release()
            return false
        }
        return true
    }

    /// The lists, made now if the word holds none: `make` makes empty ones
    /// for a nil word; a sole handler is moved by `move` (given its closure
    /// and what `copy` copied of it), which returns nil when the handler
    /// left the word before its lock was taken. Writers only.
    package func madeLists<Extra>(
        make: () -> Lists, copying copy: (Sole) -> Extra,
        moving move: (Sole, _ handler: @escaping (Value) -> Void, Extra) -> Unmanaged<Lists>?
    ) -> Unmanaged<Lists> {
        while true {
            switch contents(copying: copy) {
            case .lists(let lists):
                return lists
            case .sole(let sole, let handler, let extra):
                if let grown = move(sole, handler, extra) { return grown }
            case .none:
                let made = Unmanaged.passRetained(make())
                // Acquire and release: the lists are initialized before a
                // sender sees them; a loser looks again at what won (lists
                // or a sole handler).
                guard LazyObjectWord<Lists>(word).publish(made) != nil else { return made }
                made.release()
            }
        }
    }

    /// Moves `sole` out of the word and publishes `lists` in its place;
    /// `subscription` (made under the handler's lock) is what the handler's
    /// token then forwards to. The caller made `lists` already holding the
    /// handler's closure: adding may release retired objects, whose
    /// `deinit` may cancel this very handler's token, which waits for the
    /// lock, so under the lock nothing runs but the exchange and
    /// `subscription`. Nil, with nothing done, when the handler left the
    /// word before its lock was taken (the caller undoes `lists` and looks
    /// again).
    ///
    /// A send that loaded the handler calls it, one that loads the lists
    /// calls its copy there: each send calls the closure once. The exchange
    /// releases the lists' contents to senders, which load the word with
    /// acquire.
    package func replace(_ sole: Sole, with lists: Lists, subscription: () -> Subscription) -> Unmanaged<Lists>? {
        guard case .attached = sole.lockIfAttached() else { return nil }
        let made = Unmanaged.passRetained(lists)
        exchange(sole, for: made.toOpaque())
        sole.move(into: subscription())
        SoleHandler<Value>.retire(Unmanaged.passUnretained(sole))
        return made
    }

    /// Puts `replacement` (the lists, or nil) in the word in place of
    /// `sole`, which it holds: the caller holds the handler's lock, under
    /// which the word does not change, and stops the process if it did.
    /// Acquire and release: a sender that loads `replacement` sees what was
    /// written to it before.
    @inlinable @inline(__always)
    package func exchange(_ sole: Sole, for replacement: UnsafeMutableRawPointer?) {
        let taken = word.exchange(replacement, ordering: .acquiringAndReleasing)
        precondition(
            taken == Self.tagged(Unmanaged.passUnretained(sole)),
            "ObserverSwift: a sole handler's source word changed under its lock")
    }

    // MARK: Removing

    /// Takes `sole` out of the word if it is still there: true when it
    /// did; false when it was removed or moved meanwhile (the caller looks
    /// again). `readersDone`: no send of the source can be calling the
    /// handler (its `deinit`).
    package func remove(_ sole: Sole, readersDone: Bool) -> Bool {
        guard case .attached = sole.lockIfAttached() else { return false }
        sole.removeLocked(from: word, readersDone: readersDone)
        return true
    }

    /// Removes a sole handler (if `removesSole` says so for what `copy`
    /// copied of it) or, from the lists, what `removeFromLists` removes;
    /// returns how many subscriptions went.
    package func removeAll<Extra>(
        copying copy: (Sole) -> Extra, removesSole: (Extra) -> Bool, removeFromLists: (Lists) -> Int
    ) -> Int {
        while true {
            switch contents(copying: copy) {
            case .none:
                return 0
            case .lists(let lists):
                return lists._withUnsafeGuaranteedRef(removeFromLists)
            case .sole(let sole, _, let extra):
                guard removesSole(extra) else { return 0 }
                if remove(sole, readersDone: false) { return 1 }
            }
        }
    }

    /// For the source's `deinit`, when no send of it runs: removes a sole
    /// handler (its closure goes at once; a token may keep the object), or
    /// empties the lists with `empty` and gives back the word's reference
    /// (tokens may keep the lists themselves).
    package func release(emptying empty: (Lists) -> Void) {
        while true {
            switch contents(copying: { _ in () }) {
            case .none:
                return
            case .lists(let lists):
                lists._withUnsafeGuaranteedRef(empty)
                lists.release()
                return
            case .sole(let sole, _, _):
                // Removed or moved meanwhile by its token: look again.
                if remove(sole, readersDone: true) { return }
            }
        }
    }
}
