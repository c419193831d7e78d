/// Delivers items to a handler isolated to a weakly held actor, in the
/// order they were received: senders append and never wait; a task on the
/// actor takes at most ``itemsPerJob`` items at a time, so the actor's other
/// work interleaves with a backlog.
///
/// Every actor subscription is a weak-target subscription (the actor is the
/// target) whose synchronous handler calls ``receive(_:)``. The mailbox
/// keeps a ``SubscriptionReference``, not the token, so that releasing the
/// token can cancel (`store(in: &set)`), and checks it before each delivery:
/// a cancelled subscription delivers nothing more, even what it had already
/// received. No job runs before the mailbox has its subscription
/// (``attach(_:)``), so every delivery is checked against it.
///
/// What waits is bounded by the buffering policy: `.unbounded` keeps every
/// item (the default, as for a dispatch queue); `.bufferingNewest(n)` and
/// `.bufferingOldest(n)` keep `n`, count what they drop, and release a
/// dropped item when it is dropped (the items wait in a ring, not behind a
/// moving start). Both counts are visible process-wide in
/// ``ObserverCore/statistics``.
///
/// A `limit:` counts handler calls: an item a policy drops is not counted.
/// With `.unbounded` and `.bufferingOldest(n)` every item kept is delivered
/// (unless the subscription is cancelled), so the limit is counted as items
/// are kept, and the item that spends it ends the subscription on the
/// sending thread: the first `limit` items received, and no more wait.
/// With `.bufferingNewest(n)` a kept item may still be dropped for a newer
/// one, so the limit is counted as the actor calls the handler, only for a
/// call the subscription's check allowed, and the call that spends it ends
/// the subscription and drops what still waits.
///
/// The limit ends the subscription with the same `cancel()` a token calls,
/// and whichever cancel removes the subscription decides what still waits:
/// the limit's, and the items it counted are delivered; any other (the
/// token's, `unsubscribeAll`, the source's end), and nothing more is, also
/// of what the limit had counted. A delivery that finds the subscription
/// removed while the limit's cancel has not returned puts its items back and
/// leaves them to that cancel, which starts the next job when it won.
final class ActorMailbox<A: Actor, Item: Sendable>: Sendable {
    private let state: Locked<State>
    private let policy: ObserverBufferingPolicy.Kind
    /// False for a mailbox that serves no subscription (a global actor's
    /// queue): it delivers everything it receives.
    private let hasSubscription: Bool
    private let handler: @Sendable (isolated A, Item) -> Void

    /// How many items one job on the actor delivers before it yields the
    /// actor to its other work.
    static var itemsPerJob: Int { 16 }

    /// Where the limit stands.
    private enum LimitEnd {
        /// Not spent.
        case none
        /// Spent; the limit's cancel of the subscription has not returned
        /// (or, before ``attach(_:)``, not started). Nothing more is accepted.
        case ending
        /// The limit's cancel removed the subscription: what it counted is
        /// still delivered.
        case ended
        /// Another cancel removed the subscription first: nothing more is
        /// delivered.
        case preempted
    }

    private struct State {
        weak var actor: A?
        /// The actor when the mailbox keeps it alive (a global actor's
        /// shared instance, which lives as long as the process); `actor` is
        /// then nil, so no weak reference is formed to it.
        var keptActor: A?
        /// Items not yet taken by a job.
        var items = MailboxQueue<Item>()
        var draining = false
        /// The subscription, once it exists.
        var subscription: SubscriptionReference?
        /// Handler calls (or, for a policy that keeps every item it
        /// accepts, items accepted) the limit still allows; `Int.max`: no limit.
        var remaining: Int
        var limitEnd = LimitEnd.none

        /// Marks a job as running and returns true when one may start: items
        /// wait, none runs, and the subscription (if the mailbox has one) is
        /// attached.
        mutating func startsJob(needsSubscription: Bool) -> Bool {
            if draining || items.count == 0 || (needsSubscription && subscription == nil) { return false }
            draining = true
            return true
        }
    }

    /// What a delivery does with its item, decided inside its read section.
    private enum Decision {
        /// Calls the handler and goes on.
        case deliver
        /// Calls the handler with the item that spent the limit, then stops.
        case deliverLast
        /// Calls nothing more; what waits is dropped.
        case stop
        /// Calls nothing; the item and the rest of the job were put back for
        /// the limit's cancel to settle.
        case wait
    }

    /// - Parameters:
    ///   - limit: `Int.max` for no limit.
    ///   - keepsActor: hold `actor` strongly (for an actor that outlives
    ///     every subscription anyway, such as a global actor's shared
    ///     instance); by default it is held weakly and its deinit ends the
    ///     subscription.
    ///   - hasSubscription: false for a mailbox no subscription owns (no
    ///     ``attach(_:)`` comes, and `limit` must be `Int.max`).
    init(
        actor: A, limit: Int, policy: ObserverBufferingPolicy = .unbounded, keepsActor: Bool = false,
        hasSubscription: Bool = true, handler: @escaping @Sendable (isolated A, Item) -> Void
    ) {
        self.policy = policy.kind
        self.hasSubscription = hasSubscription
        self.handler = handler
        state = Locked(State(remaining: limit))
        state.withLock {
            if keepsActor { $0.keptActor = actor } else { $0.actor = actor }
        }
    }

    deinit {
        let left = state.withLock { $0.items.count }
        if left > 0 { ActorMailboxCounters.queued.wrappingSubtract(left, ordering: .relaxed) }
    }

    /// Whether the limit is counted as the handler is called (a policy may
    /// drop an item it kept) rather than as items are kept.
    private var countsLimitAtDelivery: Bool {
        if case .newest = policy { return true }
        return false
    }

    /// Gives the mailbox its subscription and starts the job for what was
    /// received before it; ends the subscription at once when the limit was
    /// spent before it existed.
    func attach(_ subscription: Subscription) {
        let reference = subscription.reference
        let (spent, startsJob) = state.withLock { state -> (Bool, Bool) in
            state.subscription = reference
            if state.limitEnd == .ending { return (true, false) }
            return (false, state.startsJob(needsSubscription: hasSubscription))
        }
        if spent {
            endByLimit(reference)
        } else if startsJob {
            self.startJob()
        }
    }

    /// Called on the sending thread (and by a replay, before any send):
    /// appends `item` behind everything already received, applies the
    /// buffering policy and the limit, and starts a job when none is running.
    func receive(_ item: Item) {
        var dropped: Item?
        var droppedCount = 0
        var queuedCount = 0
        var endsSubscription: SubscriptionReference?
        let startsJob = state.withLock { state -> Bool in
            if state.limitEnd != .none { return false }
            switch policy {
            case .unbounded:
                break
            case .newest(let capacity):
                guard capacity > 0 else {
                    droppedCount = 1
                    return false
                }
                if state.items.count == capacity {
                    // Released below, once the lock is given back: its
                    // deinit may send to this subscription again.
                    dropped = state.items.removeFirst()
                    droppedCount = 1
                    queuedCount = -1
                }
            case .oldest(let capacity):
                guard state.items.count < capacity else {
                    droppedCount = 1
                    return false
                }
            }
            state.items.append(item)
            queuedCount += 1
            if state.remaining != Int.max && !countsLimitAtDelivery {
                state.remaining -= 1
                if state.remaining == 0 {
                    // Before `attach`, `attach` ends it.
                    state.limitEnd = .ending
                    endsSubscription = state.subscription
                }
            }
            return state.startsJob(needsSubscription: hasSubscription)
        }
        if queuedCount != 0 { ActorMailboxCounters.queued.wrappingAdd(queuedCount, ordering: .relaxed) }
        if droppedCount > 0 { ActorMailboxCounters.dropped.wrappingAdd(droppedCount, ordering: .relaxed) }
        withExtendedLifetime(dropped) {}
        if startsJob { self.startJob() }
        if let endsSubscription { endByLimit(endsSubscription) }
    }

    /// For a limit counted as items are kept: cancels the subscription and
    /// settles what waits. When this cancel removed it, the items counted
    /// are delivered (a job starts for those a delivery put back); when
    /// another cancel came first, they are dropped.
    private func endByLimit(_ subscription: SubscriptionReference) {
        let removed = subscription.cancel()
        var left: [Item] = []
        let startsJob = state.withLock { state -> Bool in
            state.limitEnd = removed ? .ended : .preempted
            guard removed else {
                left = state.items.removeAll()
                return false
            }
            return state.startsJob(needsSubscription: hasSubscription)
        }
        // What waited is released here, outside the lock.
        if !left.isEmpty { ActorMailboxCounters.queued.wrappingSubtract(left.count, ordering: .relaxed) }
        if startsJob { self.startJob() }
    }

    private func startJob() {
        ActorMailboxCounters.jobs.wrappingAdd(1, ordering: .relaxed)
        Task {
            await self.runJob()
            // After the next job started, if any (the count is not 0
            // between them), and after `runJob` let go of the actor.
            ActorMailboxCounters.jobs.wrappingSubtract(1, ordering: .releasing)
        }
    }

    private func runJob() async {
        guard let actor = state.withLock({ $0.actor ?? $0.keptActor }) else {
            let left = state.withLock { state -> [Item] in
                state.draining = false
                return state.items.removeAll()
            }
            // Released here, outside the lock.
            ActorMailboxCounters.queued.wrappingSubtract(left.count, ordering: .relaxed)
            return
        }
        if await deliverSome(on: actor) { startJob() }
    }

    /// Runs isolated to `actor`: delivers at most ``itemsPerJob`` items.
    /// Returns true when items remain (the caller starts the next job, which
    /// queues behind whatever else the actor has to do).
    private func deliverSome(on actor: isolated A) -> Bool {
        let (items, subscription) = state.withLock { state in
            (state.items.removeFirst(upTo: Self.itemsPerJob), state.subscription)
        }
        ActorMailboxCounters.queued.wrappingSubtract(items.count, ordering: .relaxed)
        var decision = Decision.deliver
        var dropped: [Item] = []
        for index in items.indices {
            // Decided inside the delivery's read section (see
            // `deliverIfSubscribed`): a cancel returns before the next
            // handler call starts, and a limit is spent only on a call the
            // check allowed.
            let isSubscribed = {
                decision = self.decide(subscription, rest: items[index...], dropped: &dropped)
                return decision == .deliver || decision == .deliverLast
            }
            deliverIfSubscribed(isSubscribed) { handler(actor, items[index]) }
            if decision != .deliver { break }
        }
        // Released here, outside the lock and the read section.
        if !dropped.isEmpty { ActorMailboxCounters.queued.wrappingSubtract(dropped.count, ordering: .relaxed) }
        dropped.removeAll()
        if decision == .wait { return false }
        return state.withLock { state in
            if state.items.count > 0 { return true }
            state.draining = false
            return false
        }
    }

    /// Whether the delivery of `rest.first` goes ahead. `dropped` receives
    /// what waited when the subscription has ended.
    private func decide(
        _ subscription: SubscriptionReference?, rest: ArraySlice<Item>, dropped: inout [Item]
    ) -> Decision {
        // A mailbox without a subscription delivers everything.
        guard let subscription else { return .deliver }
        if subscription.isActive {
            return countsLimitAtDelivery ? claimDelivery(subscription, dropped: &dropped) : .deliver
        }
        // The limit's end is read after `isActive`: it is set before the
        // limit's cancel, so a subscription the limit removed is seen as
        // `.ending` or `.ended` here.
        return state.withLock { state in
            switch state.limitEnd {
            case .ended where !countsLimitAtDelivery:
                return .deliver
            case .ending:
                state.items.prepend(contentsOf: rest)
                ActorMailboxCounters.queued.wrappingAdd(rest.count, ordering: .relaxed)
                state.draining = false
                return .wait
            default:
                dropped = state.items.removeAll()
                return .stop
            }
        }
    }

    /// For a limit counted at delivery, on a subscription found active:
    /// takes one handler call from the limit. The call that spends it ends
    /// the subscription and drops what still waits; it is made only when
    /// the limit's cancel is the one that removed the subscription.
    private func claimDelivery(_ subscription: SubscriptionReference, dropped: inout [Item]) -> Decision {
        let decision = state.withLock { state -> Decision in
            if state.remaining == Int.max { return .deliver }
            if state.remaining == 0 { return .stop }
            state.remaining -= 1
            guard state.remaining == 0 else { return .deliver }
            state.limitEnd = .ending
            dropped = state.items.removeAll()
            return .deliverLast
        }
        guard decision == .deliverLast else { return decision }
        let removed = subscription.cancel()
        state.withLock { $0.limitEnd = removed ? .ended : .preempted }
        return removed ? .deliverLast : .stop
    }
}

/// The items of an ``ActorMailbox`` in the order received: a ring that
/// grows by doubling, so taking or dropping the first item releases it at
/// once and the storage holds no more than twice the largest backlog (the
/// capacity a bounded policy allows).
struct MailboxQueue<Item> {
    private var slots: [Item?] = []
    private var head = 0
    private(set) var count = 0

    /// Storage kept when the queue empties; a larger one is freed.
    private static var retainedCapacity: Int { 1_024 }

    mutating func append(_ item: Item) {
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = item
        count += 1
    }

    /// The first item, taken out (the queue must not be empty).
    mutating func removeFirst() -> Item {
        let item = slots[head].take()!
        head = (head + 1) % slots.count
        count -= 1
        if count == 0 { reset() }
        return item
    }

    /// Up to `limit` items from the front, in order.
    mutating func removeFirst(upTo limit: Int) -> [Item] {
        var taken: [Item] = []
        taken.reserveCapacity(min(limit, count))
        while taken.count < limit && count > 0 { taken.append(removeFirst()) }
        return taken
    }

    /// Every item, in order; the queue is left empty.
    mutating func removeAll() -> [Item] {
        removeFirst(upTo: count)
    }

    /// Puts `items` back in front of what waits, in their order.
    mutating func prepend(contentsOf items: some Collection<Item>) {
        var rebuilt = MailboxQueue()
        for item in items { rebuilt.append(item) }
        while count > 0 { rebuilt.append(removeFirst()) }
        self = rebuilt
    }

    private mutating func grow() {
        var larger = [Item?](repeating: nil, count: max(4, slots.count * 2))
        for index in 0..<count { larger[index] = slots[(head + index) % slots.count].take() }
        slots = larger
        head = 0
    }

    private mutating func reset() {
        head = 0
        if slots.count > Self.retainedCapacity { slots = [] }
    }
}

/// The process-wide counts of actor mailboxes, read by
/// ``ObserverCore/statistics``.
package enum ActorMailboxCounters {
    /// Items received and not yet taken for delivery, in every mailbox.
    static let queued = HeapAtomicWord<Int>(0)
    /// Drain jobs started and not finished, in every mailbox: 0 when no
    /// actor subscription has a delivery waiting or running
    /// (ObserverSwiftTesting's settle waits for it).
    package static let jobs = HeapAtomicWord<Int>(0)
    /// Items a buffering policy dropped, since the process started.
    static let dropped = HeapAtomicWord<Int>(0)
}
