import Dispatch
import Foundation
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// Queued (queue:) and main-actor deliveries and cancellation: no handler
/// runs after `cancel()` returns (a queued delivery that has not started is
/// dropped); `cancelAndWait()` also waits for one that has started, and
/// throws `waitInsideDelivery` instead of deadlocking when called from it.
final class QueuedDeliveryCancellationTests: XCTestCase {
    private final class Target: Sendable {}

    /// A serial queue kept busy until `release()`: what it is given meanwhile
    /// is enqueued, not started.
    private final class BusyQueue: Sendable {
        let queue = DispatchQueue(label: "busy")
        private let gate = DispatchSemaphore(value: 0)
        init() { queue.async { [gate] in gate.wait() } }
        func release() { gate.signal() }
        func drain() { queue.sync {} }
    }

    private typealias Subscribe = (_ queue: DispatchQueue, _ record: @escaping @Sendable (Int) -> Void) -> Subscription

    /// One way to subscribe on a queue per observer kind, each with a
    /// `send` that reaches it.
    private func queuedKinds() -> [(name: String, subscribe: Subscribe, send: (Int) -> Void, keep: AnyObject)] {
        let event = Event<Int>()
        let targetEvent = Event<Int>()
        let keyed = KeyedEvent<String, Int>()
        let keyedTarget = KeyedEvent<String, Int>()
        let limited = Event<Int>()
        let value = ObservableValue(0)
        let target = Target()
        return [
            (
                "Event closure", { queue, record in event.subscribe(delivery: .queue(queue)) { record($0) } },
                event.send, event
            ),
            (
                "Event target",
                { queue, record in targetEvent.subscribe(target, delivery: .queue(queue)) { _, v in record(v) } },
                targetEvent.send, target
            ),
            (
                "Event limit", { queue, record in limited.subscribe(delivery: .queue(queue), limit: 5) { record($0) } },
                limited.send, limited
            ),
            (
                "KeyedEvent closure",
                { queue, record in keyed.subscribe(key: "k", delivery: .queue(queue)) { record($0) } },
                { keyed.send($0, forKey: "k") }, keyed
            ),
            (
                "KeyedEvent target",
                { queue, record in
                    keyedTarget.subscribe(target, key: "k", delivery: .queue(queue)) { _, v in record(v) }
                },
                { keyedTarget.send($0, forKey: "k") }, target
            ),
            (
                "ObservableValue observer",
                { queue, record in value.subscribe(delivery: .queue(queue)) { record($0) } },
                { value.value = $0 }, value
            ),
        ]
    }

    func testAQueuedDeliveryNotStartedWhenCancelReturnsIsDropped() {
        for kind in queuedKinds() {
            let busy = BusyQueue()
            let ran = Locked<[Int]>([])
            let token = kind.subscribe(busy.queue) { value in ran.withLock { $0.append(value) } }
            kind.send(1)
            XCTAssertTrue(token.cancel(), kind.name)
            busy.release()
            busy.drain()
            XCTAssertEqual(ran.withLock { $0 }, [], "\(kind.name): a handler ran after cancel() returned")
            withExtendedLifetime(kind.keep) {}
        }
    }

    func testCancelAndWaitWaitsForAQueuedDeliveryThatHasStarted() throws {
        for kind in queuedKinds() {
            let queue = DispatchQueue(label: "started")
            let started = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let finished = Locked(false)
            let token = kind.subscribe(queue) { _ in
                started.signal()
                _ = release.wait(timeout: .now() + 30)
                finished.withLock { $0 = true }
            }
            kind.send(1)
            XCTAssertEqual(started.wait(timeout: .now() + 10), .success, "\(kind.name): the delivery started")
            let failure = Locked<String?>(nil)
            let canceller = JoinableThread {
                do { try token.cancelAndWait() } catch { failure.withLock { $0 = "\(error)" } }
            }
            XCTAssertFalse(canceller.join(timeout: 0.1), "\(kind.name): cancelAndWait returned while the handler ran")
            release.signal()
            canceller.join()
            XCTAssertNil(failure.withLock { $0 }, kind.name)
            XCTAssertTrue(finished.withLock { $0 }, "\(kind.name): cancelAndWait returned while the handler ran")
            queue.sync {}
            withExtendedLifetime(kind.keep) {}
        }
    }

    func testCancelAndWaitFromInsideTheQueuedDeliveryThrows() {
        for kind in queuedKinds() {
            let queue = DispatchQueue(label: "inside")
            let outcome = Locked<[String]>([])
            let tokenBox = Locked<Subscription?>(nil)
            let token = kind.subscribe(queue) { _ in
                do {
                    try tokenBox.withLock { $0 }?.cancelAndWait()
                    outcome.withLock { $0.append("returned") }
                } catch {
                    outcome.withLock { $0.append("threw") }
                }
            }
            tokenBox.withLock { $0 = token }
            kind.send(1)
            let done = DispatchSemaphore(value: 0)
            queue.async { done.signal() }
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "\(kind.name): deadlocked")
            XCTAssertEqual(outcome.withLock { $0 }, ["threw"], kind.name)
            XCTAssertFalse(token.isActive, kind.name)
            withExtendedLifetime(kind.keep) {}
        }
    }

    func testALimitSubscriptionsLastQueuedDeliveryStillRuns() {
        let event = Event<Int>()
        let busy = BusyQueue()
        let ran = Locked<[Int]>([])
        let token = event.subscribe(delivery: .queue(busy.queue), limit: 1) { value in ran.withLock { $0.append(value) }
        }
        event.send(1)
        event.send(2)
        XCTAssertFalse(token.cancel(), "spent: already expired")
        busy.release()
        busy.drain()
        XCTAssertEqual(ran.withLock { $0 }, [1])
    }

    func testAMainActorDeliveryNotStartedWhenCancelReturnsIsDropped() {
        let event = Event<Int>()
        let keyed = KeyedEvent<String, Int>()
        let ran = Locked<[String]>([])
        let closure = event.subscribe { @MainActor value in ran.withLock { $0.append("closure \(value)") } }
        let target = Target()
        let bound = event.subscribe(target) { @MainActor _, value in ran.withLock { $0.append("target \(value)") } }
        let keyedToken = keyed.subscribe(key: "k") { @MainActor value in ran.withLock { $0.append("keyed \(value)") } }
        let sent = DispatchSemaphore(value: 0)
        Thread {
            event.send(1)  // not the main thread: enqueued on the main queue
            keyed.send(1, forKey: "k")
            sent.signal()
        }.start()
        sent.wait()
        XCTAssertTrue(closure.cancel())
        XCTAssertTrue(bound.cancel())
        XCTAssertTrue(keyedToken.cancel())
        RunLoop.main.run(until: Date().addingTimeInterval(0.2))
        XCTAssertEqual(ran.withLock { $0 }, [], "a main-actor handler ran after cancel() returned")
        withExtendedLifetime(target) {}
    }

    private actor Sink {
        var values: [Int] = []
        func record(_ value: Int) { values.append(value) }
    }

    func testCancelAndWaitWaitsForAnActorDeliveryThatHasStartedAndThrowsInsideIt() async throws {
        let event = Event<Int>()
        let sink = Sink()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = Locked(false)
        let insideOutcome = Locked<[String]>([])
        let token = event.subscribe(isolatedTo: sink) { sink, value in
            sink.record(value)
            started.signal()
            _ = release.wait(timeout: .now() + 30)
            finished.withLock { $0 = true }
        }
        event.send(1)
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success, "the actor delivery started")
        let failure = Locked<String?>(nil)
        let canceller = JoinableThread {
            do { try token.cancelAndWait() } catch { failure.withLock { $0 = "\(error)" } }
        }
        XCTAssertFalse(canceller.join(timeout: 0.1), "cancelAndWait returned while the actor handler ran")
        release.signal()
        canceller.join()
        XCTAssertNil(failure.withLock { $0 })
        XCTAssertTrue(finished.withLock { $0 }, "cancelAndWait returned while the actor handler ran")

        let inside = event.subscribe(isolatedTo: sink) { _, _ in
            do {
                try ObserverCore.waitForDeliveriesInFlight()
                insideOutcome.withLock { $0.append("returned") }
            } catch {
                insideOutcome.withLock { $0.append("threw") }
            }
        }
        event.send(2)
        try await settleDeliveries()
        XCTAssertEqual(insideOutcome.withLock { $0 }, ["threw"], "a wait inside an actor delivery must throw")
        inside.cancel()
    }
}
