import Foundation
import ObserverEngine
import ObserverSwift

/// The state behind a producer stream's `Subscription`: runs the
/// connection's disconnect exactly once, whichever thread unsubscribes first
/// and however often.
final class Disconnection: SubscriptionCanceller, @unchecked Sendable {
    // @unchecked: `disconnect` is read and cleared only under `lock`.

    private let lock = NSLock()
    private var disconnect: Disconnect?

    init(_ disconnect: @escaping Disconnect) {
        self.disconnect = disconnect
    }

    /// True until the first ``cancelSubscription()``.
    package var isSubscriptionActive: Bool {
        lock.lock()
        defer { lock.unlock() }
        return disconnect != nil
    }

    /// Disconnects; true for the call that did it, false for every later or
    /// concurrent one (which does not wait for the first to finish). The
    /// disconnect runs outside the lock: it is user code, and may
    /// unsubscribe this subscription again (a no-op).
    package func cancelSubscription() -> Bool {
        lock.lock()
        let disconnect = self.disconnect
        self.disconnect = nil  // release what the producer captured
        lock.unlock()
        guard let disconnect else { return false }
        disconnect()
        return true
    }
}
