import CObserverCore
import Foundation

/// The writer lock of an ``ObserverRegistry``: recursive (releasing an
/// observer or a box may run a `deinit` that calls back into the registry on
/// the same thread), and cheap when uncontended: one compare-exchange to take
/// it, a plain store to give it back.
///
/// Threads that find it taken count themselves in `waiters` and sleep on
/// `condition`; while any waits, new lockers queue behind them instead of
/// barging in, and the holder hands over with a signal. The condition is
/// made by the first thread that waits or hands over: a lock that is never
/// contended (most of them: one per registry and per key of a keyed
/// registry) is one small allocation.
final class RegistryLock: @unchecked Sendable {
    // @unchecked: `owner`, `waiters` and the condition's word are atomic;
    // `depth` is touched only by the thread that holds the lock (ordered by
    // `owner`'s acquire and release); the condition is thread-safe.

    /// First stored property: the words of `owner`, `waiters` and the
    /// condition's reference (see `AtomicWord`).
    var words = Words()

    struct Words {
        var owner = AtomicWordStorage<UInt>(0)
        var waiters = AtomicWordStorage<Int>(0)
        var condition = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
        static var ownerOffset: Int { 0 }
        static var waitersOffset: Int { MemoryLayout<UInt>.stride }
        static var conditionOffset: Int { 2 * MemoryLayout<UInt>.stride }
    }

    /// The holder's identifier (its `oc_reader_current()` pointer, unique
    /// among running threads and never null), or 0.
    private var owner: AtomicWord<UInt> { AtomicWords.word(self, at: Words.ownerOffset) }
    private var waiters: AtomicWord<Int> { AtomicWords.word(self, at: Words.waitersOffset) }
    /// Nesting depth of the holder's `lock()` calls.
    @exclusivity(unchecked)
    private var depth = 0
    private var conditionWord: AtomicWord<UnsafeMutableRawPointer?> {
        AtomicWords.word(self, at: Words.conditionOffset)
    }
    /// What waiting threads sleep on, made by the first that needs it.
    private var condition: NSCondition { conditionWord.objectMadeOnFirstUse { NSCondition() } }

    /// Whether a thread has needed the condition (for tests).
    var hasCondition: Bool { conditionWord.load(ordering: .acquiring) != nil }

    deinit {
        conditionWord.releaseObject(NSCondition.self)
    }

    @inline(__always)
    func lock() {
        let me = UInt(bitPattern: oc_reader_current())
        // Relaxed: only this thread stores its own identifier here.
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return
        }
        // Acquiring: what the previous holder did before its releasing store
        // is visible once the exchange succeeds.
        if waiters.load(ordering: .relaxed) == 0,
            owner.compareExchange(expected: 0, desired: me, ordering: .acquiring).exchanged
        {
            depth = 1
            return
        }
        lockSlowly(me)
    }

    private func lockSlowly(_ me: UInt) {
        waiters.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let condition = condition
        condition.lock()
        while !owner.compareExchange(expected: 0, desired: me, ordering: .acquiring).exchanged {
            // Bounded: an unlock that read `waiters` before our increment
            // does not signal; we then find the lock free on the next try.
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.001))
        }
        condition.unlock()
        waiters.wrappingSubtract(1, ordering: .relaxed)
        depth = 1
    }

    @inline(__always)
    func unlock() {
        depth -= 1
        if depth > 0 { return }
        // Releasing: everything done under the lock happens before the next
        // holder's acquiring exchange.
        if waiters.load(ordering: .relaxed) == 0 {
            owner.store(0, ordering: .releasing)
        } else {
            unlockToWaiter()
        }
    }

    private func unlockToWaiter() {
        let condition = condition
        condition.lock()
        owner.store(0, ordering: .releasing)
        condition.signal()
        condition.unlock()
    }
}
