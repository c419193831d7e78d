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

    /// First stored property: `waiters`' word (see `AtomicWord`).
    @usableFromInline
    var waitersWord = AtomicWordStorage<Int>(0)

    /// The owner's thread identifier (its `oc_reader_current()` pointer: a
    /// thread's reader is unique among running threads and never null), or
    /// 0. C atomics only.
    @usableFromInline
    let word: UnsafeMutablePointer<UInt>

    /// Setters waiting for the turn (in `acquire(by:)`'s slow path).
    @usableFromInline
    var waiters: AtomicWord<Int> { AtomicWords.first(self) }

    let condition = NSCondition()

    @usableFromInline
    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    deinit {
        word.deallocate()
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
        condition.lock()
        oc_claim_release(word)
        condition.signal()
        condition.unlock()
    }
}
