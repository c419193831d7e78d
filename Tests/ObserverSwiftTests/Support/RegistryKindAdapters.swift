import Dispatch
import Foundation

import ObserverEngine
@testable import ObserverSwift

/// What a registry's observers conform to in the reliability tests.
protocol ReliabilityIntObserver: AnyObject {
    func receive(_ value: Int)
}

/// A closure subscription as a registered observer: the object the registry
/// holds weakly, calling the handler.
final class ReliabilityClosureObserver: ReliabilityIntObserver, Sendable {
    let handler: @Sendable (Int) -> Void
    init(_ handler: @escaping @Sendable (Int) -> Void) { self.handler = handler }
    func receive(_ value: Int) { handler(value) }
}

/// A registry holds observers weakly; a closure subscription's observer is
/// kept here until its registration ends (its token cancelled, or every
/// observer removed), so that its captures live exactly as long as an
/// `Event` subscription's would.
final class ReliabilityObserverKeeper: @unchecked Sendable {
    // @unchecked: `kept` is guarded by `lock`.
    private let lock = NSLock()
    private var kept: [ObjectIdentifier: ReliabilityClosureObserver] = [:]

    func keep(_ observer: ReliabilityClosureObserver) {
        lock.withLock { kept[ObjectIdentifier(observer)] = observer }
    }

    /// Releases outside the lock (a release may run a deinit).
    func release(_ identifier: ObjectIdentifier) {
        let released = lock.withLock { kept.removeValue(forKey: identifier) }
        withExtendedLifetime(released) {}
    }

    func releaseAll() {
        let released = lock.withLock { () -> [ObjectIdentifier: ReliabilityClosureObserver] in
            defer { kept.removeAll() }
            return kept
        }
        withExtendedLifetime(released) {}
    }
}

/// The token a registry adapter returns: the registration's own token, which
/// also lets the keeper release the observer once the registration ended.
final class ReliabilityRegistrationCanceller: SubscriptionCanceller, @unchecked Sendable {
    // @unchecked: immutable.
    let registration: Subscription
    let keeper: ReliabilityObserverKeeper
    let identifier: ObjectIdentifier

    init(registration: Subscription, keeper: ReliabilityObserverKeeper, identifier: ObjectIdentifier) {
        self.registration = registration
        self.keeper = keeper
        self.identifier = identifier
    }

    func cancelSubscription() -> Bool {
        // Only the cancel that ended the registration releases: once the
        // observer is released, another object may get its address.
        let cancelled = registration.cancel()
        if cancelled { keeper.release(identifier) }
        return cancelled
    }

    var isSubscriptionActive: Bool { registration.isActive }
}

/// `ObserverRegistry` as a reliability-test observer kind: a closure is an
/// observer object conforming to `ReliabilityIntObserver`, a send is
/// `withObservers`. No weak-target form (an observer is its own target).
struct ObserverRegistryKindAdapter: ReliabilityObserverKind {
    var name: String { "ObserverRegistry" }
    func makeSource() -> any ReliabilitySource { ObserverRegistryReliabilitySource() }
}

final class ObserverRegistryReliabilitySource: ReliabilitySource {
    let registry = ObserverRegistry()
    let keeper = ReliabilityObserverKeeper()

    private func register(_ observer: ReliabilityClosureObserver, delivery: Delivery) -> Subscription {
        keeper.keep(observer)
        let registration = registry.addObserver(observer, delivery: delivery)
        return Subscription(
            canceller: ReliabilityRegistrationCanceller(
                registration: registration, keeper: keeper, identifier: ObjectIdentifier(observer)))
    }

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription {
        register(ReliabilityClosureObserver(handler), delivery: .synchronous)
    }

    var supportsTargets: Bool { false }

    func subscribe(
        target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void
    ) -> Subscription {
        Subscription.inactive
    }

    func unsubscribe(target: ReliabilityTarget) -> Int { registry.removeObserver(target) ? 1 : 0 }

    func unsubscribeAll() -> Int {
        let removed = registry.removeAllObservers()
        keeper.releaseAll()
        return removed
    }

    func send(_ value: Int) {
        registry.withObservers { (observer: ReliabilityIntObserver) in observer.receive(value) }
    }

    var subscribersCount: Int { registry.observerCount }

    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription? {
        register(ReliabilityClosureObserver(handler), delivery: .queue(queue))
    }
}

/// `KeyedObserverRegistry` under one key (1.0); each send also notifies
/// `Double.nan`, a key no observer can be found under.
struct KeyedObserverRegistryKindAdapter: ReliabilityObserverKind {
    var name: String { "KeyedObserverRegistry" }
    func makeSource() -> any ReliabilitySource { KeyedObserverRegistryReliabilitySource() }
}

final class KeyedObserverRegistryReliabilitySource: ReliabilitySource {
    let registry = KeyedObserverRegistry()
    let keeper = ReliabilityObserverKeeper()

    private func register(
        _ observer: ReliabilityClosureObserver, key: Double, delivery: Delivery
    ) -> Subscription {
        keeper.keep(observer)
        let registration = registry.addObserver(observer, key: key, delivery: delivery)
        return Subscription(
            canceller: ReliabilityRegistrationCanceller(
                registration: registration, keeper: keeper, identifier: ObjectIdentifier(observer)))
    }

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription {
        register(ReliabilityClosureObserver(handler), key: 1, delivery: .synchronous)
    }

    var supportsTargets: Bool { false }

    func subscribe(
        target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void
    ) -> Subscription {
        Subscription.inactive
    }

    func unsubscribe(target: ReliabilityTarget) -> Int { registry.removeObserver(target) }

    func unsubscribeAll() -> Int {
        let removed = registry.removeAllObservers()
        keeper.releaseAll()
        return removed
    }

    func send(_ value: Int) {
        registry.withObservers(forKey: 1.0) { (_: Double, observer: ReliabilityIntObserver) in observer.receive(value) }
        registry.withObservers(forKey: Double.nan) { (_: Double, observer: ReliabilityIntObserver) in
            observer.receive(value)  // reaches nobody
        }
    }

    var subscribersCount: Int { registry.observerCount(forKey: 1.0) }

    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription? {
        register(ReliabilityClosureObserver(handler), key: 1, delivery: .queue(queue))
    }
}
