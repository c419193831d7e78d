import ObserverSwift

/// A running import: remote values arrive in the local event until
/// ``cancel()`` or ``NATSBridge/close(timeout:)``.
///
/// A subscription token as ``NATSExport`` is: ``store(in:)-(SubscriptionBag)`` puts it in a
/// `SubscriptionBag`, and ``subscription`` is a `Subscription` that cancels it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class NATSImport: NATSToken {
    let imported: ImportedSubject
    weak let bridge: NATSBridge?
    let stopProgress = TokenStop()
    /// At-least-once: the consumer between cnats and `imported`, whose watch `stop()` ends.
    let consumer = Locked<PushConsumer?>(nil)

    init(imported: ImportedSubject, bridge: NATSBridge) {
        self.imported = imported
        self.bridge = bridge
    }

    /// The subject or pattern this import subscribed.
    public var subject: String { imported.subject }
    /// Events sent into the local event so far (each event of a batch counts).
    public var deliveredCount: Int { imported.deliveredCount.load(ordering: .relaxed) }
    /// Messages dropped because they were not frames of the import's type (a malformed batch
    /// frame counts once), and events of well-formed batch frames whose value did not decode.
    public var malformedCount: Int { imported.malformed.load(ordering: .relaxed) }
    /// At-most-once: events the gap statuses reported missing so far.
    public var missedCount: Int { imported.missed.load(ordering: .relaxed) }
    /// At-least-once: redelivered events dropped because observers had them already.
    public var duplicateCount: Int { imported.duplicates.load(ordering: .relaxed) }

    /// Unsubscribes and waits until no handler of this import runs (except when
    /// called from this import's own handler, which cannot wait for itself). Returns true when
    /// this call stopped the import; false when it was stopped already (cancelled, or its bridge
    /// closed), or is being stopped by another call (a `cancel()`, the bridge's close). Every
    /// call waits the same way: when it returns, no handler of this import runs, whichever call
    /// stopped it; a call from this import's own handler returns at once, stopping the import
    /// or not, and the handler it runs in finishes after it (a call from another thread then
    /// waits for that handler to return).
    @discardableResult
    public func cancel() -> Bool {
        let stoppedNow = stop()
        bridge?.unregister(self)
        return stoppedNow
    }

    /// Stops delivering; returns false when stopped already. Either way it returns once no
    /// handler of the import runs, unless called from the import's own handler.
    @discardableResult
    func stop() -> Bool {
        stopProgress.stopOnce(waitForStop: waitForStop, stopSubscription)
    }

    /// Waits until the stop under way has finished and no handler of the import runs; at once
    /// from the import's own handler, for which the stop under way may be waiting.
    private func waitForStop() {
        if imported.isDeliveringOnThisThread { return }
        stopProgress.waitUntilFinished()
        imported.waitUntilComplete()
    }

    private func stopSubscription() {
        consumer.withLock { $0 }?.stopWatching()
        guard let subscription = imported.cancel() else { return }
        if let bridge {
            bridge.retire(subscription)
        } else {
            NATSBridge.destroyWhenComplete(subscription, imported)
        }
    }

    /// Whether the import still delivers (neither cancelled nor stopped by its bridge's close):
    /// false once it is unsubscribed.
    public var isActive: Bool { !stopProgress.hasFinished }

    /// A token that cancels this import: for a place that holds `Subscription`s.
    public var subscription: Subscription { Subscription(canceller: self) }

    /// Adds this import to `bag`, which cancels it when deallocated.
    public func store(in bag: SubscriptionBag) { subscription.store(in: bag) }

    /// Inserts a token of this import into `set`, cancelling the import when the token is
    /// released (see `Subscription.store(in:)`).
    public func store(in set: inout Set<Subscription>) { subscription.store(in: &set) }
}
