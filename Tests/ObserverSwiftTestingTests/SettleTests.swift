import Dispatch
import Foundation
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

private actor Tally {
    var total = 0
    func add(_ value: Int) { total += value }
}

private final class Capture: Sendable {
    let released: SharedVariable<Bool>
    init(_ released: SharedVariable<Bool>) { self.released = released }
    deinit { released.value = true }
}

/// Keeps the thread busy for `milliseconds` (a handler that takes time to run).
private func spin(milliseconds: Int) {
    let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
    while DispatchTime.now().uptimeNanoseconds < end {}
}

final class SettleTests: XCTestCase {
    func testQueuedDeliveriesHaveRunWhenItReturns() async throws {
        ObserverCore.isTrackingSubscriptions = true
        let saved = Event<Int>()
        let received = Received<Int>()
        let queue = DispatchQueue(label: "settle.serial")
        let concurrent = DispatchQueue(label: "settle.concurrent", attributes: .concurrent)
        let serialToken = saved.subscribe(delivery: .queue(queue)) { value in
            spin(milliseconds: 2)  // a slow handler: settling must wait for it, not race it
            received.append(value)
        }
        let concurrentToken = saved.subscribe(delivery: .queue(concurrent)) { value in
            spin(milliseconds: 2)
            received.append(-value)
        }
        for value in 1...5 { saved.send(value) }
        try await settleDeliveries()
        XCTAssertEqual(received.values.filter { $0 > 0 }, [1, 2, 3, 4, 5])
        XCTAssertEqual(received.values.filter { $0 < 0 }.sorted(), [-5, -4, -3, -2, -1])
        serialToken.cancel()
        concurrentToken.cancel()
    }

    func testMainActorAndActorDeliveriesHaveRunWhenItReturns() async throws {
        ObserverCore.isTrackingSubscriptions = true
        let saved = Event<Int>()
        let onMain = Received<Int>()
        let tally = Tally()
        let mainToken = saved.subscribe { @MainActor value in onMain.append(value) }
        saved.subscribe(isolatedTo: tally) { tally, value in tally.add(value) }
        let sender = JoinableThread {
            for value in 1...100 { saved.send(value) }
        }
        sender.join()
        try await settleDeliveries()
        XCTAssertEqual(onMain.values, Array(1...100))
        let total = await tally.total
        XCTAssertEqual(total, 5050)
        mainToken.cancel()
    }

    func testActorDeliveriesOfUntrackedSubscriptionsHaveRunWhenItReturns() async throws {
        let wasTracking = ObserverCore.isTrackingSubscriptions
        ObserverCore.isTrackingSubscriptions = false
        defer { ObserverCore.isTrackingSubscriptions = wasTracking }
        let saved = Event<Int>()
        let tally = Tally()
        saved.subscribe(isolatedTo: tally) { tally, value in tally.add(value) }
        let sender = JoinableThread {
            for value in 1...1_000 { saved.send(value) }
        }
        sender.join()
        try await settleDeliveries()
        let total = await tally.total
        XCTAssertEqual(total, 500_500)
    }

    func testDeliveriesThatSendAgainAreSettledToo() async throws {
        ObserverCore.isTrackingSubscriptions = true
        let first = Event<Int>()
        let second = Event<Int>()
        let third = Event<Int>()
        let received = Received<Int>()
        let tokens = [
            first.subscribe(delivery: .queue(DispatchQueue(label: "hop 1"))) { second.send($0 + 1) },
            second.subscribe { @MainActor value in third.send(value + 1) },
            third.subscribe(delivery: .queue(DispatchQueue(label: "hop 3"))) { received.append($0) },
        ]
        first.send(1)
        try await settleDeliveries()
        XCTAssertEqual(received.values, [3])
        for token in tokens { token.cancel() }
    }

    /// A queued handler that has started before the call, and sends to the
    /// main actor while the call waits for its queue (the main actor busy):
    /// the main-actor delivery it queues, and what that one sends on, have
    /// run too.
    func testAHandlerRunningWhenItStartsIsSettledWithWhatItSends() async throws {
        ObserverCore.isTrackingSubscriptions = true
        let first = Event<Int>()
        let second = Event<Int>()
        let third = Event<Int>()
        let received = Received<Int>()
        let started = DispatchSemaphore(value: 0)
        let tokens = [
            first.subscribe(delivery: .queue(DispatchQueue(label: "hop 1"))) { value in
                started.signal()
                spin(milliseconds: 50)  // still running while the call looks at the main actor
                DispatchQueue.main.async { spin(milliseconds: 200) }  // and the main actor busy
                second.send(value + 1)
            },
            second.subscribe { @MainActor value in third.send(value + 1) },
            third.subscribe(delivery: .queue(DispatchQueue(label: "hop 3"))) { received.append($0) },
        ]
        first.send(1)
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        try await settleDeliveries()
        XCTAssertEqual(received.values, [3], "what a handler running at the start sent on was not settled")
        for token in tokens { token.cancel() }
    }

    func testCancelledHandlersAreReleasedWhenItReturns() async throws {
        let saved = Event<Int>()
        let released = SharedVariable(false)
        let token = {
            let capture = Capture(released)
            return saved.subscribe { _ in _ = capture }
        }()
        XCTAssertFalse(released.value)
        token.cancel()
        try await settleDeliveries()
        XCTAssertTrue(released.value)
    }

    func testAQueuedHandlerThatNeverReturnsMakesItThrowNamingTheQueueAndTheHandler() async throws {
        ObserverCore.isTrackingSubscriptions = true
        let saved = Event<Int>()
        let release = DispatchSemaphore(value: 0)
        let token = saved.subscribe(delivery: .queue(DispatchQueue(label: "stuck queue"))) { _ in release.wait() }
        saved.send(1)
        do {
            try await settleDeliveries(timeout: .milliseconds(200))
            XCTFail("settled while a handler was still running")
        } catch {
            let text = "\(error)"
            XCTAssertTrue(
                text.hasPrefix("settleDeliveries timed out after 0.2 s waiting for queue \"stuck queue\""), text)
            XCTAssertTrue(text.contains("handlers still running: closure on Event<Int>, queue \"stuck queue\""), text)
        }
        release.signal()
        token.cancel()
        try await settleDeliveries()
    }

    func testASendThatNeverReturnsMakesItThrowInsteadOfHanging() async throws {
        let saved = Event<Int>()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let token = saved.subscribe { _ in
            entered.signal()
            release.wait()
        }
        let sender = JoinableThread { saved.send(1) }
        entered.wait()
        do {
            try await settleDeliveries(timeout: .milliseconds(200))
            XCTFail("settled while a send was still running")
        } catch {
            XCTAssertTrue("\(error)".contains("waiting for sends still running a handler"), "\(error)")
        }
        release.signal()
        sender.join()
        token.cancel()
        try await settleDeliveries()
    }
}
