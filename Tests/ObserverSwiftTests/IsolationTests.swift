import Dispatch
import Foundation
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// An actor that records what its isolated handlers received.
actor Recorder {
    private(set) var total = 0
    private(set) var values: [Int] = []
    private(set) var keyed: [String] = []

    func record(_ value: Int) {
        total += value
        values.append(value)
    }

    func record(key: String, _ value: Int) { keyed.append("\(key)=\(value)") }

}

protocol ProgressObserving: AnyObject {
    func progressed(_ fraction: Double)
}

final class ProgressSink: ProgressObserving, Sendable {
    let received = Received<Double>()
    func progressed(_ fraction: Double) { received.append(fraction) }
}

final class IsolationTests: XCTestCase {
    // MARK: Actor delivery

    func testActorDeliveryIsExactUnderConcurrentSenders() async throws {
        let event = Event<Int>()
        let recorder = Recorder()
        event.subscribe(isolatedTo: recorder) { recorder, value in recorder.record(value) }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for _ in 0..<20_000 { event.send(1) } }
            }
        }
        try await settleDeliveries()
        let total = await recorder.total
        XCTAssertEqual(total, 80_000, "every send reaches the actor exactly once")
    }

    func testActorDeliveryKeepsTheOrderOfOneSender() async throws {
        let event = Event<Int>()
        let recorder = Recorder()
        event.subscribe(isolatedTo: recorder) { recorder, value in recorder.record(value) }
        for value in 1...5_000 { event.send(value) }
        try await settleDeliveries()
        let values = await recorder.values
        XCTAssertEqual(values, Array(1...5_000))
    }

    func testActorDeliveryLimitIsExact() async throws {
        let event = Event<Int>()
        let recorder = Recorder()
        let token = event.subscribe(isolatedTo: recorder, limit: 3) { recorder, value in recorder.record(value) }
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for value in 1...1_000 { event.send(value) }
        }
        try await settleDeliveries()
        let count = await recorder.values.count
        XCTAssertEqual(count, 3, "the values claimed before the limit was spent are all delivered, no more")
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertFalse(token.cancel(), "a spent subscription is already gone")
    }

    func testNoActorDeliveryAfterCancelReturns() async throws {
        let event = Event<Int>()
        let recorder = Recorder()
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let token = event.subscribe(isolatedTo: recorder) { recorder, value in
            if value == 0 {
                entered.signal()
                gate.wait()  // holds the actor's drain inside its first delivery
            }
            recorder.record(value)
        }
        event.send(0)
        await Task.detached { entered.wait() }.value
        // These wait in the mailbox behind the blocked delivery.
        for value in 1...100 { event.send(value) }
        token.cancel()
        gate.signal()
        try await settleDeliveries()
        let values = await recorder.values
        XCTAssertEqual(values, [0], "values received before cancel() but not yet delivered are dropped")
    }

    func testActorSubscriptionEndsWithTheActor() async throws {
        let event = Event<Int>()
        var recorder: Recorder? = Recorder()
        weak let weakRecorder = recorder
        event.subscribe(isolatedTo: recorder!) { recorder, value in recorder.record(value) }
        event.send(1)
        try await settleDeliveries()
        recorder = nil
        // The drain task may hold the actor for a moment after its last delivery: settling waits for it.
        try await settleDeliveries()
        XCTAssertNil(weakRecorder, "the subscription holds its actor weakly")
        event.send(2)
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testObservableValueBindIsolatedToReplaysFirstThenEveryValue() async throws {
        let count = ObservableValue(7)
        let recorder = Recorder()
        count.replaying.subscribe(isolatedTo: recorder) { recorder, value in recorder.record(value) }
        for value in 8...10 { count.value = value }
        try await settleDeliveries()
        let values = await recorder.values
        XCTAssertEqual(values, [7, 8, 9, 10])
    }

    func testKeyedEventIsolatedToReceivesOnlyItsKeys() async throws {
        let prices = KeyedEvent<String, Int>()
        let recorder = Recorder()
        prices.forKeys(["a", "b"]).subscribe(isolatedTo: recorder) { recorder, item in
            recorder.record(key: item.key, item.value)
        }
        prices.subscribe(isolatedTo: recorder, key: "c", limit: 1) { recorder, value in recorder.record(value) }
        prices.send(1, forKey: "a")
        prices.send(2, forKey: "x")
        prices.send(3, forKey: "b")
        prices.send(4, forKey: "c")
        prices.send(5, forKey: "c")
        try await settleDeliveries()
        let keyed = await recorder.keyed
        let values = await recorder.values
        XCTAssertEqual(keyed, ["a=1", "b=3"])
        XCTAssertEqual(values, [4])
    }

    func testZeroLimitActorSubscriptionIsInactive() {
        let event = Event<Int>()
        let token = event.subscribe(isolatedTo: Recorder(), limit: 0) { recorder, value in recorder.record(value) }
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(event.subscribersCount, 0)
    }

    // MARK: Tokens

    func testStoringInASetCancelsWhenTheSetIsReleased() {
        let event = Event<Int>()
        let received = Received<Int>()
        var bag: Set<Subscription>? = []
        event.subscribe { received.append($0) }.store(in: &bag!)
        event.send(1)
        XCTAssertEqual(event.subscribersCount, 1)
        bag = nil
        XCTAssertEqual(event.subscribersCount, 0, "a token stored in a set cancels when released")
        event.send(2)
        XCTAssertEqual(received.values, [1])
    }

    func testAPlainTokenDoesNotCancelWhenReleased() {
        let event = Event<Int>()
        let received = Received<Int>()
        do {
            let token = event.subscribe { received.append($0) }
            _ = token
        }
        event.send(1)
        XCTAssertEqual(received.values, [1], "dropping a token does not cancel (the compiler warns instead)")
        XCTAssertEqual(event.unsubscribeAll(), 1)
    }

    func testObserverErrorHasALocalizedDescription() {
        let error: Error = ObserverError.waitInsideDelivery
        XCTAssertEqual(
            error.localizedDescription,
            "cannot wait for in-flight deliveries from inside a delivery on the same thread")
    }
}
