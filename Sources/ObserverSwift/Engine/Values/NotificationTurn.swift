/// The right to run a notification round of one ``ObservableValue``.
///
/// Setters on different threads take turns (the turn is held across store
/// and delivery), so every observer sees the values in the order they were
/// set. A handler that sets the same value again runs on the thread that
/// already holds the turn: waiting for it would deadlock, so the value knows
/// its turn's owner and queues such a set behind the round in progress.
///
/// The turn is a ``HandOffLock`` whose claim an uncontended set fuses with
/// its read-section entry (`oc_read_begin_claiming`). Its waiting room is
/// a ``NotificationTurnRoom``: the value's extras (made by the first setter
/// that has to wait) are one.
///
/// A view of two words the value keeps (see `ObservableValueWords`): the
/// claim word and the extras' reference. It holds nothing itself.
@usableFromInline
struct NotificationTurn {
    /// The owner's thread identifier (see ``HandOffLock/owner``), or 0.
    @usableFromInline
    let word: UnsafeMutablePointer<UInt>

    /// The value's extras (retained by the value), or nil before their first use.
    @usableFromInline
    let extras: LazyObjectWord<NotificationTurnRoom>

    @inlinable @inline(__always)
    init(word: AtomicWord<UInt>, extrasWord: AtomicWord<UnsafeMutableRawPointer?>) {
        self.word = word.word
        self.extras = LazyObjectWord(extrasWord)
    }

    @inlinable @inline(__always)
    var handOff: HandOffLock { HandOffLock(owner: word) }

    /// Whether `thread` holds the turn (a set from inside a handler).
    @inlinable
    func isHeld(by thread: UInt) -> Bool {
        handOff.isHeld(by: thread)
    }

    /// Whether a new setter may try the fast claim: nobody waits (see
    /// ``HandOffLock/WaitingRoom/admitsFastClaim``).
    @inlinable
    var admitsFastClaim: Bool {
        // Acquire (in `withExisting`): the extras' words, initialized before
        // their publication, are read through the reference loaded there. A
        // plain move on x86.
        extras.withExisting { $0.room.admitsFastClaim } ?? true
    }

    /// Claims the turn if it is free and nobody waits; true when claimed.
    /// `thread` must not hold it already.
    @inlinable
    func tryClaim(by thread: UInt) -> Bool {
        admitsFastClaim && handOff.tryClaim(by: thread)
    }

    /// Waits for the turn in the waiting room of `extras` (the value's
    /// extras, made now if needed); `thread` must not hold it already and
    /// must not be inside a read section.
    @usableFromInline
    func wait(by thread: UInt, in extras: NotificationTurnRoom) {
        handOff.wait(by: thread, in: extras.room)
    }

    /// Gives the turn up; wakes a waiting setter if there is one.
    @inlinable
    func release() {
        if admitsFastClaim {
            handOff.releaseUncontended()
        } else {
            releaseToWaiter()
        }
    }

    /// Gives the turn up when nothing has made the value's extras, so
    /// nobody can wait for it.
    @inlinable @inline(__always)
    static func releaseWithoutExtras(_ word: AtomicWord<UInt>) {
        HandOffLock(owner: word).releaseUncontended()
    }

    @usableFromInline
    func releaseToWaiter() {
        // Someone waits, so the extras exist.
        extras.withExisting { handOff.handOver(in: $0.room) }
    }
}

/// What a ``NotificationTurn``'s setters wait in: the turn's waiting room,
/// and one word for an object its subclass makes on first use (a value's
/// extras keep the watcher of its accesses there). The turn finds the room
/// through ``room``, whatever the subclass adds.
@usableFromInline
class NotificationTurnRoom: @unchecked Sendable {
    // @unchecked: `words` are only accessed atomically; the room's condition
    // is thread-safe.

    /// First stored property (see `AtomicWord`): the room's words and the
    /// attached object's reference.
    @usableFromInline
    var words = Words()

    @usableFromInline
    struct Words {
        @usableFromInline var room = HandOffLock.WaitingRoom.Words()
        @usableFromInline var attached = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
        @usableFromInline init() {}

        @inlinable static var roomOffset: Int { 0 }
        @inlinable static var attachedOffset: Int { MemoryLayout<HandOffLock.WaitingRoom.Words>.stride }
    }

    /// The setters waiting for the turn (in ``NotificationTurn/wait(by:in:)``).
    @usableFromInline
    final var room: HandOffLock.WaitingRoom { HandOffLock.WaitingRoom(in: self, at: Words.roomOffset) }

    /// The attached object (retained), nil until the subclass makes it;
    /// never cleared. Every use must name the same `Object`.
    @inlinable @inline(__always)
    final func attached<Object: AnyObject>(as _: Object.Type) -> LazyObjectWord<Object> {
        LazyObjectWord(AtomicWords.word(self, at: Words.attachedOffset))
    }

    @usableFromInline
    init() {}

    deinit {
        room.release()
        attached(as: AnyObject.self).release()
    }
}
