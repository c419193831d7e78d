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
/// find it taken count themselves in their value's ``ValueExtras``
/// (`waiters`, made by the first setter that has to wait) and sleep on its
/// condition; while any waits, new setters queue behind them instead of
/// barging in.
///
/// A view of two words the value keeps (see `ObservableValueWords`): the
/// claim word and the extras' reference. It holds nothing itself.
@usableFromInline
struct NotificationTurn {
    /// The owner's thread identifier (its `oc_reader_current()` pointer: a
    /// thread's reader is unique among running threads and never null), or
    /// 0. C atomics only (`oc_claim.h`), on a word Swift never reads or
    /// writes itself (`AtomicWord`'s invariant).
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

    /// Whether `thread` holds the turn (a set from inside a handler).
    @inlinable
    func isHeld(by thread: UInt) -> Bool {
        oc_claim_load(word) == thread
    }

    /// Whether a new setter may try the fast claim: nobody waits. Relaxed
    /// count: a stale answer only lets one setter barge in once, or sends
    /// it to the slow path, which is correct either way.
    @inlinable
    var admitsFastClaim: Bool {
        // Acquire: the extras' words, initialized before their publication,
        // are read through the address loaded here. A plain move on x86.
        guard let extras = extrasWord.load(ordering: .acquiring) else { return true }
        return Unmanaged<ValueExtras>.fromOpaque(extras)._withUnsafeGuaranteedRef {
            $0.waiters.load(ordering: .relaxed) == 0
        }
    }

    /// Claims the turn if it is free and nobody waits; true when claimed.
    /// `thread` must not hold it already.
    @inlinable
    func tryClaim(by thread: UInt) -> Bool {
        admitsFastClaim && oc_claim_try(word, thread)
    }

    /// Waits for the turn, counted among `extras`' waiters; `thread` must
    /// not hold it already and must not be inside a read section.
    @usableFromInline
    func wait(by thread: UInt, in extras: ValueExtras) {
        extras.waiters.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let condition = extras.condition
        condition.lock()
        while !oc_claim_try(word, thread) {
            // Bounded: a release that read `waiters` before our increment
            // does not signal; we then find the turn free on the next try.
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.001))
        }
        condition.unlock()
        extras.waiters.wrappingSubtract(1, ordering: .relaxed)
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
        // Someone waits, so the extras exist.
        let extras = Unmanaged<ValueExtras>.fromOpaque(extrasWord.load(ordering: .acquiring)!)
        extras._withUnsafeGuaranteedRef { extras in
            let condition = extras.condition
            condition.lock()
            oc_claim_release(word)
            condition.signal()
            condition.unlock()
        }
    }
}
