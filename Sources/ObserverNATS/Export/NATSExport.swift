import ObserverSwift

/// A running export: local sends on the event are published until
/// ``cancel()`` or ``NATSBridge/close(timeout:)``.
///
/// It is a subscription token as the events' own are: ``store(in:)-(SubscriptionBag)`` puts it
/// in a `SubscriptionBag` (which cancels it when deallocated), and ``subscription`` is a
/// `Subscription` that cancels it.
///
/// ```swift
/// func publishReadings(_ bridge: NATSBridge, _ readings: Event<Double>, bag: SubscriptionBag) throws {
///     try bridge.export(readings, to: "sensors.temperature").store(in: bag)
/// }
/// ```
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class NATSExport: NATSToken {
    let subscriptions: [Subscription]
    let publisherIdentities: [UInt64]
    let exportedPublishers: [ExportedPublisher]
    weak let bridge: NATSBridge?
    /// The connection's denials, which hold the at-most-once publishers until `unregisterPublishers()`.
    let denials: PermissionDenials
    let stopProgress = TokenStop()

    init(subscriptions: [Subscription], publishers: [ExportedPublisher], bridge: NATSBridge) {
        self.subscriptions = subscriptions
        self.publisherIdentities = publishers.map(\.publisher)
        self.exportedPublishers = publishers
        self.bridge = bridge
        self.denials = bridge.callbacks.denials
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
    /// lingering (``NATSOptions/batching``) is sent first. Returns true when this call stopped
    /// the export; false when it was stopped already (cancelled, or its bridge closed), or is
    /// being stopped by another call (a `cancel()`, the bridge's close), which this one then
    /// waits for: either way sends that start after it returns are not published. The one
    /// exception is a call from a status observer that the stopping call itself runs (the
    /// statuses of a lingering batch it sends), which returns at once.
    @discardableResult
    public func cancel() -> Bool {
        let stoppedNow = stop()
        unregisterPublishers()
        bridge?.unregister(self)
        return stoppedNow
    }

    /// Stops publishing; returns false when stopped already (after waiting for a stop under way).
    @discardableResult
    func stop() -> Bool {
        stopProgress.stopOnce(waitForStop: stopProgress.waitUntilFinished) {
            for subscription in subscriptions { subscription.cancel() }
            for publisher in exportedPublishers { publisher.sendPendingBatch() }
        }
    }

    /// Whether the export still publishes (neither cancelled nor stopped by its bridge's close):
    /// false once sends that start after it no longer publish.
    public var isActive: Bool { !stopProgress.hasFinished }

    /// A token that cancels this export: for a place that holds `Subscription`s.
    public var subscription: Subscription { Subscription(canceller: self) }

    /// Adds this export to `bag`, which cancels it when deallocated.
    public func store(in bag: SubscriptionBag) { subscription.store(in: bag) }

    /// Inserts a token of this export into `set`, cancelling the export when the token is
    /// released (see `Subscription.store(in:)`).
    public func store(in set: inout Set<Subscription>) { subscription.store(in: &set) }

    /// Takes the publishers out of the connection's denials, after `stop()`: a denial arriving
    /// later is reported as ``NATSStatus/error(_:)`` with the server's text, which names the subject.
    func unregisterPublishers() {
        for publisher in exportedPublishers { denials.unregister(publisher) }
    }
}
