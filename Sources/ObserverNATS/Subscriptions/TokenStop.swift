import Foundation
import ObserverSwift

/// How far the stop of an export or import has come: claimed once, by the first caller (a
/// `cancel()` or the bridge's close), and finished when that caller has made the token stop.
/// Every other caller waits until it has finished, so that each returns only once the token
/// has stopped; except on the thread running the stop itself (a status observer it calls),
/// which waiting would never let finish.
final class TokenStop: @unchecked Sendable {
    // @unchecked: `stoppingThread` is only touched under `condition`'s lock; the flags are atomic.
    private let condition = NSCondition()
    private let claimed = HeapAtomicWord<Bool>(false)
    /// Set, under `condition`'s lock, when the claiming caller has finished.
    let isFinished = HeapAtomicWord<Bool>(false)
    private var stoppingThread: pthread_t?

    /// True for the first caller only, which stops the token and then calls ``finish()``.
    func claim() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if claimed.load(ordering: .relaxed) { return false }
        claimed.store(true, ordering: .releasing)
        stoppingThread = pthread_self()
        return true
    }

    /// Whether the stop has finished: the token's `isActive` is false from then on.
    var hasFinished: Bool { isFinished.load(ordering: .acquiring) }

    /// The first caller runs `stop`, which makes the token stop, and this returns true. Every
    /// other caller runs `waitForStop` (which waits with ``waitUntilFinished()`` where that may wait)
    /// and gets false.
    func stopOnce(waitForStop: () -> Void, _ stop: () -> Void) -> Bool {
        guard claim() else {
            waitForStop()
            return false
        }
        stop()
        finish()
        return true
    }

    /// The token has stopped: wakes every caller waiting for it.
    func finish() {
        condition.lock()
        isFinished.store(true, ordering: .releasing)
        stoppingThread = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the claiming caller has finished, unless called on its own thread.
    func waitUntilFinished() {
        condition.lock()
        defer { condition.unlock() }
        while !isFinished.load(ordering: .relaxed) {
            if let stoppingThread, pthread_equal(stoppingThread, pthread_self()) != 0 { return }
            condition.wait()
        }
    }
}
