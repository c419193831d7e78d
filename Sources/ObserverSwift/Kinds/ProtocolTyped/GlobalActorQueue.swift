import ObserverEngine

/// Calls made on one global actor, in the order they were enqueued: where a
/// registry calls an observer whose conformance is isolated to a global
/// actor other than the main actor (`extension Job: @Worker P`).
///
/// There is one queue per global actor in the process, shared by every
/// observer, protocol and registry that calls on it (as every main-actor
/// call shares the main queue): calls made from one thread run on the actor
/// in the order they were made, whichever protocol view or registry made
/// them.
///
/// Built on an ``ActorMailbox`` for the actor's shared instance, so senders
/// never wait and the calls run on the actor one after another, interleaved
/// with its other work.
final class GlobalActorQueue: Sendable {
    /// One call to run on the actor.
    struct Call: Sendable {
        let work: @Sendable () -> Void
    }

    private let enqueueCall: @Sendable (Call) -> Void

    /// The queue of each global actor used so far, by its type. A queue lives as long as the process, as its actor
    /// does; there are as many as the program has global actors.
    private static let queues = Locked<[GlobalActorType: GlobalActorQueue]>([:])

    /// The queue of the global actor whose type the runtime gave
    /// (``ConformanceIsolation/otherGlobalActor(_:)``); nil when that type is
    /// not a `GlobalActor`. Every call with the same type returns the same
    /// queue.
    static func queue(for key: GlobalActorType) -> GlobalActorQueue? {
        if let existing = queues.withLock({ $0[key] }) { return existing }
        // Made outside the lock: reading the actor's `shared` may run its
        // initializer, which is the program's code.
        guard let actor = key.shared else { return nil }
        let made = GlobalActorQueue(enqueueCall: mailbox(on: actor))
        return queues.withLock { queues in
            if let existing = queues[key] { return existing }
            queues[key] = made
            return made
        }
    }

    private init(enqueueCall: @escaping @Sendable (Call) -> Void) {
        self.enqueueCall = enqueueCall
    }

    private static func mailbox<A: Actor>(on actor: A) -> @Sendable (Call) -> Void {
        // Kept strongly: a global actor's shared instance lives as long as
        // the process, and a weak reference to it would allocate a side
        // table that is never freed.
        let mailbox = ActorMailbox<A, Call>(actor: actor, limit: Int.max, keepsActor: true, hasSubscription: false) {
            _, call in call.work()
        }
        return { mailbox.receive($0) }
    }

    /// Runs `work` on the actor after every call enqueued before it; the
    /// mailbox runs it inside a read section (see `deliverIfSubscribed`).
    func enqueue(_ work: @escaping @Sendable () -> Void) {
        enqueueCall(Call(work: work))
    }
}
