/// The writer lock of an ``ObserverRegistry``: a ``HandOffLock`` made
/// recursive (releasing an observer or a box may run a `deinit` that calls
/// back into the registry on the same thread), and cheap when uncontended:
/// one compare-exchange to take it, a plain store to give it back. A lock
/// that is never contended (most of them: one per registry and per key of
/// a keyed registry) is one small allocation, or none: an owner that keeps
/// other writer state in an object of its own derives that object from this
/// class (``ObserverRegistry``'s writer state), so lock and state are one
/// allocation. Subclasses declare no stored property before these words
/// (a subclass's properties follow its superclass's).
class RegistryLock: @unchecked Sendable {
    // @unchecked: the words are atomic; `depth` is touched only by the
    // thread that holds the lock (ordered by the claim's barrier and its
    // release); the condition is thread-safe.

    /// First stored property: the words of the owner and of the waiting
    /// room (see `AtomicWord`).
    var words = Words()

    struct Words {
        var owner = AtomicWordStorage<UInt>(0)
        var room = HandOffLock.WaitingRoom.Words()
        static var ownerOffset: Int { 0 }
        static var roomOffset: Int { MemoryLayout<UInt>.stride }
    }

    private var handOff: HandOffLock { HandOffLock(owner: AtomicWords.word(self, at: Words.ownerOffset)) }
    private var room: HandOffLock.WaitingRoom { HandOffLock.WaitingRoom(in: self, at: Words.roomOffset) }

    /// Nesting depth of the holder's `lock()` calls.
    @exclusivity(unchecked)
    private var depth = 0

    /// Whether a thread has needed the condition (for tests).
    final var hasCondition: Bool { room.hasCondition }

    deinit {
        room.release()
    }

    @inline(__always)
    final func lock() {
        let me = HandOffLock.currentThread
        let handOff = handOff
        // Only this thread stores its own identifier there.
        if handOff.isHeld(by: me) {
            depth += 1
            return
        }
        if room.admitsFastClaim && handOff.tryClaim(by: me) {
            depth = 1
            return
        }
        lockSlowly(me)
    }

    private final func lockSlowly(_ me: UInt) {
        handOff.wait(by: me, in: room)
        depth = 1
    }

    @inline(__always)
    final func unlock() {
        depth -= 1
        if depth > 0 { return }
        // Releasing: everything done under the lock happens before the next
        // holder's claim.
        if room.admitsFastClaim {
            handOff.releaseUncontended()
        } else {
            handOff.handOver(in: room)
        }
    }
}
