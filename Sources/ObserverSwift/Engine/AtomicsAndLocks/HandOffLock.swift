import CObserverCore
import Foundation

/// The engine's one hand-off lock: a claim word (`oc_claim.h`: one
/// compare-exchange to take it, a plain store to give it back) and a
/// waiting room. Threads that find the word taken count themselves in the
/// room's `waiters` and sleep on its condition; while any waits, new
/// lockers queue behind them instead of barging in (``admitsFastClaim``),
/// and the holder hands over with a signal. The condition is made by the
/// first thread that waits, so a lock that is never contended costs its
/// words and nothing else.
///
/// Used by ``RegistryLock`` (a registry's writers, recursive on top) and by
/// ``NotificationTurn`` (an `ObservableValue`'s setters, whose claim a set
/// fuses with its read-section entry). A view of words its owner keeps (see
/// `AtomicWord`); it holds nothing itself.
@usableFromInline
struct HandOffLock {
    /// The holder's identifier (its `oc_reader_current()` pointer: unique
    /// among running threads and never null), or 0. C atomics only, on a
    /// word Swift never reads or writes itself (`AtomicWord`'s invariant).
    @usableFromInline
    let owner: UnsafeMutablePointer<UInt>

    @inlinable @inline(__always)
    init(owner: AtomicWord<UInt>) {
        self.owner = owner.word
    }

    /// The lock whose claim word is at `owner` (see ``owner``).
    @inlinable @inline(__always)
    init(owner: UnsafeMutablePointer<UInt>) {
        self.owner = owner
    }

    /// The calling thread's identifier, as stored in `owner`.
    @inlinable @inline(__always)
    static var currentThread: UInt { UInt(bitPattern: oc_reader_current()) }

    /// Whether `thread` holds the lock.
    @inlinable @inline(__always)
    func isHeld(by thread: UInt) -> Bool {
        oc_claim_load(owner) == thread
    }

    /// Takes the lock if it is free; true when taken. Sequentially
    /// consistent (a full barrier), so it also acquires what the previous
    /// holder did.
    @inlinable @inline(__always)
    func tryClaim(by thread: UInt) -> Bool {
        oc_claim_try(owner, thread)
    }

    /// Gives the lock up with nobody waiting (release).
    @inlinable @inline(__always)
    func releaseUncontended() {
        oc_claim_release(owner)
    }

    /// Waits in `room` until the lock is taken for `thread`, which must not
    /// hold it already and must not be inside a read section.
    @usableFromInline
    func wait(by thread: UInt, in room: WaitingRoom) {
        room.waiters.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let condition = room.condition
        condition.lock()
        while !oc_claim_try(owner, thread) {
            // Bounded: a release that read `waiters` before our increment
            // does not signal; we then find the lock free on the next try.
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.001))
        }
        condition.unlock()
        room.waiters.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Gives the lock up to a thread waiting in `room`.
    @usableFromInline
    func handOver(in room: WaitingRoom) {
        let condition = room.condition
        condition.lock()
        oc_claim_release(owner)
        condition.signal()
        condition.unlock()
    }

    /// The threads waiting for a ``HandOffLock``: a view of the `Words` an
    /// object keeps among its atomic words (see `AtomicWord`).
    @usableFromInline
    struct WaitingRoom {
        /// The room's words: how many threads wait, and the condition they
        /// sleep on (retained), nil until the first of them needs it.
        @usableFromInline
        struct Words {
            @usableFromInline var waiters = AtomicWordStorage<Int>(0)
            @usableFromInline var condition = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
            @usableFromInline init() {}

            @inlinable static var waitersOffset: Int { 0 }
            @inlinable static var conditionOffset: Int { MemoryLayout<UInt>.stride }
        }

        @usableFromInline
        let waiters: AtomicWord<Int>

        @usableFromInline
        let conditionWord: AtomicWord<UnsafeMutableRawPointer?>

        /// The room whose words start `offset` bytes into `object`'s words.
        @inlinable @inline(__always)
        init(in object: AnyObject, at offset: Int) {
            waiters = AtomicWords.word(object, at: offset + Words.waitersOffset)
            conditionWord = AtomicWords.word(object, at: offset + Words.conditionOffset)
        }

        /// Whether a new locker may try the fast claim: nobody waits.
        /// Relaxed: a stale answer only lets one locker barge in once, or
        /// sends it to the slow path, which is correct either way.
        @inlinable @inline(__always)
        var admitsFastClaim: Bool {
            waiters.load(ordering: .relaxed) == 0
        }

        /// What waiting threads sleep on, made by the first that needs it.
        var condition: NSCondition {
            LazyObjectWord<NSCondition>(conditionWord).made { NSCondition() }.takeUnretainedValue()
        }

        /// Whether a thread has needed the condition (for tests).
        var hasCondition: Bool { conditionWord.load(ordering: .acquiring) != nil }

        /// Releases the condition: for the owner's `deinit`.
        func release() {
            LazyObjectWord<NSCondition>(conditionWord).release()
        }
    }
}
