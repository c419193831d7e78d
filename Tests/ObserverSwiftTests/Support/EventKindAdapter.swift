import Dispatch
import ObserverSwift

/// `Event<Int>` as a reliability-test observer kind.
struct EventKindAdapter: ReliabilityObserverKind {
    var name: String { "Event" }
    func makeSource() -> any ReliabilitySource { EventReliabilitySource() }
}

final class EventReliabilitySource: ReliabilitySource {
    let event = Event<Int>()

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription {
        event.subscribe(handler)
    }

    var supportsTargets: Bool { true }

    func subscribe(
        target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void
    ) -> Subscription {
        event.subscribe(target, handler: handler)
    }

    func unsubscribe(target: ReliabilityTarget) -> Int { event.unsubscribe(target) }
    func unsubscribeAll() -> Int { event.unsubscribeAll() }
    func send(_ value: Int) { event.send(value) }
    var subscribersCount: Int { event.subscribersCount }

    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription? {
        event.subscribe(delivery: .queue(queue), handler)
    }
}
