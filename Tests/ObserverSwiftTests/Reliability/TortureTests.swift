import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
@_spi(EngineDiagnostics) import ObserverSwift
import XCTest

/// Two senders and two churn threads hammer one source for a fixed time
/// (`OBSERVER_TORTURE_SECONDS`; `make torture DURATION=600` for the long form)
/// while every delivery is accounted for.
///
/// Every send takes a number from a global counter before it starts; the value
/// sent is `number * 2 + sender`. A ledger per subscription checks:
/// - stable subscriptions receive every send exactly once: per sender the
///   numbers arrive strictly increasing and their count equals what that sender
///   sent (strictly increasing + equal count = each send once);
/// - no subscription receives a send twice (strictly increasing per sender);
/// - nobody receives a send that started after its removal returned: after
///   `cancel()` / `unsubscribe(target:)` returns (or, for a weak target, inside
///   its deinit) the remover reads the counter; a delivered number above it is a
///   violation;
/// - no handler runs on a released box (poisoned captures), and after the
///   source is gone and `ObserverCore.reclaimNow()` ran, the live-instance count
///   is back at its baseline (no leak, no early or double release).
final class TortureTests: XCTestCase {
    func testTortureTwoSendersTwoChurnThreads() throws {
        for kind in ReliabilityObserverKinds.all {
            try runTorture(kind: kind, seconds: ReliabilityEnvironment.tortureSeconds)
        }
    }

    private func runTorture(kind: any ReliabilityObserverKind, seconds: Double) throws {
        try ObserverCore.reclaimNow()
        let liveBaseline = ReliabilityLiveInstances.current
        let poisonBaseline = ReliabilityLiveInstances.poisoned
        let state = TortureState(source: kind.makeSource())

        // Stable subscriptions: two closures and one weak target kept alive.
        let stableLedgers = (0..<3).map { _ in TortureLedger() }
        var stableTokens: [Subscription] = []
        stableTokens.append(state.subscribeClosure(stableLedgers[0]))
        stableTokens.append(state.subscribeClosure(stableLedgers[1]))
        let stableTarget = ReliabilityTarget(identifier: -1)
        if state.source.supportsTargets {
            stableTokens.append(state.subscribeTarget(stableTarget, ledger: stableLedgers[2]))
        }

        let deadline = Date().addingTimeInterval(seconds)
        let sentPerSender = TortureCounters()
        let churnViolations = HeapAtomicWord<Int>(0)
        let churnCycles = HeapAtomicWord<Int>(0)
        let churnCheck: @Sendable ([TortureLedger]) -> Void = { ledgers in
            for ledger in ledgers where !ledger.isConsistentAfterRemoval {
                churnViolations.wrappingAdd(1, ordering: .relaxed)
            }
        }

        runOnNewThreads(4) { role in
            switch role {
            case 0, 1:
                // Sender `role`.
                var sent = 0
                while true {
                    if sent & 255 == 0 && Date() >= deadline { break }
                    let number = state.sendCounter.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
                    state.source.send(number &* 2 &+ role)
                    sent += 1
                }
                sentPerSender.set(sender: role, sent)
            case 2:
                // Closure churn: subscribe, keep a few, cancel the oldest.
                var generator = SplitMix64(seed: 0xC0FFEE)
                var live: [(Subscription, TortureLedger)] = []
                var removed: [TortureLedger] = []
                var cycles = 0
                while Date() < deadline {
                    let ledger = TortureLedger()
                    live.append((state.subscribeClosure(ledger), ledger))
                    if live.count > Int(generator.next() % 8) {
                        let (token, old) = live.removeFirst()
                        let cancelled = token.cancel()
                        old.markRemoved(at: state.sendCounter.load(ordering: .sequentiallyConsistent))
                        if !cancelled { churnViolations.wrappingAdd(1, ordering: .relaxed) }
                        removed.append(old)
                    }
                    if generator.next() % 64 == 0 { state.source.unsubscribeStranger() }
                    cycles += 1
                    if removed.count >= 256 {
                        // After the wait no send can still call them.
                        try? ObserverCore.waitForDeliveriesInFlight()
                        churnCheck(removed)
                        removed.removeAll(keepingCapacity: true)
                    }
                }
                for (token, ledger) in live {
                    token.cancel()
                    ledger.markRemoved(at: state.sendCounter.load(ordering: .sequentiallyConsistent))
                    removed.append(ledger)
                }
                try? ObserverCore.waitForDeliveriesInFlight()
                churnCheck(removed)
                churnCycles.wrappingAdd(cycles, ordering: .relaxed)
            default:
                // Weak-target churn: targets die (deinit records the removal
                // point) or are unsubscribed explicitly.
                guard state.source.supportsTargets else { return }
                var generator = SplitMix64(seed: 0xBADC0DE)
                var live: [(ReliabilityTarget, TortureLedger)] = []
                var removed: [TortureLedger] = []
                var cycles = 0
                var identifier = 0
                while Date() < deadline {
                    let ledger = TortureLedger()
                    identifier += 1
                    let target = ReliabilityTarget(identifier: identifier) {
                        // Weak loads return nil from here on: the removal point.
                        ledger.markRemoved(at: state.sendCounter.load(ordering: .sequentiallyConsistent))
                    }
                    _ = state.subscribeTarget(target, ledger: ledger)
                    live.append((target, ledger))
                    if live.count > Int(generator.next() % 8) {
                        let (oldTarget, old) = live.removeFirst()
                        if generator.next() % 4 == 0 {
                            state.source.unsubscribe(target: oldTarget)
                            old.markRemoved(at: state.sendCounter.load(ordering: .sequentiallyConsistent))
                        }
                        removed.append(old)
                        // `oldTarget` is released here; unless a sender holds it
                        // for a delivery, its deinit runs now.
                    }
                    cycles += 1
                    if removed.count >= 256 {
                        try? ObserverCore.waitForDeliveriesInFlight()
                        churnCheck(removed)
                        removed.removeAll(keepingCapacity: true)
                    }
                }
                live.removeAll()
                try? ObserverCore.waitForDeliveriesInFlight()
                churnCheck(removed)
                churnCycles.wrappingAdd(cycles, ordering: .relaxed)
            }
        }

        // Stable subscriptions: every send exactly once.
        let stableCount = state.source.supportsTargets ? 3 : 2
        for (index, ledger) in stableLedgers.prefix(stableCount).enumerated() {
            for sender in 0..<2 {
                XCTAssertEqual(
                    ledger.received(from: sender), sentPerSender.get(sender: sender),
                    "\(kind.name): stable subscription \(index) missed or repeated sends of sender \(sender)")
            }
            XCTAssertEqual(ledger.orderViolations, 0, "\(kind.name): stable subscription \(index) saw a duplicate")
        }
        XCTAssertEqual(
            churnViolations.load(ordering: .relaxed), 0,
            "\(kind.name): a churned subscription got a duplicate or a send that started after its removal")
        XCTAssertGreaterThan(sentPerSender.get(sender: 0) + sentPerSender.get(sender: 1), 0)
        XCTAssertGreaterThan(churnCycles.load(ordering: .relaxed), 0)
        print(
            "torture[\(kind.name)]: \(seconds) s, sends \(sentPerSender.get(sender: 0)) + \(sentPerSender.get(sender: 1)), churn cycles \(churnCycles.load(ordering: .relaxed))"
        )

        withExtendedLifetime(stableTarget) {}
        for token in stableTokens { token.cancel() }
        stableTokens.removeAll()
        state.source.unsubscribeAll()
        try ObserverCore.reclaimNow()
        XCTAssertEqual(
            ReliabilityLiveInstances.poisoned, poisonBaseline,
            "\(kind.name): a handler ran on a released (poisoned) capture")
        XCTAssertEqual(
            ReliabilityLiveInstances.current, liveBaseline,
            "\(kind.name): handler captures leaked (count high) or were released early (count low)")
    }
}

/// Shared state of one torture run.
private final class TortureState: Sendable {
    let source: any ReliabilitySource
    /// The number of the latest send that started.
    let sendCounter = HeapAtomicWord<Int>(0)

    init(source: any ReliabilitySource) {
        self.source = source
    }

    func subscribeClosure(_ ledger: TortureLedger) -> Subscription {
        let capture = ReliabilityTrackedCapture()
        return source.subscribe { value in
            capture.checkIntact()
            ledger.record(value)
        }
    }

    func subscribeTarget(_ target: ReliabilityTarget, ledger: TortureLedger) -> Subscription {
        let capture = ReliabilityTrackedCapture()
        return source.subscribe(target: target) { _, value in
            capture.checkIntact()
            ledger.record(value)
        }
    }
}

extension ReliabilitySource {
    /// Exercises the writer path with a target that was never subscribed
    /// (removes nothing).
    fileprivate func unsubscribeStranger() {
        if supportsTargets {
            _ = unsubscribe(target: ReliabilityTarget(identifier: -2))
        }
    }
}

/// Per-sender slots written only by that sender's thread (read after join).
private final class TortureCounters: @unchecked Sendable {
    // @unchecked: slot `s` is written by sender thread `s` only; readers read
    // after `pthread_join`, which orders the writes before the reads.
    private let slots = UnsafeMutablePointer<Int>.allocate(capacity: 2)
    init() { slots.initialize(repeating: 0, count: 2) }
    deinit { slots.deallocate() }
    func set(sender: Int, _ value: Int) { slots[sender] = value }
    func get(sender: Int) -> Int { slots[sender] }
}

/// What one subscription received.
final class TortureLedger: @unchecked Sendable {
    // @unchecked: `last`/`count` slot `s` is written only on sender `s`'s
    // thread (a synchronous handler runs on the sending thread) and read after
    // a grace period (`waitForDeliveriesInFlight`) or a join; the rest is atomic.
    private let last = UnsafeMutablePointer<Int>.allocate(capacity: 2)
    private let count = UnsafeMutablePointer<Int>.allocate(capacity: 2)
    private let violations = HeapAtomicWord<Int>(0)
    private let highestNumber = HeapAtomicWord<Int>(0)
    private let removedAt = HeapAtomicWord<Int>(Int.max)

    init() {
        last.initialize(repeating: 0, count: 2)
        count.initialize(repeating: 0, count: 2)
    }

    deinit {
        last.deallocate()
        count.deallocate()
    }

    func record(_ value: Int) {
        let sender = value & 1
        let number = value >> 1
        if number <= last[sender] { violations.wrappingAdd(1, ordering: .relaxed) }
        last[sender] = number
        count[sender] += 1
        // Also caught at once when the removal was already recorded.
        if number > removedAt.load(ordering: .sequentiallyConsistent) {
            violations.wrappingAdd(1, ordering: .relaxed)
        }
        var highest = highestNumber.load(ordering: .relaxed)
        while number > highest {
            let (exchanged, original) = highestNumber.compareExchange(
                expected: highest, desired: number, ordering: .relaxed)
            if exchanged { break }
            highest = original
        }
    }

    /// Records the send number read right after the removal returned.
    func markRemoved(at number: Int) {
        // Keep the earliest removal point (a target may also be unsubscribed).
        var current = removedAt.load(ordering: .sequentiallyConsistent)
        while number < current {
            let (exchanged, original) = removedAt.compareExchange(
                expected: current, desired: number, ordering: .sequentiallyConsistent)
            if exchanged { break }
            current = original
        }
    }

    func received(from sender: Int) -> Int { count[sender] }
    var orderViolations: Int { violations.load(ordering: .relaxed) }

    /// Valid once no send can call the subscription any more.
    var isConsistentAfterRemoval: Bool {
        violations.load(ordering: .relaxed) == 0
            && highestNumber.load(ordering: .relaxed) <= removedAt.load(ordering: .sequentiallyConsistent)
    }
}
