import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverSwift
import ObserverTestSupport
import XCTest

/// The reentrancy matrix, run for every observer kind in
/// `ReliabilityObserverKinds.allWithRegistries`: what a handler may do to its own source (or
/// another thread may do) in the middle of a send, and what each case does.
final class ReentrancyMatrixTests: XCTestCase {
    private var kinds: [any ReliabilityObserverKind] { ReliabilityObserverKinds.allWithRegistries }

    /// A handler cancels itself: it is not called again; the others in the
    /// same send still run.
    func testHandlerUnsubscribesItself() {
        for kind in kinds {
            let source = kind.makeSource()
            let log = CallLog()
            let own = SharedVariable<Subscription?>(nil)
            own.value = source.subscribe { value in
                log.append("self \(value)")
                XCTAssertEqual(own.value?.cancel(), true, "\(kind.name): first self-cancel must remove")
                XCTAssertEqual(own.value?.cancel(), false, "\(kind.name): second self-cancel must be a no-op")
            }
            let other = source.subscribe { value in log.append("other \(value)") }
            source.send(1)
            source.send(2)
            XCTAssertEqual(log.entries, ["self 1", "other 1", "other 2"], kind.name)
            XCTAssertEqual(source.subscribersCount, 1, kind.name)
            other.cancel()
        }
    }

    /// A handler cancels another subscription: the other is never called by a
    /// later send (in this send it runs or not depending on slot order).
    func testHandlerUnsubscribesAnother() {
        for kind in kinds {
            let source = kind.makeSource()
            let log = CallLog()
            let victim = SharedVariable<Subscription?>(nil)
            let killer = source.subscribe { value in
                log.append("killer \(value)")
                victim.value?.cancel()
            }
            victim.value = source.subscribe { value in log.append("victim \(value)") }
            source.send(1)
            source.send(2)
            // The victim sits after the killer, and a removal is visible to
            // the same send on the same thread (it skips freed slots).
            XCTAssertFalse(
                log.entries.contains("victim 2"), "\(kind.name): cancelled subscription called by a later send")
            XCTAssertEqual(log.entries.filter { $0.hasPrefix("killer") }, ["killer 1", "killer 2"], kind.name)
            XCTAssertEqual(victim.value?.isActive, false, kind.name)
            killer.cancel()
        }
    }

    /// A handler unsubscribes everything: later sends call nobody; the send in
    /// progress finishes without crashing.
    func testHandlerUnsubscribesAll() {
        for kind in kinds {
            let source = kind.makeSource()
            let log = CallLog()
            var tokens: [Subscription] = []
            for index in 0..<5 {
                tokens.append(
                    source.subscribe { value in
                        log.append("\(index):\(value)")
                        if index == 2 { XCTAssertGreaterThan(source.unsubscribeAll(), 0) }
                    })
            }
            source.send(1)
            XCTAssertTrue(log.entries.starts(with: ["0:1", "1:1", "2:1"]), "\(kind.name): \(log.entries)")
            log.removeAll()
            source.send(2)
            XCTAssertEqual(log.entries, [], kind.name)
            XCTAssertEqual(source.subscribersCount, 0, kind.name)
            XCTAssertTrue(tokens.allSatisfy { !$0.isActive }, kind.name)
        }
    }

    /// A handler unsubscribes everything, then subscribes again: the send in
    /// progress calls none of the newcomers (for a keyed kind they go into a
    /// list made after the one that send reads was freed), the next send calls
    /// each of them once and none of the removed.
    func testUnsubscribeAllThenSubscribeDuringSend() {
        for kind in kinds {
            let source = kind.makeSource()
            let log = CallLog()
            let added = SharedVariable<[Subscription]>([])
            var tokens: [Subscription] = []
            for index in 0..<4 {
                tokens.append(
                    source.subscribe { value in
                        log.append("\(index):\(value)")
                        guard index == 1, value == 1 else { return }
                        XCTAssertEqual(source.unsubscribeAll(), 4, kind.name)
                        for newIndex in 0..<6 {
                            let newcomer = source.subscribe { value in log.append("new\(newIndex):\(value)") }
                            added.update { $0.append(newcomer) }
                        }
                    })
            }
            source.send(1)
            XCTAssertTrue(log.entries.starts(with: ["0:1", "1:1"]), "\(kind.name): \(log.entries)")
            XCTAssertFalse(
                log.entries.contains { $0.hasPrefix("new") },
                "\(kind.name): a newcomer was called by the send in progress")
            log.removeAll()
            source.send(2)
            XCTAssertEqual(log.entries.sorted(), (0..<6).map { "new\($0):2" }, kind.name)
            XCTAssertEqual(source.subscribersCount, 6, kind.name)
            XCTAssertTrue(tokens.allSatisfy { !$0.isActive }, kind.name)
            XCTAssertEqual(source.unsubscribeAll(), 6, kind.name)
        }
    }

    /// A handler subscribes a new handler: the newcomer is not called by the
    /// send in progress, and is called by the next one.
    func testSubscribeDuringSendIsNotCalledByThatSend() {
        for kind in kinds {
            let source = kind.makeSource()
            let log = CallLog()
            let added = SharedVariable<[Subscription]>([])
            let adder = source.subscribe { value in
                log.append("adder \(value)")
                if value == 1 {
                    // Several, so that some land in slots after the adder's.
                    for index in 0..<20 {
                        let newcomer = source.subscribe { value in log.append("new\(index) \(value)") }
                        added.update { $0.append(newcomer) }
                    }
                }
            }
            // Holes below a live tail: newcomers fill them, inside the range
            // the send in progress is scanning.
            let holes = (0..<3).map { _ in source.subscribe { _ in } }
            let tail = source.subscribe { value in log.append("tail \(value)") }
            for hole in holes { hole.cancel() }
            source.send(1)
            XCTAssertEqual(
                log.entries, ["adder 1", "tail 1"], "\(kind.name): a handler added during a send was called by it")
            log.removeAll()
            source.send(2)
            XCTAssertEqual(log.entries.count, 22, kind.name)
            XCTAssertEqual(Set(log.entries).count, 22, kind.name)
            adder.cancel()
            tail.cancel()
            for token in added.value { token.cancel() }
        }
    }

    /// A handler sends to its own source recursively, 64 deep: every level is
    /// delivered to every subscription exactly once.
    func testRecursiveSend64Deep() {
        for kind in kinds {
            let source = kind.makeSource()
            let log = CallLog()
            let recurser = source.subscribe { depth in
                log.append("r\(depth)")
                if depth < 64 { source.send(depth + 1) }
            }
            let witness = source.subscribe { depth in log.append("w\(depth)") }
            source.send(1)
            XCTAssertEqual(log.entries.filter { $0.hasPrefix("r") }, (1...64).map { "r\($0)" }, kind.name)
            XCTAssertEqual(Set(log.entries.filter { $0.hasPrefix("w") }), Set((1...64).map { "w\($0)" }), kind.name)
            XCTAssertEqual(log.entries.count, 128, kind.name)
            recurser.cancel()
            witness.cancel()
        }
    }

    /// The weak target of a later subscription is deallocated on another
    /// thread while a send is in progress: that send does not call it (there
    /// is no live target to pass), and its slot is reclaimed.
    func testWeakTargetDeallocatedOnAnotherThreadMidSend() throws {
        for kind in kinds {
            let source = kind.makeSource()
            guard source.supportsTargets else { continue }
            let entered = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            let calls = AtomicCounter()
            let gate = source.subscribe { value in
                if value == 1 {
                    entered.signal()
                    proceed.wait()
                }
            }
            let holder = TargetHolder(ReliabilityTarget(identifier: 7))
            weak let weakTarget = holder.target
            source.subscribe(target: holder.target!) { _, _ in calls.increment() }
            source.send(0)
            XCTAssertEqual(calls.value, 1, kind.name)

            let sender = DispatchGroup()
            DispatchQueue.global().async(group: sender) { source.send(1) }
            entered.wait()
            DispatchQueue.global().sync { holder.target = nil }  // deallocated on another thread
            XCTAssertNil(weakTarget, "\(kind.name): target still alive")
            proceed.signal()
            sender.wait()
            XCTAssertEqual(calls.value, 1, "\(kind.name): handler called for a deallocated target")
            XCTAssertEqual(source.subscribersCount, 1, kind.name)
            gate.cancel()
        }
    }

    /// Sending from a deinit: (a) a target's deinit sends to the source it is
    /// subscribed to (its own subscription is not called, others are);
    /// (b) a handler capture whose deinit sends, released by the core after a
    /// grace period (the send runs on the reclaiming thread, outside sections).
    func testSendingFromADeinit() throws {
        for kind in kinds {
            let source = kind.makeSource()
            let log = CallLog()
            let witness = source.subscribe { value in log.append("witness \(value)") }
            if source.supportsTargets {
                var target: ReliabilityTarget? = ReliabilityTarget(identifier: 1) { [weak source] in
                    source?.send(99)
                }
                source.subscribe(target: target!) { _, value in log.append("target \(value)") }
                target = nil
                XCTAssertEqual(log.entries, ["witness 99"], kind.name)
                log.removeAll()
            }
            do {
                let sender = SendOnDeinit { [weak source] in source?.send(42) }
                let token = source.subscribe { _ in withExtendedLifetime(sender) {} }
                token.cancel()
            }
            try ObserverCore.reclaimNow()  // releases the capture: its deinit sends
            XCTAssertEqual(log.entries, ["witness 42"], kind.name)
            witness.cancel()
        }
    }

    /// Two threads cancel the same token at once: exactly one wins, the other
    /// reports false; nothing crashes, nothing is released twice.
    func testCancellingATokenConcurrentlyFromTwoThreads() throws {
        for kind in kinds {
            let source = kind.makeSource()
            try ObserverCore.reclaimNow()
            let liveBaseline = ReliabilityLiveInstances.current
            for _ in 0..<500 {
                let capture = ReliabilityTrackedCapture()
                let token = source.subscribe { _ in capture.checkIntact() }
                let wins = AtomicCounter()
                DispatchQueue.concurrentPerform(iterations: 2) { _ in
                    if token.cancel() { wins.increment() }
                }
                XCTAssertEqual(wins.value, 1, kind.name)
            }
            try ObserverCore.reclaimNow()
            XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline, kind.name)
            XCTAssertEqual(source.subscribersCount, 0, kind.name)
        }
    }

    /// `cancelAndWait()` from inside a handler cancels and throws
    /// `.waitInsideDelivery` instead of waiting for itself forever.
    func testCancelAndWaitInsideHandlerThrows() {
        for kind in kinds {
            let source = kind.makeSource()
            let token = SharedVariable<Subscription?>(nil)
            let thrown = SharedVariable<ObserverError?>(nil)
            let calls = AtomicCounter()
            token.value = source.subscribe { _ in
                calls.increment()
                do throws(ObserverError) { try token.value?.cancelAndWait() } catch { thrown.value = error }
            }
            source.send(1)
            source.send(2)
            XCTAssertEqual(thrown.value, .waitInsideDelivery, kind.name)
            XCTAssertEqual(calls.value, 1, "\(kind.name): cancelled by cancelAndWait all the same")
            XCTAssertEqual(token.value?.isActive, false, kind.name)
        }
    }
}

/// Ordered record of deliveries, from whichever thread sends.
final class CallLog: @unchecked Sendable {
    // @unchecked: `recorded` is only touched while `lock` is held.
    private let lock = NSLock()
    private var recorded: [String] = []
    var entries: [String] { lock.withLock { recorded } }
    func append(_ entry: String) { lock.withLock { recorded.append(entry) } }
    func removeAll() { lock.withLock { recorded.removeAll() } }
}

/// Holds a target so that another thread can drop the last reference.
private final class TargetHolder: @unchecked Sendable {
    // @unchecked: written on one thread while the test's thread waits.
    var target: ReliabilityTarget?
    init(_ target: ReliabilityTarget) { self.target = target }
}

/// Runs `action` in its deinit.
private final class SendOnDeinit: Sendable {
    let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    deinit { action() }
}
