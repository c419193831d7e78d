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

    /// Whether a stop was claimed (it may still be under way).
    var isClaimed: Bool { claimed.load(ordering: .acquiring) }

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
