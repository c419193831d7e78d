import CObserverSwiftAtomics
import Dispatch

/// Subscription tracking: where each subscription was made, what it is and
/// how often its handler ran, for ``ObserverCore/liveSubscriptions``, a
/// token's `debugDescription` and ObserverSwiftTesting's leak check and
/// settle.
///
/// Off by default. When it is off, a subscribe path pays one relaxed load
/// of a C byte and a branch (``isOn``); nothing else in the library looks
/// at it, and no send path does. When it is on, a subscribe path makes a
/// ``TrackedSubscription`` record:
/// - a closure, weak-target or actor subscription wraps its handler in one
///   that counts deliveries, and the record lives as long as that handler:
///   it leaves the table when the engine releases the handler (cancel and
///   reclamation, a spent limit, the source or the target deallocated);
/// - a registry observer (and a NATS export or import) has no handler of
///   its own to wrap: the table holds its record until the registration is
///   found inactive (a listing prunes it).
/// Either way a record is listed only while its token would say `isActive`.
@usableFromInline
package enum SubscriptionTracking {
    /// Whether subscriptions made now are tracked: one relaxed load.
    @inlinable @inline(__always)
    package static var isOn: Bool { ea_subscription_tracking_is_on() }

    /// Turns tracking on or off for subscriptions made afterwards.
    package static func set(_ on: Bool) { ea_subscription_tracking_set(on) }

    /// Whether `value` of the environment variable
    /// `OBSERVER_TRACK_SUBSCRIPTIONS` turns tracking on at start.
    package static func isRequested(byEnvironmentValue value: String?) -> Bool {
        guard let value else { return false }
        return ea_subscription_tracking_requested(value)
    }

    /// The scope a record made in this task is in (0: none):
    /// ObserverSwiftTesting's leak check sets one around the code it checks,
    /// so that subscriptions other tests make at the same time are not its.
    @TaskLocal package static var scope: UInt64 = 0

    /// Main-actor deliveries enqueued on the main queue and not started yet
    /// (ObserverSwiftTesting's settle hops to the main actor only when
    /// there are some, so that a test blocking the main thread can settle
    /// everything else).
    package static var queuedMainActorDeliveries: Int { MainActorDeliveries.queued.load(ordering: .acquiring) }

    /// The identifier the next record will get: records made after this
    /// call have larger ones.
    package static var nextIdentifier: UInt64 { table.withLock { $0.nextIdentifier } }

    /// A source type as a user names it (one key of a `KeyedEvent` is the
    /// keyed event's type).
    package static func displayName(of type: Any.Type) -> String {
        let name = String(describing: type)
        if name.hasPrefix("KeyScope<") { return "KeyedEvent<" + name.dropFirst("KeyScope<".count) }
        return name
    }

    /// A record in the table: weak when the record lives as long as a
    /// handler, strong (`retained`) when the table is what keeps it.
    private struct Entry {
        package weak var record: TrackedSubscription?
        package let retained: TrackedSubscription?
    }

    private struct Table {
        package var entries: [UInt64: Entry] = [:]
        package var nextIdentifier: UInt64 = 1
        /// Entry count after the last pruning of retained records: the next
        /// pruning waits for the table to double (amortized O(1) per add).
        package var prunedAt = 16
    }

    private static let table = Locked(Table())

    /// Adds `record` to the table; returns its identifier.
    package static func insert(_ record: TrackedSubscription, retained: Bool) -> UInt64 {
        let (identifier, mayPrune) = table.withLock { table -> (UInt64, Bool) in
            let identifier = table.nextIdentifier
            table.nextIdentifier &+= 1
            table.entries[identifier] = Entry(record: record, retained: retained ? record : nil)
            return (identifier, table.entries.count >= 2 * table.prunedAt)
        }
        if mayPrune { pruneInactive() }
        return identifier
    }

    /// Removes a record's entry (its deinit, or pruning).
    package static func remove(_ identifier: UInt64) {
        _ = table.withLock { $0.entries.removeValue(forKey: identifier) }
    }

    /// Every record still in the table, oldest first, active or not.
    package static var records: [TrackedSubscription] {
        table.withLock { table in
            table.entries.sorted { $0.key < $1.key }.compactMap { $0.value.record }
        }
    }

    /// The records whose subscriptions are still active, oldest first;
    /// retained records found inactive leave the table.
    package static var activeRecords: [TrackedSubscription] {
        var active: [TrackedSubscription] = []
        for record in records {
            if record.isActive {
                active.append(record)
            } else if record.isRetainedByTable {
                remove(record.identifier)
            }
        }
        return active
    }

    /// Drops the retained records whose registrations ended.
    private static func pruneInactive() {
        let retained = table.withLock { table in table.entries.values.compactMap { $0.retained } }
        // Outside the table's lock: `isActive` may take a registry's lock.
        for record in retained where !record.isActive { remove(record.identifier) }
        table.withLock { $0.prunedAt = max(16, $0.entries.count) }
    }

    /// The record of the subscription `reference` identifies, if it is tracked.
    package static func record(of reference: SubscriptionReference) -> TrackedSubscription? {
        records.first { $0.reference?.isSame(as: reference) == true }
    }
}

/// What a tracked subscription is, where it was made, and how often its
/// handler ran. See ``SubscriptionTracking``.
@usableFromInline
package final class TrackedSubscription: @unchecked Sendable {
    // @unchecked: every stored property is immutable but `state`, which is
    // locked, and the two counters, which are atomic.

    package let kind: LiveSubscription.Kind
    package let sourceType: Any.Type
    package let delivery: Delivery
    /// The actor of a `subscribe(isolatedTo:)` subscription, held weakly.
    package var actor: (any Actor)? { state.withLock { $0.actor?.value } }
    package let fileID: StaticString?
    package let line: UInt
    /// What else identifies it (a key, an observer's type, a NATS subject).
    package let detail: String?
    /// Whether deliveries are counted (a wrapped handler) or not (a
    /// registry observer, called by its protocol).
    package let countsDeliveries: Bool
    /// Where it delivers, in words, when `delivery` does not say it (a NATS import).
    private let deliveryText: String?
    private let deliveryCount = HeapAtomicWord<Int>(0)
    private let runningCount = HeapAtomicWord<Int>(0)
    private let state = Locked(State())
    fileprivate private(set) var isRetainedByTable = false

    private struct State {
        package var identifier: UInt64 = 0
        package var reference: SubscriptionReference?
        package var actor: WeakActor?
        /// A weak target's: the subscription ends with it, although the
        /// engine frees its slot only at a later send or subscribe.
        package weak var target: AnyObject?
        package var hasTarget = false
    }

    private struct WeakActor {
        package weak var value: (any Actor)?
    }

    @usableFromInline
    package init(
        _ kind: LiveSubscription.Kind, of sourceType: Any.Type, delivery: Delivery,
        fileID: StaticString?, line: UInt, detail: String? = nil, countsDeliveries: Bool = true,
        deliveryDescription: String? = nil
    ) {
        self.deliveryText = deliveryDescription
        self.kind = kind
        self.sourceType = sourceType
        self.delivery = delivery
        self.fileID = fileID
        self.line = line
        self.detail = detail
        self.countsDeliveries = countsDeliveries
    }

    deinit {
        let identifier = state.withLock { $0.identifier }
        if identifier != 0 { SubscriptionTracking.remove(identifier) }
    }

    /// Its place in the table, in creation order (0 until attached).
    package var identifier: UInt64 { state.withLock { $0.identifier } }
    /// The task-local ``SubscriptionTracking/scope`` where it was made.
    package let scope = SubscriptionTracking.scope

    /// The subscription, once attached.
    package var reference: SubscriptionReference? { state.withLock { $0.reference } }

    /// Records the weak target a subscription ends with.
    @usableFromInline
    package func setTarget(_ target: AnyObject) {
        state.withLock {
            $0.target = target
            $0.hasTarget = true
        }
    }

    /// Records the actor a `subscribe(isolatedTo:)` handler runs on.
    package func setActor(_ actor: any Actor) {
        state.withLock { $0.actor = WeakActor(value: actor) }
    }

    /// Lists `subscription` under this record; it lives as long as the
    /// handler that captured it. An inactive token is not listed.
    @usableFromInline
    package func attach(_ subscription: Subscription) -> Subscription {
        attach(subscription, retained: false)
    }

    /// Lists `subscription` under this record, which the table keeps until
    /// the subscription is found inactive (a registry observer, a NATS
    /// export or import: no handler of theirs holds the record).
    @discardableResult
    package func attachRetained(_ subscription: Subscription) -> Subscription {
        attach(subscription, retained: true)
    }

    /// Lists `subscription`, a registry's token for `observer`, when
    /// tracking is on; returns it. The registry's kinds (`ObserverRegistry`,
    /// `KeyedObserverRegistry`) all list theirs this way: their protocol
    /// calls are not counted.
    @inlinable @inline(__always)
    package static func trackingRegistryObserver(
        _ subscription: Subscription, of sourceType: Any.Type, delivery: Delivery, fileID: StaticString, line: UInt,
        detail: @autoclosure () -> String
    ) -> Subscription {
        if _slowPath(SubscriptionTracking.isOn) {
            trackRegistryObserver(
                subscription, of: sourceType, delivery: delivery, fileID: fileID, line: line, detail: detail())
        }
        return subscription
    }

    @usableFromInline
    package static func trackRegistryObserver(
        _ subscription: Subscription, of sourceType: Any.Type, delivery: Delivery, fileID: StaticString, line: UInt,
        detail: String
    ) {
        TrackedSubscription(
            .registryObserver, of: sourceType, delivery: delivery, fileID: fileID, line: line, detail: detail,
            countsDeliveries: false
        ).attachRetained(subscription)
    }

    private func attach(_ subscription: Subscription, retained: Bool) -> Subscription {
        guard subscription.isActive else { return subscription }
        isRetainedByTable = retained
        state.withLock { $0.reference = subscription.reference }
        let identifier = SubscriptionTracking.insert(self, retained: retained)
        state.withLock { $0.identifier = identifier }
        return subscription
    }

    /// Whether its subscription is active (attached and not ended).
    package var isActive: Bool {
        let (reference, targetGone) = state.withLock { ($0.reference, $0.hasTarget && $0.target == nil) }
        return !targetGone && reference?.isActive == true
    }

    /// Deliveries that reached the handler so far.
    package var deliveries: Int { deliveryCount.load(ordering: .relaxed) }
    /// Deliveries running the handler right now. Acquire, paired with the
    /// release in ``endDelivery()``: a reader that sees a handler returned
    /// also sees what it did before returning (a delivery it enqueued).
    package var running: Int { runningCount.load(ordering: .acquiring) }

    /// Counts a delivery around `body`, the handler's call.
    @usableFromInline
    package func deliver(_ body: () -> Void) {
        beginDelivery()
        body()
        endDelivery()
    }

    /// Counts a delivery whose handler starts now.
    @usableFromInline
    package func beginDelivery() {
        deliveryCount.wrappingAdd(1, ordering: .relaxed)
        runningCount.wrappingAdd(1, ordering: .relaxed)
    }

    /// The handler of a delivery ``beginDelivery()`` counted returned.
    @usableFromInline
    package func endDelivery() {
        runningCount.wrappingSubtract(1, ordering: .releasing)
    }

    /// `handler`, counting its deliveries; the result holds this record.
    @usableFromInline
    package func counting<Value>(_ handler: @escaping @Sendable (Value) -> Void) -> @Sendable (Value) -> Void {
        { value in self.deliver { handler(value) } }
    }

    /// The target form of ``counting(_:)``.
    @usableFromInline
    package func counting<Target, Value>(
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> @Sendable (Target, Value) -> Void {
        { target, value in self.deliver { handler(target, value) } }
    }

    /// The creation site as `file:line`, or nil when it is not known.
    package var site: String? {
        guard let fileID else { return nil }
        return "\(fileID):\(line)"
    }

    /// The source type as a user names it.
    package var sourceTypeName: String { SubscriptionTracking.displayName(of: sourceType) }

    /// Where the handler runs, in words.
    package var deliveryDescription: String {
        if let deliveryText { return deliveryText }
        switch delivery.route {
        case .synchronous:
            if kind == .actor { return actor.map { "isolated to \(type(of: $0))" } ?? "isolated to an actor (gone)" }
            return "synchronous"
        case .queue(let queue): return "queue \"\(queue.label)\""
        case .mainActor: return "main actor"
        }
    }

    /// The listing entry of this record.
    package var snapshot: LiveSubscription {
        LiveSubscription(
            kind: kind, sourceType: sourceTypeName, delivery: deliveryDescription,
            fileID: fileID.map { "\($0)" }, line: fileID == nil ? nil : Int(line), detail: detail,
            deliveries: countsDeliveries ? deliveries : nil, runningDeliveries: countsDeliveries ? running : nil)
    }
}
