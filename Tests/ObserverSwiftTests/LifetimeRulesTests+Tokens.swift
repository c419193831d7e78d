import Dispatch
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// The lifetime table's rows for tokens kept in a `Set` and for actor
/// subscriptions.
extension LifetimeRulesTests {
    func testTokenReleasedFromASetCancelsItsSubscription() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        let event = Event<Int>()
        let received = Received<Int>()
        var set = Set<Subscription>()
        let tracker = LifetimeTracker()
        event.subscribe { value in
            _ = tracker.id
            received.append(value)
        }.store(in: &set)
        event.send(1)
        XCTAssertEqual(event.subscribersCount, 1)
        set.removeAll()
        event.send(2)
        XCTAssertEqual(received.values, [1], "released from the set: cancelled")
        XCTAssertEqual(event.subscribersCount, 0)
        try ObserverCore.reclaimNow()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline + 1, "only the test's own tracker")
    }

    func testDeallocatedActorEndsItsSubscriptionAndDropsWhatIsQueued() async throws {
        let event = Event<Int>()
        let deallocated = DispatchSemaphore(value: 0)
        var recorder: GatedRecorder? = GatedRecorder(deallocated: deallocated)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let token = event.subscribe(isolatedTo: recorder!) { recorder, value in recorder.record(value) }
        let queuedBefore = ObserverCore.statistics.queuedActorDeliveries
        // Keep the actor busy on a task that holds it only while it runs.
        Task { [recorder] in await recorder!.occupy(entered: entered, release: release) }
        XCTAssertEqual(entered.wait(timeout: .now() + 5), .success)
        event.send(1)
        event.send(2)
        recorder = nil
        release.signal()
        // The task and the mailbox's job let go of the actor: it deallocates,
        // the subscription ends, and the mailbox drops the queued values.
        XCTAssertEqual(deallocated.wait(timeout: .now() + 5), .success, "the actor deallocated")
        event.send(0)
        try await settleDeliveries()
        XCTAssertFalse(token.isActive, "the actor's deallocation ended the subscription")
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(ObserverCore.statistics.queuedActorDeliveries, queuedBefore, "nothing left queued")
    }
}
