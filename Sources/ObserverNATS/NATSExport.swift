import ObserverSwift

/// A running export: local sends on the event are published until
/// ``cancel()`` or ``NATSBridge/close(timeout:)``.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class NATSExport: Sendable {
    let subscriptions: [Subscription]
    let publisherIdentities: [UInt64]
    let exportedPublishers: [ExportedPublisher]
    weak let bridge: NATSBridge?

    init(subscriptions: [Subscription], publishers: [ExportedPublisher], bridge: NATSBridge) {
        self.subscriptions = subscriptions
        self.publisherIdentities = publishers.map(\.publisher)
        self.exportedPublishers = publishers
        self.bridge = bridge
    }

    /// The random identities this export stamps on its frames, one per subject (one for an
    /// `Event`, one per key for a `KeyedEvent`), each with its own sequence numbers; the
    /// `publisher` of ``NATSStatus/gap(subject:publisher:missed:)``.
    public var publishers: [UInt64] { publisherIdentities }

    /// Events whose publish cnats refused or the server denied (each reported as
    /// ``NATSStatus/publishFailed(subject:error:)``; a refused batch counts each of its events,
    /// a denied one once), and at-least-once events given up later (``unconfirmedPublishes``
    /// and ``refusedPublishes``).
    public var failedPublishes: Int { exportedPublishers.reduce(0) { $0 + $1.failures.load(ordering: .relaxed) } }

    /// At-least-once: events published and given up unacknowledged because the bridge closed
    /// first (a batch counts each of its events); each may or may not have been stored (reported
    /// in a ``NATSStatus/unconfirmed(subject:count:reason:)``).
    public var unconfirmedPublishes: Int {
        exportedPublishers.reduce(0) { $0 + $1.unconfirmed.load(ordering: .relaxed) }
    }

    /// At-least-once: events published and never stored (a batch counts each of its events):
    /// the server refused them (a limit, a permission), or their stream no longer exists or no
    /// longer stores their subject (reported in a ``NATSStatus/refused(subject:count:reason:)``).
    public var refusedPublishes: Int {
        exportedPublishers.reduce(0) { $0 + $1.refused.load(ordering: .relaxed) }
    }

    /// Stops publishing: sends that start after this returns are not published; a batch
    /// lingering (``NATSOptions/batching``) is sent first.
    public func cancel() {
        stop()
        bridge?.unregister(self)
    }

    func stop() {
        for subscription in subscriptions { subscription.cancel() }
        for publisher in exportedPublishers { publisher.sendPendingBatch() }
    }
}

/// A running import: remote values arrive in the local event until
/// ``cancel()`` or ``NATSBridge/close(timeout:)``.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class NATSImport: Sendable {
    let imported: ImportedSubject
    weak let bridge: NATSBridge?
    /// At-least-once: the consumer between cnats and `imported`, whose watch `stop()` ends.
    let consumer = LockedState<PushConsumer?>(nil)

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
    /// called from this import's own handler, which cannot wait for itself).
    public func cancel() {
        stop()
        bridge?.unregister(self)
    }

    func stop() {
        consumer.withLock { $0 }?.stopWatching()
        guard let subscription = imported.cancel() else { return }
        if let bridge {
            bridge.retire(subscription)
        } else {
            NATSBridge.destroyWhenComplete(subscription, imported.completed)
        }
    }
}
