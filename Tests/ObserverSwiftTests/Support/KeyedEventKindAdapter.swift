import Dispatch
import ObserverSwift
import ObserverTestSupport

/// `KeyedEvent<Double, Int>` as a reliability-test observer kind: a send is
/// `send(_:forKey: 1)` (and one to `Double.nan`, which reaches nobody).
///
/// Subscriptions alternate between the key's two box shapes, so that every
/// row runs over both: one key (`subscribe(key: 1)`, `subscribe(_:key: 1)`)
/// and two keys (`subscribe(keys: [1, 2])`, `subscribe(_:keys: [1, 2])`),
/// one subscription stored under key 1 and key 2, which its cancel, its
/// target's death or an unsubscribe removes from both. Nothing sends to key
/// 2, so a two-key subscription, too, receives each send once.
///
/// Removals count key registrations (a subscription over two keys counts 2);
/// the source reports subscriptions, as every kind does, by subtracting one
/// for each live two-key subscription it removes.
struct KeyedEventKindAdapter: ReliabilityObserverKind {
    var name: String { "KeyedEvent" }
    func makeSource() -> any ReliabilitySource { KeyedEventReliabilitySource() }
}

final class KeyedEventReliabilitySource: ReliabilitySource {
    let event = KeyedEvent<Double, Int>()
    /// The keys of a two-key subscription.
    static let twoKeys: [Double] = [1, 2]

    /// The two-key subscriptions made and not yet seen ended: their tokens
    /// and their targets' identities.
    private let twoKeySubscriptions = SharedVariable<[(token: Subscription, target: ObjectIdentifier?)]>([])
    /// Subscriptions made so far; every other one is over two keys.
    private let made = SharedVariable(0)

    private func nextSpansTwoKeys() -> Bool {
        made.update { made in
            made += 1
            return made % 2 == 0
        }
    }

    private func recordTwoKeys(_ token: Subscription, target: AnyObject? = nil) -> Subscription {
        twoKeySubscriptions.update { $0.append((token, target.map(ObjectIdentifier.init))) }
        return token
    }

    /// Live two-key subscriptions (of `target`, or all): what a removal of
    /// them counts twice.
    private func liveTwoKeySubscriptions(of target: AnyObject? = nil) -> Int {
        twoKeySubscriptions.update { entries in
            entries.removeAll { !$0.token.isActive }
            guard let target else { return entries.count }
            return entries.filter { $0.target == ObjectIdentifier(target) }.count
        }
    }

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription {
        guard nextSpansTwoKeys() else { return event.subscribe(key: 1, handler) }
        return recordTwoKeys(event.forKeys(Self.twoKeys).subscribe { _, value in handler(value) })
    }

    var supportsTargets: Bool { true }

    func subscribe(target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void)
        -> Subscription
    {
        guard nextSpansTwoKeys() else { return event.subscribe(target, key: 1, handler: handler) }
        let token = event.forKeys(Self.twoKeys).subscribe(target) { target, item in handler(target, item.value) }
        return recordTwoKeys(token, target: target)
    }

    func unsubscribe(target: ReliabilityTarget) -> Int {
        let twoKey = liveTwoKeySubscriptions(of: target)
        return event.unsubscribe(target) - twoKey
    }

    func unsubscribeAll() -> Int {
        let twoKey = liveTwoKeySubscriptions()
        return event.unsubscribeAll() - twoKey
    }

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
