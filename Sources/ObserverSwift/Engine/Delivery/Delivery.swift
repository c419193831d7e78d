import CObserverCore
import Dispatch
import Foundation

/// Where a handler or an observer runs when it is not isolated to an actor:
/// on the sending thread or on a dispatch queue. Closures
/// (`subscribe(delivery:)`), weak targets and registries
/// (``ObserverRegistry``, ``KeyedObserverRegistry``, key-path observation)
/// take the same values.
///
/// Running on an actor is not a delivery: it follows the handler's
/// isolation. A closure written in `@MainActor` code runs on the main actor
/// with no `delivery:` at all, an isolated conformance
/// (`extension Screen: @MainActor Observer`) runs on its actor, and
/// `subscribe(isolatedTo:)` runs on the actor it names. A registry
/// observer that is a plain class and should be called on the main queue
/// says `.queue(.main)`.
public struct Delivery: Sendable {
    /// Where the engine runs a delivery. `mainActor` is reached only from a
    /// handler's or a conformance's isolation, never from a public value.
    @usableFromInline
    enum Route: Sendable {
        case synchronous
        case queue(DispatchQueue)
        /// On the main actor: synchronously when the send already runs on
        /// the main actor and no earlier main-actor delivery is still
        /// queued, otherwise enqueued on the main queue (behind those, in
        /// order).
        case mainActor
    }

    @usableFromInline
    let route: Route

    @inlinable
    init(route: Route) {
        self.route = route
    }

    /// On the sending thread, before `send` returns (the default).
    @inlinable
    public static var synchronous: Delivery { Delivery(route: .synchronous) }

    /// Asynchronously on `queue`, in the order the sends enqueued.
    @inlinable
    public static func queue(_ queue: DispatchQueue) -> Delivery { Delivery(route: .queue(queue)) }

    /// The engine's main-actor delivery, for handlers and conformances
    /// isolated to the main actor.
    @usableFromInline
    static var onMainActor: Delivery { Delivery(route: .mainActor) }

    /// The queue this delivery enqueues on; nil when it runs on the sending
    /// thread or the main actor.
    package var queue: DispatchQueue? {
        if case .queue(let queue) = route { return queue }
        return nil
    }

    /// Whether this delivery runs on the main actor.
    package var isOnMainActor: Bool {
        if case .mainActor = route { return true }
        return false
    }

    /// Not a delivery: code runs on the main actor by being isolated to it.
    @available(
        *, unavailable,
        message:
            "main-actor delivery follows the handler's isolation: leave delivery: out and write the handler in @MainActor code (or mark it @MainActor); a registry observer that is a plain class writes .queue(.main)"
    )
    public static var mainActor: Delivery {
        fatalError("unavailable: main-actor delivery follows the handler's isolation")
    }
}

/// Carries a value into a `@Sendable` closure whose thread hand-off the
/// caller has documented (a handler given a queue runs there by contract).
@usableFromInline
package struct UncheckedSendable<Wrapped>: @unchecked Sendable {
    @usableFromInline package let wrapped: Wrapped
    @usableFromInline package init(_ wrapped: Wrapped) { self.wrapped = wrapped }
}

extension Delivery {
    /// Runs `work` where this delivery says: at once when synchronous (or
    /// main-actor on the main actor, inside the caller's send, when nothing
    /// queued for the main actor would be overtaken), otherwise enqueued.
    ///
    /// Every observer kind's queued and main-queue deliveries go through
    /// here, and this is where cancellation reaches them: where the work
    /// runs, `isSubscribed` is checked and `work` called inside one read
    /// section. So a delivery that has not started when `cancel()` returns
    /// is dropped; `cancelAndWait()` (which waits for read sections) waits
    /// for one that has started; and a wait called from inside it throws
    /// `waitInsideDelivery` instead of waiting for itself.
    @inline(__always)
    func run(ifSubscribed isSubscribed: @escaping () -> Bool, _ work: @escaping () -> Void) {
        switch route {
        case .synchronous:
            work()
        case .queue(let queue):
            let job = UncheckedSendable(QueuedDelivery(isSubscribed: isSubscribed, work: work))
            queue.async { job.wrapped.run() }
        case .mainActor:
            if MainActorDeliveries.mayRunInline {
                work()
            } else {
                MainActorDeliveries.enqueue(QueuedDelivery(isSubscribed: isSubscribed, work: work))
            }
        }
    }
}

/// Main-actor deliveries: run at once when the send is on the main actor,
/// unless one enqueued earlier has not run yet, which keeps every observer's
/// values in order (a set on a background thread enqueues; a later set on
/// the main actor must not overtake it).
enum MainActorDeliveries {
    /// Deliveries enqueued on the main queue that have not started.
    /// Incremented before the enqueue, decremented when the job starts (on
    /// the main actor). Acquire/release: a sender that is ordered after an
    /// enqueue (an `ObservableValue`'s turn orders its sets) sees the count.
    static let queued = HeapAtomicWord<Int>(0)

    /// Set on the main queue: true wherever the main queue's work runs.
    /// On Linux that is not always the main thread: after a top-level `await`
    /// in `main.swift`, the main thread parks in `dispatch_main()` and the
    /// main queue (the main actor's executor) is drained on another thread.
    static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the calling code runs on the main actor: on the main thread
    /// (top-level code, a run loop) or inside the main queue's work.
    static var isOnMainActor: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }

    /// On the main actor with nothing queued for it.
    static var mayRunInline: Bool {
        isOnMainActor && queued.load(ordering: .acquiring) == 0
    }

    static func enqueue(_ delivery: QueuedDelivery) {
        queued.wrappingAdd(1, ordering: .releasing)
        let job = UncheckedSendable(delivery)
        DispatchQueue.main.async {
            queued.wrappingSubtract(1, ordering: .releasing)
            job.wrapped.run()
        }
    }
}

/// One enqueued delivery and the check that it is still wanted.
struct QueuedDelivery {
    let isSubscribed: () -> Bool
    let work: () -> Void

    func run() {
        deliverIfSubscribed(isSubscribed, work)
    }
}

/// Where every deferred delivery (a queue's, the main queue's, an actor
/// mailbox's) meets cancellation: checks `isSubscribed` and runs `work`
/// inside one read section, so that `cancelAndWait()` waits for a delivery
/// that has started and a wait called from inside it throws.
@inline(__always)
func deliverIfSubscribed(_ isSubscribed: () -> Bool, _ work: () -> Void) {
    let reader = oc_read_begin()
    if isSubscribed() { work() }
    oc_read_end(reader)
}

/// A delivery budget for `limit:` subscriptions, exact under concurrent
/// sends: `claim()` succeeds exactly `limit` times in total.
struct DeliveryLimit: ~Copyable {
    /// The budget left, in a word of its own, allocated only for a bounded
    /// limit (its owners' first stored property is their expiry's words); nil
    /// for `.unlimited`: then nothing is counted and nothing is allocated.
    private let remaining: AtomicWord<Int>?

    /// Pass `Int.max` for no limit.
    init(_ limit: Int) {
        guard limit != Int.max else {
            remaining = nil
            return
        }
        let storage = UnsafeMutablePointer<AtomicWordStorage<Int>>.allocate(capacity: 1)
        storage.initialize(to: AtomicWordStorage(limit))
        remaining = AtomicWord(at: storage)
    }

    deinit {
        remaining?.word.deallocate()
    }

    /// False for `.unlimited`.
    var isBounded: Bool { remaining != nil }

    /// Takes one delivery. `granted` is false once the budget is spent;
    /// `last` is true for the claim that spent it. Unbounded: always granted,
    /// never last.
    func claim() -> (granted: Bool, last: Bool) {
        guard let remaining else { return (true, false) }
        // Relaxed: the counter orders nothing else; the compare-exchange
        // alone makes each unit of budget go to exactly one claimer.
        var current = remaining.load(ordering: .relaxed)
        while current > 0 {
            let (exchanged, original) = remaining.compareExchange(
                expected: current, desired: current - 1, ordering: .relaxed)
            if exchanged { return (true, current == 1) }
            current = original
        }
        return (false, false)
    }

    var isSpent: Bool {
        guard let remaining else { return false }
        return remaining.load(ordering: .relaxed) <= 0
    }
}
