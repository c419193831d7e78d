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
/// in the value's extras (made by the first setter that has to wait): an
/// object whose atomic words start with the room's words (see `AtomicWord`).
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
    let extrasWord: AtomicWord<UnsafeMutableRawPointer?>

    @inlinable @inline(__always)
    init(word: AtomicWord<UInt>, extrasWord: AtomicWord<UnsafeMutableRawPointer?>) {
        self.word = word.word
        self.extrasWord = extrasWord
    }

    @inlinable @inline(__always)
    var handOff: HandOffLock { HandOffLock(owner: word) }

    /// Whether `thread` holds the turn (a set from inside a handler).
    @inlinable
    func isHeld(by thread: UInt) -> Bool {
        handOff.isHeld(by: thread)
    }

    /// The waiting room of the extras at `address` (their words start with it).
    @inlinable @inline(__always)
    static func room(ofExtrasAt address: UnsafeMutableRawPointer) -> HandOffLock.WaitingRoom {
        Unmanaged<AnyObject>.fromOpaque(address)._withUnsafeGuaranteedRef { HandOffLock.WaitingRoom(in: $0, at: 0) }
    }

    /// Whether a new setter may try the fast claim: nobody waits (see
    /// ``HandOffLock/WaitingRoom/admitsFastClaim``).
    @inlinable
    var admitsFastClaim: Bool {
        // Acquire: the extras' words, initialized before their publication,
        // are read through the address loaded here. A plain move on x86.
        guard let extras = extrasWord.load(ordering: .acquiring) else { return true }
        return Self.room(ofExtrasAt: extras).admitsFastClaim
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
    func wait(by thread: UInt, in extras: AnyObject) {
        handOff.wait(by: thread, in: HandOffLock.WaitingRoom(in: extras, at: 0))
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
        handOff.handOver(in: Self.room(ofExtrasAt: extrasWord.load(ordering: .acquiring)!))
    }
}
