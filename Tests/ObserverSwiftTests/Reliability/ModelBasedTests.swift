import Foundation
@_spi(EngineDiagnostics) import ObserverSwift
import ObserverTestSupport
import XCTest

/// Seeded random operation sequences (subscribe a closure, subscribe a weak
/// target, cancel, unsubscribe a target, unsubscribe all, send, deallocate a
/// target, and where the kind has them: subscribe under a key no send reaches
/// (`Double.nan`), unsubscribe an object allocated at a dead target's address,
/// queued deliveries cancelled before they run, a replay that waits inside
/// itself) run against every observer kind and against a trivial reference
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
        for kind in ReliabilityObserverKinds.allWithRegistries {
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
        /// False for a subscription under a key no send reaches.
        var receives = true
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
    /// Where queued subscriptions deliver; kept busy during a queued round.
    let queue = DispatchQueue(label: "model-queued")

    init(kind: any ReliabilityObserverKind, seed: UInt64) {
        kindName = kind.name
        source = kind.makeSource()
        generator = SplitMix64(seed: seed)
    }

    var activeIDs: [Int] { subscriptions.filter { $0.value.active }.map(\.key).sorted() }
    var receivingIDs: [Int] { subscriptions.filter { $0.value.active && $0.value.receives }.map(\.key).sorted() }

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
        case 72..<75 where activeCount < 48:
            let id = nextSubscription
            let capture = ReliabilityTrackedCapture()
            guard
                let token = source.subscribeUnreachableKey({ [delivered] value in
                    capture.checkIntact()
                    delivered.update { $0[id, default: []].append(value) }
                })
            else { return sendAndCheck() }
            nextSubscription += 1
            subscriptions[id] = ModelSubscription(token: token, targetKey: nil, active: true, receives: false)
            return "subscribe unreachable key #\(id)"
        case 75..<78 where !targets.isEmpty:
            return unsubscribeAnObjectAtADeadTargetsAddress()
        case 78..<80:
            return queuedRound()
        case 80..<81:
            guard let threw = source.replayThenWaitInsideThrows() else { return sendAndCheck() }
            return threw ? "replay + wait inside" : "replay + wait inside did not throw MISMATCH"
        default:
            return sendAndCheck()
        }
    }
    /// Sends a random value; every active, reachable subscription must get
    /// it exactly once.
    private func sendAndCheck(_ chosen: Int? = nil) -> String {
        let value = chosen ?? random(1_000_000)
        delivered.update { $0.removeAll(keepingCapacity: true) }
        source.send(value)
        let expected = Dictionary(uniqueKeysWithValues: receivingIDs.map { ($0, [value]) })
        let delivered = self.delivered.value
        if delivered != expected {
            return
                "send \(value): delivered \(delivered.sorted { $0.key < $1.key }), model \(expected.sorted { $0.key < $1.key }) MISMATCH"
        }
        return "send \(value)"
    }

    /// Deallocates a target whose subscriptions nothing has noticed dead yet,
    /// then allocates objects until one gets its address (a few tries; never
    /// under AddressSanitizer, whose quarantine delays reuse):
    /// `unsubscribe(newcomer)` must return 0, the newcomer never subscribed.
    private func unsubscribeAnObjectAtADeadTargetsAddress() -> String {
        let key = targets.keys.sorted()[random(targets.count)]
        let address = ObjectIdentifier(targets[key]!)
        targets[key] = nil
        for (id, subscription) in subscriptions where subscription.targetKey == key {
            subscriptions[id]!.active = false
        }
        var misses: [ReliabilityTarget] = []  // kept, so each try gets new memory
        for _ in 0..<64 {
            let newcomer = ReliabilityTarget(identifier: nextTarget)
            guard ObjectIdentifier(newcomer) == address else {
                misses.append(newcomer)
                continue
            }
            let actual = source.unsubscribe(target: newcomer)
            targets[nextTarget] = newcomer
            nextTarget += 1
            return actual == 0
                ? "unsubscribe newcomer at dead target \(key)'s address"
                : "unsubscribe newcomer at dead target \(key)'s address returned \(actual) MISMATCH"
        }
        return "deallocate target \(key) (address not reused)"
    }

    /// Queued subscriptions on a busy queue get a send; some are cancelled
    /// before the queue runs. Exactly the others must run, once each.
    private func queuedRound() -> String {
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let log = QueuedLog()
        var tokens: [Subscription] = []
        for index in 0..<(1 + random(3)) {
            guard let token = source.subscribe(queue: queue, { log.append(index, $0) }) else { break }
            tokens.append(token)
        }
        let value = random(1_000_000)
        let sent = sendAndCheck(value)
        if sent.hasSuffix("MISMATCH") {
            gate.signal()
            return sent
        }
        let cancelled = Set(tokens.indices.filter { _ in random(2) == 0 })
        for index in cancelled where !tokens[index].cancel() {
            gate.signal()
            return "queued round: cancel of a queued subscription returned false MISMATCH"
        }
        gate.signal()
        queue.sync {}
        for token in tokens { token.cancel() }
        if tokens.isEmpty { return sent }
        let expected = tokens.indices.filter { !cancelled.contains($0) }.map { "\($0):\(value)" }
        let actual = log.entries.map { "\($0.index):\($0.value)" }.sorted()
        return actual == expected
            ? "queued round (\(tokens.count), \(cancelled.count) cancelled)"
            : "queued round: ran \(actual), model \(expected) (cancelled \(cancelled.sorted())) MISMATCH"
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

/// What queued handlers received, from the queue's thread.
private final class QueuedLog: @unchecked Sendable {
    // @unchecked: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: [(index: Int, value: Int)] = []

    func append(_ index: Int, _ value: Int) {
        lock.lock()
        storage.append((index, value))
        lock.unlock()
    }

    var entries: [(index: Int, value: Int)] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
