import CObserverCore
import Foundation

/// The right to run a notification round of one ``ObservableValue``.
///
/// Setters on different threads take turns (the turn is held across store
/// and delivery), so every observer sees the values in the order they were
/// set. A handler that sets the same value again runs on the thread that
/// already holds the turn: waiting for it would deadlock, so the value knows
/// its turn's owner and queues such a set behind the round in progress.
///
/// The turn is a word claimed with one compare-exchange (`oc_claim.h`), which
/// an uncontended set fuses with its read-section entry
/// (`oc_read_begin_claiming`); giving it back is a plain store. Setters that
/// find it taken count themselves in `waiters` and sleep on `condition`;
/// while any waits, new setters queue behind them instead of barging in.
@usableFromInline
final class NotificationTurn: @unchecked Sendable {
    // @unchecked: `word` is only touched through the core's atomic claim
    // functions; `waiters` is atomic; `condition` is thread-safe.

    /// First stored property: the words of `waiters`, the turn itself and
    /// the condition's reference (see `AtomicWord`). Nothing else: 40 bytes
    /// (a 48-byte heap block); the condition waiting setters sleep on is
    /// made by the first setter that has to wait.
    @usableFromInline
    var words = Words()

    @usableFromInline
    struct Words {
        @usableFromInline var waiters = AtomicWordStorage<Int>(0)
        @usableFromInline var turn = AtomicWordStorage<UInt>(0)
        @usableFromInline var condition = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
        @usableFromInline init() {}

        @inlinable static var waitersOffset: Int { 0 }
        @inlinable static var turnOffset: Int { MemoryLayout<UInt>.stride }
        @inlinable static var conditionOffset: Int { 2 * MemoryLayout<UInt>.stride }
    }

    /// The owner's thread identifier (its `oc_reader_current()` pointer: a
    /// thread's reader is unique among running threads and never null), or
    /// 0. C atomics only (`oc_claim.h`), on the word `Words.turn`, which
    /// Swift never reads or writes itself (`AtomicWord`'s invariant).
    @usableFromInline
    var word: UnsafeMutablePointer<UInt> {
        AtomicWords.word(self, at: Words.turnOffset, as: UInt.self).word
    }

    /// Setters waiting for the turn (in `acquire(by:)`'s slow path).
    @usableFromInline
    var waiters: AtomicWord<Int> { AtomicWords.word(self, at: Words.waitersOffset) }

    var conditionWord: AtomicWord<UnsafeMutableRawPointer?> { AtomicWords.word(self, at: Words.conditionOffset) }

    /// The condition waiting setters sleep on, made by the first of them.
    var condition: NSCondition {
        if let made = conditionWord.load(ordering: .acquiring) {
            return Unmanaged<NSCondition>.fromOpaque(made).takeUnretainedValue()
        }
        let made = Unmanaged.passRetained(NSCondition())
        // Release: the condition is initialized before another thread uses
        // it; acquire on failure, to use the one another setter made first.
        let published = conditionWord.compareExchange(
            expected: nil, desired: made.toOpaque(), ordering: .acquiringAndReleasing)
        if published.exchanged { return made.takeUnretainedValue() }
        made.release()
        return Unmanaged<NSCondition>.fromOpaque(published.original!).takeUnretainedValue()
    }

    @usableFromInline
    init() {}

    deinit {
        if let made = conditionWord.load(ordering: .acquiring) { Unmanaged<NSCondition>.fromOpaque(made).release() }
    }

    /// Whether `thread` holds the turn (a set from inside a handler).
    @inlinable
    func isHeld(by thread: UInt) -> Bool {
        oc_claim_load(word) == thread
    }

    /// Whether a new setter may try the fast claim: nobody waits. Relaxed: a
    /// stale answer only lets one setter barge in once, or sends it to the
    /// slow path, which is correct either way.
    @inlinable
    var admitsFastClaim: Bool {
        waiters.load(ordering: .relaxed) == 0
    }

    /// Waits for the turn; `thread` must not hold it already and must not be
    /// inside a read section.
    @usableFromInline
    func acquire(by thread: UInt) {
        if admitsFastClaim, oc_claim_try(word, thread) { return }
        waiters.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let condition = condition
        condition.lock()
        while !oc_claim_try(word, thread) {
            // Bounded: a release that read `waiters` before our increment
            // does not signal; we then find the turn free on the next try.
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.001))
        }
        condition.unlock()
        waiters.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Gives the turn up; wakes a waiting setter if there is one.
    @inlinable
    func release() {
        if admitsFastClaim {
            oc_claim_release(word)
        } else {
            releaseToWaiter()
        }
    }

    @usableFromInline
    func releaseToWaiter() {
        let condition = condition
        condition.lock()
        oc_claim_release(word)
        condition.signal()
        condition.unlock()
    }
}
