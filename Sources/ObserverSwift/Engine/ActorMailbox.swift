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
/// received.
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
/// one, so the limit is counted as the actor calls the handler, and the
/// call that spends it ends the subscription and drops what still waits.
final class ActorMailbox<A: Actor, Item: Sendable>: Sendable {
    private let state: Locked<State>
    private let policy: ObserverBufferingPolicy.Kind
    private let handler: @Sendable (isolated A, Item) -> Void

    /// How many items one job on the actor delivers before it yields the
    /// actor to its other work.
    static var itemsPerJob: Int { 16 }

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
        /// Set when the limit is spent: items accepted until then are still
        /// delivered (all but `.bufferingNewest`'s, which ends with the call
        /// that spends it), nothing more is accepted.
        var endedByLimit = false
    }

    /// - Parameters:
    ///   - limit: `Int.max` for no limit.
    ///   - keepsActor: hold `actor` strongly (for an actor that outlives
    ///     every subscription anyway, such as a global actor's shared
    ///     instance); by default it is held weakly and its deinit ends the
    ///     subscription.
    init(
        actor: A, limit: Int, policy: ObserverBufferingPolicy = .unbounded, keepsActor: Bool = false,
        handler: @escaping @Sendable (isolated A, Item) -> Void
    ) {
        self.policy = policy.kind
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

    /// Gives the mailbox its subscription; cancels it at once when the limit
    /// was spent before the subscription existed.
    func attach(_ subscription: Subscription) {
        let reference = subscription.reference
        let spent = state.withLock { state -> Bool in
            state.subscription = reference
            return state.endedByLimit
        }
        if spent { reference.cancel() }
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
            if state.endedByLimit { return false }
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
                    state.endedByLimit = true
                    endsSubscription = state.subscription
                }
            }
            if state.draining { return false }
            state.draining = true
            return true
        }
        if queuedCount != 0 { ActorMailboxCounters.queued.wrappingAdd(queuedCount, ordering: .relaxed) }
        if droppedCount > 0 { ActorMailboxCounters.dropped.wrappingAdd(droppedCount, ordering: .relaxed) }
        withExtendedLifetime(dropped) {}
        endsSubscription?.cancel()
        if startsJob { startJob() }
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
        for item in items {
            if countsLimitAtDelivery && !claimDelivery() { break }
            // Checked before each delivery, inside the delivery's read
            // section (see `deliverIfSubscribed`): a cancel returns before
            // the next handler call starts. The limit's end is read after
            // `isActive`: it is set before the limit's cancel, so a
            // subscription the limit ended is seen as ended by it.
            let isSubscribed = {
                subscription?.isActive ?? true || self.state.withLock { $0.endedByLimit }
            }
            deliverIfSubscribed(isSubscribed) { handler(actor, item) }
        }
        return state.withLock { state in
            if state.items.count > 0 { return true }
            state.draining = false
            return false
        }
    }

    /// For a limit counted at delivery: takes one handler call from it;
    /// false once it is spent. The call that spends it ends the
    /// subscription and drops what still waits.
    private func claimDelivery() -> Bool {
        var ends: SubscriptionReference?
        let (granted, left) = state.withLock { state -> (Bool, [Item]) in
            if state.remaining == Int.max { return (true, []) }
            if state.remaining == 0 { return (false, []) }
            state.remaining -= 1
            guard state.remaining == 0 else { return (true, []) }
            state.endedByLimit = true
            ends = state.subscription
            return (true, state.items.removeAll())
        }
        // What still waited is released here, outside the lock.
        if !left.isEmpty { ActorMailboxCounters.queued.wrappingSubtract(left.count, ordering: .relaxed) }
        ends?.cancel()
        return granted
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
