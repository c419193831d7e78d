/// Delivers items to a handler isolated to a weakly held actor, in the
/// order they were received: senders append, one task at a time drains the
/// mailbox on the actor.
///
/// Every actor subscription is a weak-target subscription (the actor is the
/// target) whose synchronous handler calls ``receive(_:)``. The mailbox
/// keeps the token so that a cancelled subscription delivers nothing more,
/// even what it had already received.
final class ActorMailbox<A: Actor, Item: Sendable>: Sendable {
    private let state = Locked(State())
    private let limit: DeliveryLimit
    private let handler: @Sendable (isolated A, Item) -> Void

    private struct State {
        weak var actor: A?
        var items: [Item] = []
        var draining = false
        /// The token, once the subscription exists.
        var subscription: Subscription?
        /// Set when the limit's last claim ended the subscription: what was
        /// received before still counts.
        var endedByLimit = false
    }

    /// - Parameter limit: `Int.max` for no limit.
    init(actor: A, limit: Int, handler: @escaping @Sendable (isolated A, Item) -> Void) {
        self.limit = DeliveryLimit(limit)
        self.handler = handler
        state.withLock { $0.actor = actor }
    }

    /// Gives the mailbox its subscription's token; cancels it at once when
    /// the limit was spent before the token existed.
    func attach(_ subscription: Subscription) {
        let spent = state.withLock { state -> Bool in
            state.subscription = subscription
            return state.endedByLimit
        }
        if spent { subscription.cancel() }
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
        let subscription = state.withLock { state -> Subscription? in
            state.endedByLimit = true
            return state.subscription
        }
        enqueue(item)
        subscription?.cancel()
    }

    /// Appends `item` behind everything already received (not counted
    /// against the limit: a replay uses it directly) and starts a drain when
    /// none is running.
    func enqueue(_ item: Item) {
        let startsDrain = state.withLock { state -> Bool in
            state.items.append(item)
            if state.draining { return false }
            state.draining = true
            return true
        }
        if startsDrain {
            Task { await self.drain() }
        }
    }

    private func drain() async {
        guard let actor = state.withLock({ $0.actor }) else {
            state.withLock { state in
                state.items.removeAll()
                state.draining = false
            }
            return
        }
        await deliverAll(on: actor)
    }

    /// Runs isolated to `actor`: delivers batches until the mailbox is empty.
    private func deliverAll(on actor: isolated A) {
        while true {
            let (batch, subscription, endedByLimit) = state.withLock { state in
                let batch = state.items
                state.items.removeAll()
                if batch.isEmpty { state.draining = false }
                return (batch, state.subscription, state.endedByLimit)
            }
            if batch.isEmpty { return }
            for item in batch {
                // Checked before each delivery: a cancel returns before the
                // next handler call starts (see `deliverIfSubscribed`).
                let isSubscribed = { endedByLimit || subscription?.isActive ?? true }
                deliverIfSubscribed(isSubscribed) { handler(actor, item) }
            }
        }
    }
}
