import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// `send(contentsOf:)`: the deliveries of one `send` per value, in order,
/// from one read section.
final class BatchSendTests: XCTestCase {
    func testEveryObserverGetsEveryValueInOrder() {
        let event = Event<Int>()
        let first = Received<String>()
        let second = Received<String>()
        _ = event.subscribe { first.append("a\($0)") }
        _ = event.subscribe { second.append("b\($0)") }
        event.send(contentsOf: [3, 1, 4, 1, 5])
        XCTAssertEqual(first.values, ["a3", "a1", "a4", "a1", "a5"])
        XCTAssertEqual(second.values, ["b3", "b1", "b4", "b1", "b5"])
        XCTAssertEqual(event.triggersCount, 5, "one trigger per value")
    }

    func testValuesAreDeliveredOneAfterAnotherAcrossObservers() {
        let event = Event<Int>()
        let log = Received<String>()
        _ = event.subscribe { log.append("first \($0)") }
        _ = event.subscribe { log.append("second \($0)") }
        event.send(contentsOf: 1...2)
        XCTAssertEqual(log.values, ["first 1", "second 1", "first 2", "second 2"])
    }

    func testEmptySequenceAndNoObserversAreNoOps() {
        let event = Event<Int>()
        event.send(contentsOf: [1, 2, 3])
        XCTAssertEqual(event.triggersCount, 3)
        let received = Received<Int>()
        _ = event.subscribe { received.append($0) }
        event.send(contentsOf: [Int]())
        XCTAssertEqual(received.values, [])
        XCTAssertEqual(event.triggersCount, 3)
    }

    func testLimitIsExactWithinABatch() {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = event.subscribe(limit: 3) { received.append($0) }
        event.send(contentsOf: 1...10)
        XCTAssertEqual(received.values, [1, 2, 3])
        XCTAssertFalse(token.isActive)
        event.send(contentsOf: 11...12)
        XCTAssertEqual(received.values, [1, 2, 3])
    }

    func testLimitIsExactUnderConcurrentBatches() {
        for limit in [1, 7, 100] {
            let event = Event<Int>()
            let delivered = HeapAtomicWord<Int>(0)
            _ = event.subscribe(limit: limit) { _ in delivered.wrappingAdd(1, ordering: .relaxed) }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<20 { event.send(contentsOf: 0..<64) }
            }
            XCTAssertEqual(delivered.load(ordering: .relaxed), limit, "limit \(limit)")
            XCTAssertEqual(event.subscribersCount, 0)
        }
    }

    func testHandlerCancellingItselfGetsNoLaterValueOfTheBatch() {
        let event = Event<Int>()
        let received = Received<Int>()
        let holder = TokenHolder()
        holder.token = event.subscribe { value in
            received.append(value)
            if value == 2 { holder.token?.cancel() }
        }
        event.send(contentsOf: 1...5)
        XCTAssertEqual(received.values, [1, 2])
    }

    func testHandlerCancellingAnotherStopsItForTheRestOfTheBatch() {
        let event = Event<Int>()
        let log = Received<String>()
        let holder = TokenHolder()
        _ = event.subscribe { value in
            log.append("first \(value)")
            if value == 1 { holder.token?.cancel() }
        }
        holder.token = event.subscribe { log.append("second \($0)") }
        event.send(contentsOf: 1...3)
        XCTAssertEqual(log.values, ["first 1", "first 2", "first 3"])
    }

    func testSubscriptionAddedByAHandlerReceivesTheFollowingValues() {
        let event = Event<Int>()
        let late = Received<Int>()
        let holder = TokenHolder()
        _ = event.subscribe { value in
            if value == 2 { holder.token = event.subscribe { late.append($0) } }
        }
        event.send(contentsOf: 1...4)
        XCTAssertEqual(late.values, [3, 4], "as if each value were its own send")
        event.unsubscribeAll()  // the handlers capture the event
    }

    /// The only subscription cancels itself and subscribes another, which
    /// may take the freed slot: the new one receives the following values,
    /// the cancelled one none of them.
    func testSoleSubscriptionReplacedByItsHandlerHandsOverAtTheNextValue() {
        let event = Event<Int>()
        let log = Received<String>()
        let holder = TokenHolder()
        let replacement = TokenHolder()
        holder.token = event.subscribe { value in
            log.append("first \(value)")
            if value == 2 {
                holder.token?.cancel()
                replacement.token = event.subscribe { log.append("second \($0)") }
            }
        }
        event.send(contentsOf: 1...4)
        XCTAssertEqual(log.values, ["first 1", "first 2", "second 3", "second 4"])
        XCTAssertEqual(event.triggersCount, 4)
        event.unsubscribeAll()  // the handler captures the event
    }

    /// A sole subscription with a limit is not a plain closure: its limit
    /// stays exact within the batch.
    func testSoleLimitedSubscriptionStopsAtItsLimit() {
        let event = Event<Int>()
        let received = Received<Int>()
        _ = event.subscribe(limit: 3) { received.append($0) }
        event.send(contentsOf: 1...10)
        XCTAssertEqual(received.values, [1, 2, 3])
        XCTAssertEqual(event.subscribersCount, 0)
    }

    /// One stable subscription while another thread subscribes and cancels:
    /// the batch switches between the one-subscription path and the general
    /// one, and the stable subscription gets every value exactly once.
    func testSoleStableSubscriptionGetsEveryValueWhileOthersComeAndGo() {
        let event = Event<Int>()
        let stable = HeapAtomicWord<Int>(0)
        let stableCount = HeapAtomicWord<Int>(0)
        let token = event.subscribe { value in
            stable.wrappingAdd(value, ordering: .relaxed)
            stableCount.wrappingAdd(1, ordering: .relaxed)
        }
        let stop = HeapAtomicWord<Bool>(false)
        let churn = spawnThread {
            while !stop.load(ordering: .relaxed) {
                event.subscribe { _ in }.cancel()
            }
        }
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<500 { event.send(contentsOf: 1...64) }
        }
        stop.store(true, ordering: .relaxed)
        churn.wait()
        XCTAssertEqual(stableCount.load(ordering: .relaxed), 2 * 500 * 64)
        XCTAssertEqual(stable.load(ordering: .relaxed), 2 * 500 * (64 * 65 / 2))
        XCTAssertEqual(event.triggersCount, 2 * 500 * 64)
        token.cancel()
    }

    func testHandlerMaySendAgain() {
        let event = Event<Int>()
        let log = Received<Int>()
        _ = event.subscribe { value in
            log.append(value)
            if value == 1 { event.send(contentsOf: [10, 11]) }
            if value == 2 { event.send(20) }
        }
        event.send(contentsOf: 1...3)
        XCTAssertEqual(log.values, [1, 10, 11, 2, 20, 3])
        event.unsubscribeAll()  // the handler captures the event
    }

    func testQueuedObserversGetTheBatchInOrder() {
        let event = Event<Int>()
        let queue = DispatchQueue(label: "batch")
        let received = Received<Int>()
        _ = event.subscribe(delivery: .queue(queue)) { received.append($0) }
        event.send(contentsOf: 0..<100)
        queue.sync {}
        XCTAssertEqual(received.values, Array(0..<100))
    }

    func testConcurrentBatchesWhileObserversComeAndGoDeliverToTheStableOnes() {
        let event = Event<Int>()
        let stable = HeapAtomicWord<Int>(0)
        for _ in 0..<8 { _ = event.subscribe { stable.wrappingAdd($0, ordering: .relaxed) } }
        let stop = HeapAtomicWord<Bool>(false)
        let churn = spawnThread {
            while !stop.load(ordering: .relaxed) {
                event.subscribe { _ in }.cancel()
            }
        }
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<500 { event.send(contentsOf: 1...64) }
        }
        stop.store(true, ordering: .relaxed)
        churn.wait()
        XCTAssertEqual(stable.load(ordering: .relaxed), 8 * 2 * 500 * (64 * 65 / 2))
    }

    func testDocumentationExample() {
        let samples = Event<Int>()
        let printed = Received<String>()
        let token = samples.subscribe { sample in printed.append("sample \(sample)") }
        samples.send(contentsOf: [3, 1, 4])
        token.cancel()
        XCTAssertEqual(printed.values, ["sample 3", "sample 1", "sample 4"])
    }

    // MARK: KeyedEvent

    func testKeyedBatchGoesToThatKeyInOrder() {
        let prices = KeyedEvent<String, Double>()
        let acme = Received<Double>()
        let other = Received<Double>()
        let token = prices.subscribe(key: "ACME") { acme.append($0) }
        _ = prices.subscribe(key: "OTHER") { other.append($0) }
        prices.send(contentsOf: [10.5, 10.75, 10.25], forKey: "ACME")
        token.cancel()
        prices.send(contentsOf: [1], forKey: "ACME")
        XCTAssertEqual(acme.values, [10.5, 10.75, 10.25])
        XCTAssertEqual(other.values, [])
    }

    func testKeyedBatchReachesAKeySubscribedByAHandler() {
        let prices = KeyedEvent<String, Int>()
        let late = Received<Int>()
        let holder = TokenHolder()
        _ = prices.subscribe(key: "a") { value in
            if value == 1 { holder.token = prices.subscribe(key: "a") { late.append($0) } }
        }
        prices.send(contentsOf: [1, 2, 3], forKey: "a")
        XCTAssertEqual(late.values, [2, 3])
        prices.unsubscribeAll()  // the handler captures the event
    }

    func testKeyedBatchLimitAndSelfCancel() {
        let prices = KeyedEvent<String, Int>()
        let limited = Received<Int>()
        let cancelling = Received<Int>()
        let holder = TokenHolder()
        _ = prices.subscribe(key: "k", limit: 2) { limited.append($0) }
        holder.token = prices.subscribe(key: "k") { value in
            cancelling.append(value)
            holder.token?.cancel()
        }
        prices.send(contentsOf: 1...5, forKey: "k")
        XCTAssertEqual(limited.values, [1, 2])
        XCTAssertEqual(cancelling.values, [1])
    }
}

private final class TokenHolder: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var stored: Subscription?
    var token: Subscription? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
