import ObserverSwift

/// A running export: local sends on the event are published until
/// ``cancel()`` or ``NATSBridge/close()``.
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

    /// Publish calls cnats refused (each also reported as ``NATSStatus/publishFailed(subject:error:)``),
    /// and at-least-once publishes given up later (``undeliverablePublishes``).
    public var failedPublishes: Int { exportedPublishers.reduce(0) { $0 + $1.failures.load(ordering: .relaxed) } }

    /// At-least-once: publishes accepted and then given up, because the stream no longer exists,
    /// the server refused them (a limit), or the bridge closed before they were acknowledged
    /// (each reported in a ``NATSStatus/undeliverable(subject:count:reason:)``).
    public var undeliverablePublishes: Int {
        exportedPublishers.reduce(0) { $0 + $1.undeliverable.load(ordering: .relaxed) }
    }

    /// Stops publishing: sends that start after this returns are not published.
    public func cancel() {
        stop()
        bridge?.unregister(self)
    }

    func stop() {
        for subscription in subscriptions { subscription.cancel() }
    }
}

/// A running import: remote values arrive in the local event until
/// ``cancel()`` or ``NATSBridge/close()``.
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
    /// Messages sent into the local event so far.
    public var deliveredCount: Int { imported.deliveredCount.load(ordering: .relaxed) }
    /// Messages dropped because they were not frames of the import's type.
    public var malformedCount: Int { imported.malformed.load(ordering: .relaxed) }
    /// At-most-once: messages the gap statuses reported missing so far.
    public var missedCount: Int { imported.missed.load(ordering: .relaxed) }
    /// At-least-once: redelivered messages dropped because observers had them already.
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
