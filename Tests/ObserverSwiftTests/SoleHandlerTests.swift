import CObserverCore
import ObserverEngine
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// A source whose only subscription is one plain closure keeps it in a
/// `SoleHandler`, without a slot list; the second subscription moves it into
/// a list. These tests cross that boundary both ways and check each
/// operation on each form.
final class SoleHandlerTests: XCTestCase {
    /// Counts its deinits: tells when a handler's closure context is freed.
    final class Tracked: Sendable {
        let deinits: Received<Int>
        init(_ deinits: Received<Int>) { self.deinits = deinits }
        deinit { deinits.append(1) }
    }

    func testOnePlainClosureMakesNoList() {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = event.subscribe { received.append($0) }
        XCTAssertNil(event.observers.existingList, "one plain closure: no slot list")
        XCTAssertEqual(event.subscribersCount, 1)
        XCTAssertTrue(token.isActive)
        event.send(1)
        event.send(2)
        XCTAssertEqual(received.values, [1, 2])
        XCTAssertEqual(event.triggersCount, 2)
        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.cancel(), "a second cancel removes nothing")
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(event.subscribersCount, 0)
        event.send(3)
        XCTAssertEqual(received.values, [1, 2])
        XCTAssertNil(event.observers.existingList)
    }

    func testTheWordTakesANewSoleHandlerAfterACancel() {
        let event = Event<Int>()
        let first = Received<Int>()
        let second = Received<Int>()
        let a = event.subscribe { first.append($0) }
        a.cancel()
        let b = event.subscribe { second.append($0) }
        XCTAssertNil(event.observers.existingList)
        event.send(1)
        XCTAssertEqual(first.values, [])
        XCTAssertEqual(second.values, [1])
        XCTAssertFalse(a.cancel(), "the old token does not remove the new handler")
        XCTAssertTrue(b.isActive)
        event.send(2)
        XCTAssertEqual(second.values, [1, 2])
        b.cancel()
    }

    func testASecondSubscriptionMovesTheHandlerIntoAListAndItsTokenFollows() {
        let event = Event<Int>()
        let first = Received<Int>()
        let second = Received<Int>()
        let a = event.subscribe { first.append($0) }
        let b = event.subscribe { second.append($0) }
        XCTAssertNotNil(event.observers.existingList, "two subscriptions: a slot list")
        XCTAssertEqual(event.subscribersCount, 2)
        event.send(1)
        XCTAssertEqual(first.values, [1], "the moved closure is called once")
        XCTAssertEqual(second.values, [1])
        XCTAssertTrue(a.isActive)
        XCTAssertTrue(a.cancel(), "the first token cancels its closure in the list")
        XCTAssertFalse(a.isActive)
        XCTAssertFalse(a.cancel())
        event.send(2)
        XCTAssertEqual(first.values, [1])
        XCTAssertEqual(second.values, [1, 2])
        XCTAssertEqual(event.subscribersCount, 1)
        b.cancel()
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testEveryOtherFormMovesTheHandlerIntoAList() {
        final class Target: Sendable {}
        let target = Target()
        let queue = DispatchQueue(label: "sole-handler-tests")
        let forms: [(String, (Event<Int>) -> Subscription)] = [
            ("target", { $0.subscribe(target) { _, _ in } }),
            ("limit", { $0.subscribe(limit: 3) { _ in } }),
            ("queue", { $0.subscribe(delivery: .queue(queue)) { _ in } }),
        ]
        for (name, subscribe) in forms {
            let event = Event<Int>()
            let first = Received<Int>()
            let a = event.subscribe { first.append($0) }
            let b = subscribe(event)
            XCTAssertNotNil(event.observers.existingList, name)
            event.send(1)
            XCTAssertEqual(first.values, [1], name)
            XCTAssertTrue(a.cancel(), name)
            event.send(2)
            XCTAssertEqual(first.values, [1], name)
            b.cancel()
        }
        queue.sync {}
    }

    func testUnsubscribeAllRemovesTheSoleHandler() {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = event.subscribe { received.append($0) }
        final class Target {}
        XCTAssertEqual(event.unsubscribe(Target()), 0, "a sole handler has no target")
        XCTAssertEqual(event.unsubscribeAll(), 1)
        XCTAssertEqual(event.unsubscribeAll(), 0)
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel())
        event.send(1)
        XCTAssertEqual(received.values, [])
    }

    func testTheSourcesDeinitReleasesTheHandlerAndItsTokenOutlivesIt() throws {
        let deinits = Received<Int>()
        var event: Event<Int>? = Event<Int>()
        let token: Subscription
        do {
            let tracked = Tracked(deinits)
            token = event!.subscribe { _ in _ = tracked }
        }
        XCTAssertTrue(token.isActive)
        event = nil
        try ObserverCore.reclaimNow()
        XCTAssertEqual(deinits.count, 1, "the closure's context is released with its source")
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel(), "a token of a deallocated source cancels nothing")
    }

    func testACancelledHandlerIsReleasedAfterTheGracePeriod() throws {
        let deinits = Received<Int>()
        let event = Event<Int>()
        let token: Subscription
        do {
            let tracked = Tracked(deinits)
            token = event.subscribe { _ in _ = tracked }
        }
        token.cancel()
        try ObserverCore.reclaimNow()
        XCTAssertEqual(deinits.count, 1)
    }

    /// Until its grace period ends, a cancelled handler is pending in the
    /// core: its object and its retirement record count among the pending
    /// bytes, which the core's scan policy bounds.
    func testARetiredHandlerCountsItsObjectAndRecordAmongThePendingBytes() throws {
        try ObserverCore.reclaimNow()
        let event = Event<Int>()
        let token = event.subscribe { _ in }
        // Inside a read section, nothing retired from here on is released.
        let (objects, bytes) = withReadSection {
            let before = oc_stats()
            XCTAssertTrue(token.cancel())
            let after = oc_stats()
            return (
                Int64(after.pending_objects) - Int64(before.pending_objects),
                Int64(after.pending_bytes) - Int64(before.pending_bytes)
            )
        }
        XCTAssertGreaterThanOrEqual(objects, 1)
        // The handler's object (40 bytes) and its record (72 bytes), each at
        // least their size.
        XCTAssertGreaterThanOrEqual(bytes, 40 + 72, "pending bytes per retired handler")
    }

    func testAHandlerCancellingItselfDuringASendIsCalledOnce() {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = SharedVariable<Subscription?>(nil)
        token.value = event.subscribe { value in
            received.append(value)
            token.value?.cancel()
        }
        event.send(1)
        event.send(2)
        XCTAssertEqual(received.values, [1])
        XCTAssertEqual(event.subscribersCount, 0)
    }

    /// An event whose one closure records what it receives in `first` and,
    /// on receiving `trigger`, subscribes a second closure recording in
    /// `second` (its token in `tokens`).
    private struct SpawningSubscription {
        let event = Event<Int>()
        let first = Received<Int>()
        let second = Received<Int>()
        let tokens = Received<Subscription>()
        let token: Subscription

        init(subscribingASecondAt trigger: Int) {
            let (event, first, second, tokens) = (event, first, second, tokens)
            token = event.subscribe { value in
                first.append(value)
                if value == trigger { tokens.append(event.subscribe { second.append($0) }) }
            }
        }
    }

    func testAHandlerSubscribingDuringASendMovesItselfAndTheNewOneWaitsForTheNextSend() {
        let spawning = SpawningSubscription(subscribingASecondAt: 1)
        let (event, first, second, tokens, a) = (
            spawning.event, spawning.first, spawning.second, spawning.tokens, spawning.token
        )
        event.send(1)
        XCTAssertEqual(second.values, [], "added during a send: not called by it")
        event.send(2)
        XCTAssertEqual(first.values, [1, 2])
        XCTAssertEqual(second.values, [2])
        a.cancel()
        for token in tokens.values { token.cancel() }
    }

    func testBatchSendFollowsTheWord() {
        let spawning = SpawningSubscription(subscribingASecondAt: 2)
        let (event, first, second, tokens, a) = (
            spawning.event, spawning.first, spawning.second, spawning.tokens, spawning.token
        )
        event.send(contentsOf: [1, 2, 3, 4])
        XCTAssertEqual(first.values, [1, 2, 3, 4])
        XCTAssertEqual(second.values, [3, 4], "a subscription added by a handler gets the following values")
        XCTAssertEqual(event.triggersCount, 4)
        a.cancel()
        let b = event.subscribe { _ in }
        b.cancel()
        for token in tokens.values { token.cancel() }
    }

    func testObservableValueKeepsOneClosureWithoutAList() {
        let value = ObservableValue(0)
        let received = Received<Int>()
        let token = value.replaying.subscribe { received.append($0) }
        XCTAssertNil(value.observers.existingList)
        value.value = 1
        XCTAssertEqual(received.values, [0, 1])
        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.cancel())
        value.value = 2
        XCTAssertEqual(received.values, [0, 1])
    }
}
