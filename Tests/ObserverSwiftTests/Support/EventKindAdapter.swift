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

/// `KeyedEvent<Double, Int>` under one key (1.0), plus subscriptions under
/// `Double.nan`, which no send reaches.
struct KeyedEventKindAdapter: ReliabilityObserverKind {
    var name: String { "KeyedEvent" }
    func makeSource() -> any ReliabilitySource { KeyedEventReliabilitySource() }
}

final class KeyedEventReliabilitySource: ReliabilitySource {
    let event = KeyedEvent<Double, Int>()

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription {
        event.subscribe(key: 1, handler)
    }

    var supportsTargets: Bool { true }

    func subscribe(target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void)
        -> Subscription
    {
        event.subscribe(target, key: 1, handler: handler)
    }

    func unsubscribe(target: ReliabilityTarget) -> Int { event.unsubscribe(target) }
    func unsubscribeAll() -> Int { event.unsubscribeAll() }
    func send(_ value: Int) {
        event.send(value, forKey: 1)
        event.send(value, forKey: .nan)  // reaches nobody
    }
    var subscribersCount: Int { event.subscribersCount }

    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription? {
        event.subscribe(key: 1, delivery: .queue(queue), handler)
    }

    func subscribeUnreachableKey(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription? {
        event.subscribe(key: .nan, handler)
    }
}

/// `ObservableValue<Int>`: closures are `addObserver` (no replay), targets
/// are `bind`, a send sets the value.
struct ObservableValueKindAdapter: ReliabilityObserverKind {
    var name: String { "ObservableValue" }
    func makeSource() -> any ReliabilitySource { ObservableValueReliabilitySource() }
}

final class ObservableValueReliabilitySource: ReliabilitySource {
    let value = ObservableValue(0)

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription {
        value.subscribe(handler)
    }

    var supportsTargets: Bool { true }

    func subscribe(target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void)
        -> Subscription
    {
        value.subscribe(target, handler: handler)
    }

    func unsubscribe(target: ReliabilityTarget) -> Int { value.unsubscribe(target) }
    func unsubscribeAll() -> Int { value.unsubscribeAll() }
    func send(_ newValue: Int) { value.value = newValue }
    var subscribersCount: Int { value.subscribersCount }

    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription? {
        value.subscribe(delivery: .queue(queue), handler)
    }

    func replayThenWaitInsideThrows() -> Bool? {
        let threw = KeyedCounter()
        let token = value.subscribe(replay: true) { _ in
            // Inside the replay (before addObserver returns) or a later set.
            do { try ObserverCore.waitForDeliveriesInFlight() } catch { threw.increment() }
        }
        token.cancel()
        return threw.value > 0
    }
}
