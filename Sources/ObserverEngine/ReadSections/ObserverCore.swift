import CObserverCore
import Foundation

/// Errors reported by ObserverSwift.
public enum ObserverError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// Waiting for in-flight deliveries was requested from inside a delivery
    /// (or any send) on the calling thread: the wait would include itself and
    /// never end. Whatever was to be cancelled has been cancelled.
    case waitInsideDelivery

    /// A one-line explanation of the error, for logs.
    public var description: String {
        switch self {
        case .waitInsideDelivery:
            return "cannot wait for in-flight deliveries from inside a delivery on the same thread"
        }
    }

    /// The same explanation, for `localizedDescription` and error alerts.
    public var errorDescription: String? { description }
}

/// Process-wide facts about every observer list: how many subscriptions
/// are live, and, with tracking on, which ones and where they were made
/// (``liveSubscriptions``).
///
/// The engine's own controls (waiting for a grace period, releasing what
/// was cancelled, the epoch records and pending bytes) are not part of
/// everyday API: they are declared `@_spi(EngineDiagnostics)`, for the
/// library's tests and benchmarks. Tests of code that observes use the
/// `ObserverSwiftTesting` product's `settleDeliveries()` instead.
public enum ObserverCore {
    /// Counters of the C core (see `oc_stats` in oc_epoch.h).
    public struct Statistics: Sendable, Equatable {
        /// Subscriptions stored in all sources.
        public var liveSubscriptions: Int
        /// Removed subscriptions and old slot arrays waiting for a grace period.
        public var pendingObjects: Int
        /// Bytes of core memory those pending objects hold.
        @_spi(EngineDiagnostics) public var pendingBytes: Int
        /// Pending objects released so far.
        public var reclaimedObjects: Int
        /// Epoch records: one per thread that ever sent, recycled at exit.
        @_spi(EngineDiagnostics) public var epochRecords: Int
        /// Subscriptions never released because memory ran out while
        /// cancelling from inside a delivery (0 unless allocation failed).
        public var leakedSubscriptions: Int
        /// Values received by actor subscriptions (`subscribe(isolatedTo:)`)
        /// and not yet delivered: the backlog of actors that do not keep up.
        /// Senders never wait for it.
        public var queuedActorDeliveries: Int = 0
        /// Values actor subscriptions dropped under a `bufferingPolicy` other
        /// than `.unbounded`, since the process started.
        public var droppedActorDeliveries: Int = 0
    }

    /// A snapshot of the core's counters.
    public static var statistics: Statistics {
        let stats = oc_stats()
        return Statistics(
            liveSubscriptions: Int(stats.live_contexts),
            pendingObjects: Int(stats.pending_objects),
            pendingBytes: Int(stats.pending_bytes),
            reclaimedObjects: Int(stats.reclaimed_objects),
            epochRecords: Int(stats.epoch_records),
            leakedSubscriptions: Int(stats.leaked_contexts),
            queuedActorDeliveries: ActorMailboxCounters.queued.load(ordering: .relaxed),
            droppedActorDeliveries: ActorMailboxCounters.dropped.load(ordering: .relaxed))
    }

    /// Waits until every send running on any thread when called has ended.
    /// - Throws: ``ObserverError/waitInsideDelivery`` from inside a send.
    @_spi(EngineDiagnostics)
    public static func waitForDeliveriesInFlight() throws(ObserverError) {
        if oc_synchronize() == OC_EINSECTION { throw .waitInsideDelivery }
    }

    /// Waits for a grace period and releases everything cancelled before the
    /// call (handlers and their captures), and what releasing them ends in
    /// turn (a handler that held the last reference to another source). For
    /// tests and shutdown.
    /// - Throws: ``ObserverError/waitInsideDelivery`` from inside a send.
    @_spi(EngineDiagnostics)
    public static func reclaimNow() throws(ObserverError) {
        if oc_in_read_section() { throw .waitInsideDelivery }
        // Removals sends could not do (a writer lock was busy) happen first,
        // so that what they would release is released too.
        PendingSweeps.performAll()
        if oc_reclaim_barrier() == OC_EINSECTION { throw .waitInsideDelivery }
    }

    /// Whether the calling thread is inside a send (a delivery). Also true
    /// wherever the library runs user code while holding something: an
    /// `ObservableValue` replay, or its Observation `onChange`, `==` and
    /// handlers while a set holds the value's turn.
    public static var isInsideDelivery: Bool { oc_in_read_section() }

    /// Keys that currently have a subscription, over every keyed source in
    /// the process: those that own an observer list in a keymap (see
    /// `oc_keymap_live_keys`) and those a `KeyedEvent` keeps with its one
    /// closure. A key is counted from its first subscription until its last
    /// one is removed.
    public static var liveKeys: Int { Int(oc_keymap_live_keys()) + keysOfSoleHandlers.load(ordering: .relaxed) }

    /// Keys kept by keyed sole handlers in their events' words: counted up
    /// when one is published, down when it leaves the word (removed, or
    /// moved into a keymap, which counts the key from then on). Relaxed: a
    /// snapshot, as the keymaps' count is.
    package static let keysOfSoleHandlers = HeapAtomicWord<Int>(0)

    /// Whether subscriptions made from now on are tracked, so that
    /// ``liveSubscriptions`` and a token's `debugDescription` can say what
    /// they are and where they were made. Off by default.
    ///
    /// Turning it on (or off) affects only subscriptions made afterwards.
    /// It starts on when the environment variable
    /// `OBSERVER_TRACK_SUBSCRIPTIONS` is `1`, `true` or `yes` as the process
    /// starts; the `ObserverSwiftTesting` product turns it on itself.
    ///
    /// Off, it costs each subscribe one load and a branch, and sends
    /// nothing. On, each subscription made gets a record (about 200 bytes)
    /// and each delivery two relaxed atomic increments.
    public static var isTrackingSubscriptions: Bool {
        get { SubscriptionTracking.isOn }
        set { SubscriptionTracking.set(newValue) }
    }

    /// The active subscriptions made while tracking was on, oldest first:
    /// each with its kind, source type, delivery, creation site and how
    /// often its handler ran. A subscription leaves the list when it ends
    /// (cancelled, its limit spent, its source, target, actor or observer
    /// deallocated). Empty while tracking has never been on.
    public static var liveSubscriptions: [LiveSubscription] {
        SubscriptionTracking.activeRecords.map(\.snapshot)
    }
}
