/// The state behind a producer stream's ``Subscription``: runs the
/// connection's disconnect exactly once, whichever thread unsubscribes first
/// and however often.
final class Disconnection: @unchecked Sendable {
    // @unchecked: `disconnect` is written in init and afterwards read and
    // cleared only by the one caller that won `done`, whose word is atomic.

    /// First stored property: `done`'s word (see `AtomicWord`).
    var doneWord = AtomicWordStorage<Bool>(false)
    private var done: AtomicWord<Bool> { AtomicWords.first(self) }
    private var disconnect: Disconnect?

    init(_ disconnect: @escaping Disconnect) {
        self.disconnect = disconnect
    }

    /// True until the first ``run()``.
    var isConnected: Bool { !done.load(ordering: .acquiring) }

    /// Disconnects; true for the call that did it, false for every later or
    /// concurrent one (which does not wait for the first to finish).
    func run() -> Bool {
        // The exchange lets exactly one caller through; acquiring pairs with
        // the initializing thread's publication of `self`.
        if done.exchange(true, ordering: .acquiringAndReleasing) { return false }
        let disconnect = self.disconnect
        self.disconnect = nil  // release what the producer captured
        disconnect?()
        return true
    }
}

extension Disconnection: SubscriptionCanceller {
    func cancelSubscription() -> Bool { run() }
    var isSubscriptionActive: Bool { isConnected }
}
