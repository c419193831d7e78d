import Foundation
import ObserverSwift
import XCTest

/// Seeded random operation sequences (subscribe a closure, subscribe a weak
/// target, cancel, unsubscribe a target, unsubscribe all, send, deallocate a
/// target) run against every observer kind and against a trivial reference
/// model; after every step the two must agree on who is subscribed, who a send
/// calls (exactly once each, with the value sent), what each removal returns,
/// and, every 256 steps, how many handler captures are alive after a barrier.
///
/// A failure names the seed; replay it with `OBSERVER_MODEL_SEED=<seed>`.
/// `OBSERVER_MODEL_OPS` sets the operations per seed (1_000_000 long form).
final class ModelBasedTests: XCTestCase {
    func testRandomOperationSequencesMatchTheModel() throws {
        let seeds: [UInt64]
        if let seed = ReliabilityEnvironment.modelSeed {
            seeds = [seed]
        } else {
            seeds = [1, 2, 3, UInt64(Date().timeIntervalSince1970 * 1000)]
        }
        for kind in ReliabilityObserverKinds.all {
            for seed in seeds {
                print("model[\(kind.name)]: seed \(seed), \(ReliabilityEnvironment.modelOperations) operations")
                let run = ModelRun(kind: kind, seed: seed)
                if let failure = try run.execute(operations: ReliabilityEnvironment.modelOperations) {
                    XCTFail("model[\(kind.name)] seed \(seed) (replay: OBSERVER_MODEL_SEED=\(seed)): \(failure)")
                    print("model[\(kind.name)]: FAILED with seed \(seed): \(failure)")
                    return
                }
            }
        }
    }
}

/// One seeded run: the source under test plus the reference model.
private final class ModelRun {
    struct ModelSubscription {
        let token: Subscription
        let targetKey: Int?
        var active: Bool
    }

    let kindName: String
    let source: any ReliabilitySource
    var generator: SplitMix64
    /// Reference model: subscription id -> its token, target and state.
    var subscriptions: [Int: ModelSubscription] = [:]
    /// Live targets by key (the model holds the only strong references).
    var targets: [Int: ReliabilityTarget] = [:]
    var nextSubscription = 0
    var nextTarget = 0
    /// Deliveries of the current send: subscription id -> values received.
    let delivered = SharedVariable<[Int: [Int]]>([:])
    var liveBaseline = 0

    init(kind: any ReliabilityObserverKind, seed: UInt64) {
        kindName = kind.name
        source = kind.makeSource()
        generator = SplitMix64(seed: seed)
    }

    var activeIDs: [Int] { subscriptions.filter { $0.value.active }.map(\.key).sorted() }

    /// Runs `operations` steps; returns a description of the first mismatch.
    func execute(operations: Int) throws -> String? {
        try ObserverCore.reclaimNow()
        liveBaseline = ReliabilityLiveInstances.current
        for step in 0..<operations {
            let operation = try perform()
            if operation.hasSuffix("MISMATCH") { return "step \(step): \(operation)" }
            if let mismatch = check() {
                return "step \(step) (\(operation)): \(mismatch)"
            }
            if step & 255 == 255, let mismatch = try checkLiveCaptures() {
                return "step \(step) (\(operation)): \(mismatch)"
            }
        }
        source.unsubscribeAll()
        for key in subscriptions.keys { subscriptions[key]?.active = false }
        targets.removeAll()
        return try checkLiveCaptures()
    }

    private func random(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }

    /// Performs one random operation on both the source and the model.
    private func perform() throws -> String {
        let activeCount = subscriptions.values.filter(\.active).count
        switch random(100) {
        case 0..<22 where activeCount < 48:
            let id = nextSubscription
            nextSubscription += 1
            let capture = ReliabilityTrackedCapture()
            let token = source.subscribe { [delivered] value in
                capture.checkIntact()
                delivered.update { $0[id, default: []].append(value) }
            }
            subscriptions[id] = ModelSubscription(token: token, targetKey: nil, active: true)
            return "subscribe closure #\(id)"
        case 22..<40 where activeCount < 48 && source.supportsTargets:
            let key: Int
            if targets.isEmpty || random(3) == 0 {
                key = nextTarget
                nextTarget += 1
                targets[key] = ReliabilityTarget(identifier: key)
            } else {
                key = targets.keys.sorted()[random(targets.count)]
            }
            let id = nextSubscription
            nextSubscription += 1
            let capture = ReliabilityTrackedCapture()
            let token = source.subscribe(target: targets[key]!) { [delivered] target, value in
                capture.checkIntact()
                delivered.update { delivered in
                    if target.identifier != key { delivered[-1, default: []].append(value) }
                    delivered[id, default: []].append(value)
                }
            }
            subscriptions[id] = ModelSubscription(token: token, targetKey: key, active: true)
            return "subscribe target \(key) #\(id)"
        case 40..<55 where !subscriptions.isEmpty:
            // Any token, also inactive ones: double cancel must be a no-op.
            let id = subscriptions.keys.sorted()[random(subscriptions.count)]
            let expected = subscriptions[id]!.active
            let actual = subscriptions[id]!.token.cancel()
            subscriptions[id]!.active = false
            return actual == expected ? "cancel #\(id)" : "cancel #\(id) returned \(actual), model \(expected) MISMATCH"
        case 55..<62 where !targets.isEmpty:
            let key = targets.keys.sorted()[random(targets.count)]
            let expected = subscriptions.filter { $0.value.active && $0.value.targetKey == key }.count
            let actual = source.unsubscribe(target: targets[key]!)
            for (id, subscription) in subscriptions where subscription.targetKey == key {
                subscriptions[id]!.active = false
            }
            return actual == expected
                ? "unsubscribe target \(key)"
                : "unsubscribe target \(key) returned \(actual), model \(expected) MISMATCH"
        case 62..<64:
            let expected = activeCount
            let actual = source.unsubscribeAll()
            for id in subscriptions.keys { subscriptions[id]!.active = false }
            return actual == expected
                ? "unsubscribe all" : "unsubscribe all returned \(actual), model \(expected) MISMATCH"
        case 64..<72 where !targets.isEmpty:
            let key = targets.keys.sorted()[random(targets.count)]
            targets[key] = nil  // the model held the only strong reference
            for (id, subscription) in subscriptions where subscription.targetKey == key {
                subscriptions[id]!.active = false
            }
            return "deallocate target \(key)"
        default:
            let value = random(1_000_000)
            delivered.update { $0.removeAll(keepingCapacity: true) }
            source.send(value)
            let expected = Dictionary(uniqueKeysWithValues: activeIDs.map { ($0, [value]) })
            let delivered = self.delivered.value
            if delivered != expected {
                return
                    "send \(value): delivered \(delivered.sorted { $0.key < $1.key }), model \(expected.sorted { $0.key < $1.key }) MISMATCH"
            }
            return "send \(value)"
        }
    }

    /// Compares the source with the model after a step.
    private func check() -> String? {
        let count = source.subscribersCount  // also sweeps dead targets' slots
        let expected = subscriptions.values.filter(\.active).count
        if count != expected { return "subscribersCount \(count), model \(expected)" }
        for (id, subscription) in subscriptions where subscription.token.isActive != subscription.active {
            return "subscription #\(id) isActive \(subscription.token.isActive), model \(subscription.active)"
        }
        if ReliabilityLiveInstances.poisoned != 0 { return "a handler ran on a released capture" }
        // Forget old inactive subscriptions so checks stay O(active).
        if subscriptions.count > 96 {
            for (id, subscription) in subscriptions where !subscription.active {
                subscriptions[id] = nil
                if subscriptions.count <= 64 { break }
            }
        }
        return nil
    }

    /// After a barrier exactly the model's active subscriptions hold captures.
    private func checkLiveCaptures() throws -> String? {
        try ObserverCore.reclaimNow()
        let live = ReliabilityLiveInstances.current - liveBaseline
        let expected = subscriptions.values.filter(\.active).count
        return live == expected ? nil : "live handler captures \(live), model \(expected) (leak or early release)"
    }
}
