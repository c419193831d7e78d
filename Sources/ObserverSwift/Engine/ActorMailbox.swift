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
/// received. Items a `limit:` claimed before the limit ended the
/// subscription are delivered.
///
/// What waits is bounded by the buffering policy: `.unbounded` keeps every
/// item (the default, as for a dispatch queue); `.bufferingNewest(n)` and
/// `.bufferingOldest(n)` keep `n` and count what they drop. Both counts are
/// visible process-wide in ``ObserverCore/statistics``.
final class ActorMailbox<A: Actor, Item: Sendable>: Sendable {
    private let state = Locked(State())
    private let limit: DeliveryLimit
    private let policy: ObserverBufferingPolicy.Kind
    private let handler: @Sendable (isolated A, Item) -> Void

    /// How many items one job on the actor delivers before it yields the
    /// actor to its other work.
    static var itemsPerJob: Int { 16 }

    private struct State {
        weak var actor: A?
        /// Items not yet taken by a job: `items[head...]`.
        var items: [Item] = []
        var head = 0
        var draining = false
        /// The subscription, once it exists.
        var subscription: SubscriptionReference?
        /// Set before the limit's last claim ends the subscription: what was
        /// received until then is still delivered.
        var endedByLimit = false

        var queuedCount: Int { items.count - head }

        /// Takes up to `count` items from the front.
        mutating func take(_ count: Int) -> ArraySlice<Item> {
            let end = min(items.count, head + count)
            let taken = items[head..<end]
            head = end
            if head == items.count {
                items.removeAll(keepingCapacity: items.count <= 1_024)
                head = 0
            } else if head >= 1_024 && head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return taken
        }
    }

    /// - Parameter limit: `Int.max` for no limit.
    init(
        actor: A, limit: Int, policy: ObserverBufferingPolicy = .unbounded,
        handler: @escaping @Sendable (isolated A, Item) -> Void
    ) {
        self.limit = DeliveryLimit(limit)
        self.policy = policy.kind
        self.handler = handler
        state.withLock { $0.actor = actor }
    }

    deinit {
        let left = state.withLock { $0.queuedCount }
        if left > 0 { ActorMailboxCounters.queued.wrappingSubtract(left, ordering: .relaxed) }
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

    /// Called on the sending thread: claims from the limit, then enqueues.
    func receive(_ item: Item) {
        guard limit.isBounded else {
            enqueue(item)
            return
        }
        let claim = limit.claim()
        guard claim.granted else { return }
        guard claim.last else {
            enqueue(item)
            return
        }
        let subscription = state.withLock { state -> SubscriptionReference? in
            state.endedByLimit = true
            return state.subscription
        }
        enqueue(item)
        subscription?.cancel()
    }

    /// Appends `item` behind everything already received (not counted
    /// against the limit: a replay uses it directly), applies the buffering
    /// policy, and starts a job when none is running.
    func enqueue(_ item: Item) {
        var dropped = 0
        let startsJob = state.withLock { state -> Bool in
            switch policy {
            case .unbounded:
                state.items.append(item)
            case .newest(let capacity):
                state.items.append(item)
                if state.queuedCount > capacity {
                    dropped = state.queuedCount - capacity
                    state.head += dropped
                }
            case .oldest(let capacity):
                if state.queuedCount < capacity {
                    state.items.append(item)
                } else {
                    dropped = 1
                }
            }
            if state.draining { return false }
            state.draining = true
            return true
        }
        ActorMailboxCounters.queued.wrappingAdd(1 - dropped, ordering: .relaxed)
        if dropped > 0 { ActorMailboxCounters.dropped.wrappingAdd(dropped, ordering: .relaxed) }
        if startsJob { startJob() }
    }

    private func startJob() {
        Task { await self.runJob() }
    }

    private func runJob() async {
        guard let actor = state.withLock({ $0.actor }) else {
            let left = state.withLock { state -> Int in
                let left = state.queuedCount
                state.items.removeAll()
                state.head = 0
                state.draining = false
                return left
            }
            ActorMailboxCounters.queued.wrappingSubtract(left, ordering: .relaxed)
            return
        }
        if await deliverSome(on: actor) { startJob() }
    }

    /// Runs isolated to `actor`: delivers at most ``itemsPerJob`` items.
    /// Returns true when items remain (the caller starts the next job, which
    /// queues behind whatever else the actor has to do).
    private func deliverSome(on actor: isolated A) -> Bool {
        let (items, subscription) = state.withLock { state in
            (state.take(Self.itemsPerJob), state.subscription)
        }
        ActorMailboxCounters.queued.wrappingSubtract(items.count, ordering: .relaxed)
        for item in items {
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
            if state.queuedCount > 0 { return true }
            state.draining = false
            return false
        }
    }
}

/// The process-wide counts of actor mailboxes, read by
/// ``ObserverCore/statistics``.
enum ActorMailboxCounters {
    /// Items received and not yet taken for delivery, in every mailbox.
    static let queued = HeapAtomicWord<Int>(0)
    /// Items a buffering policy dropped, since the process started.
    static let dropped = HeapAtomicWord<Int>(0)
}
