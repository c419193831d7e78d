/// Calls made on one global actor, in the order they were enqueued: where a
/// registry calls an observer whose conformance is isolated to a global
/// actor other than the main actor (`extension Job: @Worker P`).
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

    /// The queue of the global actor whose type's metadata the runtime gave
    /// (``ConformanceIsolation/otherGlobalActor(_:)``); nil when that type is
    /// not a `GlobalActor`.
    init?(globalActorMetadata: UnsafeRawPointer) {
        guard let actor = ConformanceIsolation.globalActor(of: globalActorMetadata) else { return nil }
        enqueueCall = Self.mailbox(on: actor)
    }

    private static func mailbox<A: Actor>(on actor: A) -> @Sendable (Call) -> Void {
        // Kept strongly: a global actor's shared instance lives as long as
        // the process, and a weak reference to it would allocate a side
        // table that is never freed.
        let mailbox = ActorMailbox<A, Call>(actor: actor, limit: Int.max, keepsActor: true) { _, call in call.work() }
        return { mailbox.receive($0) }
    }

    /// Runs `work` on the actor after every call enqueued before it; the
    /// mailbox runs it inside a read section (see `deliverIfSubscribed`).
    func enqueue(_ work: @escaping @Sendable () -> Void) {
        enqueueCall(Call(work: work))
    }
}
