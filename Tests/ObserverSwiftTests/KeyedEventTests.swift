import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

final class KeyedEventTests: XCTestCase {
    override func tearDown() {
        XCTAssertNoThrow(try ObserverCore.reclaimNow())
        super.tearDown()
    }

    // MARK: Routing

    func testSendReachesExactlyTheKeysObservers() {
        let event = KeyedEvent<String, Int>()
        let tally = KeyedTally()
        let tokens = [
            event.subscribe(key: "a") { tally.add("a1", $0) },
            event.subscribe(key: "a") { tally.add("a2", $0) },
            event.subscribe(key: "b") { tally.add("b", $0) },
        ]

        event.send(1, forKey: "a")
        event.send(10, forKey: "b")
        event.send(100, forKey: "c")  // nobody observes "c"

        XCTAssertEqual(tally.all, ["a1": 1, "a2": 1, "b": 10])
        XCTAssertEqual(event.keyCount, 2)
        XCTAssertEqual(Set(event.keys), ["a", "b"])
        XCTAssertEqual(event.subscribersCount, 3)
        XCTAssertEqual(event.subscribersCount(forKey: "a"), 2)
        XCTAssertEqual(event.subscribersCount(forKey: "c"), 0)
        withExtendedLifetime(tokens) {}
    }

    func testSendWithoutAnySubscriberDoesNothing() {
        let event = KeyedEvent<Int, Int>()
        event.send(1, forKey: 1)
        XCTAssertEqual(event.keyCount, 0)
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testOneSubscriptionOverSeveralKeysReceivesEachKeyAndOneTokenCancelsAll() {
        let event = KeyedEvent<String, Int>()
        let received = Received<String>()
        let token = event.forKeys(["north", "south", "north"]).subscribe { key, steps in
            received.append("\(key):\(steps)")
        }
        XCTAssertEqual(event.keyCount, 2)
        XCTAssertEqual(event.subscribersCount, 1, "one subscription, counted once")

        event.send(1, forKey: "north")
        event.send(2, forKey: "south")
        event.send(3, forKey: "east")
        XCTAssertEqual(received.values, ["north:1", "south:2"], "a duplicate key delivers once")

        XCTAssertTrue(token.isActive)
        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.cancel(), "cancel is idempotent")
        XCTAssertFalse(token.isActive)
        event.send(4, forKey: "north")
        event.send(5, forKey: "south")
        XCTAssertEqual(received.count, 2)
        XCTAssertEqual(event.keyCount, 0, "both keys emptied and were removed")
    }

    func testSubscribingToNoKeysReturnsAnInactiveToken() {
        let event = KeyedEvent<String, Int>()
        let token = event.forKeys([String]()).subscribe { _, _ in XCTFail("never") }
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel())
        XCTAssertFalse(event.subscribe(key: "a", limit: 0) { _ in }.isActive)
        XCTAssertEqual(event.keyCount, 0)
    }

    // MARK: Collisions

    func testCollidingHashesAreComparedExactly() {
        let event = KeyedEvent<CollidingKey, Int>()
        let tally = KeyedTally()
        var tokens: [Int: Subscription] = [:]
        for id in 0..<40 {
            tokens[id] = event.subscribe(key: CollidingKey(id: id)) { tally.add("\(id)", $0) }
        }
        XCTAssertEqual(event.keyCount, 40)
        for id in 0..<40 { event.send(id + 1, forKey: CollidingKey(id: id)) }
        for id in 0..<40 { XCTAssertEqual(tally["\(id)"], id + 1, "key \(id)") }
        event.send(1, forKey: CollidingKey(id: 999))  // same hash, no such key

        // Remove every other key; the colliding neighbours stay reachable.
        for id in stride(from: 0, to: 40, by: 2) { XCTAssertTrue(tokens[id]!.cancel()) }
        XCTAssertEqual(event.keyCount, 20)
        for id in 0..<40 { event.send(1000, forKey: CollidingKey(id: id)) }
        for id in 0..<40 {
            XCTAssertEqual(tally["\(id)"], id + 1 + (id % 2 == 1 ? 1000 : 0), "key \(id)")
        }
    }

    func testKeysOfDifferentTypesInOneEngineNeverMatch() {
        // The engine is shared by keyed observables whose key type is chosen
        // per call: 1 as Int and 1 as UInt8 are different keys.
        let lists = KeyedSlotLists<Subscriber>()
        let intBox = KeyedClosureSubscriber<Int, Int> { _, _ in }
        let byteBox = KeyedClosureSubscriber<UInt8, Int> { _, _ in }
        let intHandle = lists.add(intBox, forKey: 1 as Int)
        let byteHandle = lists.add(byteBox, forKey: 1 as UInt8)
        XCTAssertEqual(lists.keyCount, 2)
        XCTAssertFalse(lists.contains(intHandle, forKey: 1 as UInt8))
        XCTAssertTrue(lists.contains(intHandle, forKey: 1 as Int))
        XCTAssertFalse(lists.remove(byteHandle, forKey: 1 as Int))
        XCTAssertTrue(lists.remove(byteHandle, forKey: 1 as UInt8))
        XCTAssertEqual(lists.keyCount, 1)
        XCTAssertTrue(lists.remove(intHandle, forKey: 1 as Int))
        XCTAssertEqual(lists.keyCount, 0)
    }

    // MARK: Reclaiming keys

    func testEmptyKeysAreRemovedAndTheirMemoryReclaimed() throws {
        try ObserverCore.reclaimNow()
        let keysBefore = ObserverCore.liveKeys
        let deinitsBefore = TrackedKey.deinits.load(ordering: .relaxed)
        let event = KeyedEvent<TrackedKey, Int>()
        var tokens: [Subscription] = []
        for id in 0..<100 {
            tokens.append(event.subscribe(key: TrackedKey(id)) { _ in })
            tokens.append(event.subscribe(key: TrackedKey(id)) { _ in })
        }
        XCTAssertEqual(event.keyCount, 100)
        XCTAssertEqual(ObserverCore.liveKeys - keysBefore, 100)
        // The second key of each pair equals a stored one, so the map never
        // stored it and nothing else holds it: released at once. The 100
        // stored keys stay until their last subscription goes.
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - deinitsBefore, 100)

        // Half the subscriptions go: every key still has one.
        for index in stride(from: 0, to: tokens.count, by: 2) { tokens[index].cancel() }
        XCTAssertEqual(event.keyCount, 100)
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - deinitsBefore, 100)
        // The rest go: each key is removed with its last subscription.
        for index in stride(from: 1, to: tokens.count, by: 2) { tokens[index].cancel() }
        XCTAssertEqual(event.keyCount, 0)
        XCTAssertEqual(ObserverCore.liveKeys, keysBefore)

        // After a grace period the core releases the stored keys themselves.
        try ObserverCore.reclaimNow()
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - deinitsBefore, 200)
        XCTAssertEqual(ObserverCore.statistics.pendingObjects, 0)
        withExtendedLifetime(event) {}
    }

    func testDeallocatingTheEventReleasesEveryKey() throws {
        try ObserverCore.reclaimNow()
        let keysBefore = ObserverCore.liveKeys
        let deinitsBefore = TrackedKey.deinits.load(ordering: .relaxed)
        var event: KeyedEvent<TrackedKey, Int>? = KeyedEvent()
        let token = event!.forKeys((0..<10).map(TrackedKey.init)).subscribe { _, _ in }
        XCTAssertEqual(ObserverCore.liveKeys - keysBefore, 10)
        event = nil
        XCTAssertEqual(ObserverCore.liveKeys, keysBefore)
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel(), "cancelling after the source is gone is a no-op")
        try ObserverCore.reclaimNow()
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - deinitsBefore, 10)
    }

    /// Tokens hold the event's keyed lists strongly (a weak reference would
    /// slow every retain of them): deallocating the event must still free
    /// every subscription, so a kept token keeps neither the handler's
    /// captures nor the keys alive, whichever way it subscribed.
    func testKeptTokensKeepNoHandlerAliveOnceTheEventIsGone() throws {
        try ObserverCore.reclaimNow()
        let keysBefore = ObserverCore.liveKeys
        weak var captured: LifetimeTracker?
        weak var capturedByLimited: LifetimeTracker?
        weak var capturedByTargeted: LifetimeTracker?
        var event: KeyedEvent<Int, Int>? = KeyedEvent()
        let target = LifetimeTracker()
        var tokens: [Subscription] = []
        do {
            let tracker = LifetimeTracker()
            let limitedTracker = LifetimeTracker()
            let targetedTracker = LifetimeTracker()
            captured = tracker
            capturedByLimited = limitedTracker
            capturedByTargeted = targetedTracker
            tokens.append(event!.subscribe(key: 1) { _ in _ = tracker.id })
            tokens.append(event!.subscribe(key: 2, limit: 5) { _ in _ = limitedTracker.id })
            tokens.append(event!.subscribe(target, key: 3) { _, _ in _ = targetedTracker.id })
        }
        XCTAssertEqual(ObserverCore.liveKeys - keysBefore, 3)
        event = nil
        XCTAssertEqual(ObserverCore.liveKeys, keysBefore)
        try ObserverCore.reclaimNow()
        XCTAssertNil(captured, "the closure subscriber is released though its token is kept")
        XCTAssertNil(capturedByLimited, "the limited subscriber is released though its token is kept")
        XCTAssertNil(capturedByTargeted, "the target's subscriber is released though its token is kept")
        for token in tokens {
            XCTAssertFalse(token.isActive)
            XCTAssertFalse(token.cancel(), "cancelling after the source is gone is a no-op")
        }
        withExtendedLifetime(target) {}
    }

    /// A token kept after its cancel holds nothing of the subscription: the
    /// handler and what it captures go after the grace period.
    func testACancelledOneKeyTokenKeepsNoHandlerAlive() throws {
        let event = KeyedEvent<Int, Int>()
        weak var captured: LifetimeTracker?
        let token: Subscription
        do {
            let tracker = LifetimeTracker()
            captured = tracker
            token = event.subscribe(key: 1) { _ in _ = tracker.id }
        }
        XCTAssertTrue(token.cancel())
        try ObserverCore.reclaimNow()
        XCTAssertNil(captured, "the kept token does not hold the handler")
        withExtendedLifetime(token) {}
    }

    /// A `subscribe(key:_:)` token cancels without a lock: of concurrent
    /// cancels, exactly one removes the subscription, and the key goes.
    func testConcurrentCancelsOfOneKeyTokenRemoveItExactlyOnce() {
        let event = KeyedEvent<Int, Int>()
        for round in 0..<200 {
            let token = event.subscribe(key: round) { _ in }
            let removed = HeapAtomicWord<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                if token.cancel() { removed.wrappingAdd(1, ordering: .relaxed) }
            }
            XCTAssertEqual(removed.load(ordering: .relaxed), 1, "round \(round)")
            XCTAssertFalse(token.isActive)
        }
        XCTAssertEqual(event.keyCount, 0)
    }

    // MARK: Limits, targets, queues

    func testLimitIsSharedByAllKeysAndExactUnderConcurrentSends() throws {
        let event = KeyedEvent<Int, Int>()
        let delivered = HeapAtomicWord<Int>(0)
        let token = event.forKeys([1, 2]).subscribe(limit: 3) { _, _ in
            delivered.wrappingAdd(1, ordering: .relaxed)
        }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for round in 0..<500 { event.send(round, forKey: 1 + (round + worker) % 2) }
        }
        XCTAssertEqual(delivered.load(ordering: .relaxed), 3)
        XCTAssertFalse(token.isActive)
        // Counting is a writer call: it also finishes removals a send had to
        // queue because a lock was busy.
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(event.keyCount, 0, "spent subscription left no key behind")
    }

    func testSubscribeOnceDeliversOnce() {
        let event = KeyedEvent<String, Int>()
        let values = Received<Int>()
        _ = event.subscribe(key: "k", limit: 1) { values.append($0) }
        event.send(1, forKey: "k")
        event.send(2, forKey: "k")
        XCTAssertEqual(values.values, [1])
        XCTAssertEqual(event.keyCount, 0)
    }

    func testWeakTargetStopsAndFreesItsKeys() {
        let event = KeyedEvent<String, Int>()
        var target: KeyedTarget? = KeyedTarget()
        event.subscribe(target!, key: "a") { target, value in target.received.append("a\(value)") }
        event.forKeys(["b", "c"]).subscribe(target!) { target, item in
            target.received.append("\(item.key)\(item.value)")
        }
        event.send(1, forKey: "a")
        event.send(2, forKey: "c")
        XCTAssertEqual(target?.received.values, ["a1", "c2"])
        XCTAssertEqual(event.subscribersCount, 2)

        target = nil
        XCTAssertEqual(event.subscribersCount, 0, "dead target's subscriptions no longer count")
        XCTAssertEqual(event.keyCount, 0, "and their keys are gone")
        event.send(3, forKey: "a")  // nothing to call, no crash
    }

    func testUnsubscribeTargetEverywhereOrFromOneKey() {
        let event = KeyedEvent<String, Int>()
        let first = KeyedTarget()
        let second = KeyedTarget()
        event.forKeys(["a", "b"]).subscribe(first) { target, item in target.received.append("\(item.key)\(item.value)")
        }
        event.subscribe(second, key: "a") { target, value in target.received.append("a\(value)") }

        XCTAssertEqual(event.unsubscribe(first, key: "a"), 1)
        event.send(1, forKey: "a")
        event.send(2, forKey: "b")
        XCTAssertEqual(first.received.values, ["b2"], "kept its other key")
        XCTAssertEqual(second.received.values, ["a1"])

        XCTAssertEqual(event.unsubscribe(first), 1)
        XCTAssertEqual(event.unsubscribe(first), 0, "no-op the second time")
        XCTAssertEqual(event.unsubscribe(KeyedTarget()), 0, "never subscribed: no-op")
        XCTAssertEqual(event.keys, ["a"])
    }

    /// A key's list holds plain closures (cells) beside boxes (a limit, a
    /// target, several keys): sends reach both in subscription order, counts
    /// count each once, removals by target leave the closures alone.
    func testPlainClosuresAndBoxesShareAKeysList() {
        let event = KeyedEvent<String, Int>()
        let received = Received<String>()
        let target = KeyedTarget()
        let plain = event.subscribe(key: "a") { received.append("plain\($0)") }
        let limited = event.subscribe(key: "a", limit: 1) { received.append("limited\($0)") }
        event.subscribe(target, key: "a") { _, value in received.append("target\(value)") }
        let both = event.forKeys(["a", "b"]).subscribe { key, value in received.append("both\(key)\(value)") }
        let plainB = event.subscribe(key: "b") { received.append("plainB\($0)") }
        XCTAssertEqual(event.subscribersCount(forKey: "a"), 4)
        XCTAssertEqual(event.subscribersCount(forKey: "b"), 2)
        XCTAssertEqual(event.subscribersCount, 5, "the two-key subscription counts once")

        event.send(1, forKey: "a")
        XCTAssertEqual(received.values, ["plain1", "limited1", "target1", "botha1"])
        XCTAssertEqual(event.subscribersCount(forKey: "a"), 3, "the limit is spent")
        XCTAssertFalse(limited.isActive)

        XCTAssertEqual(event.unsubscribe(target, key: "a"), 1)
        XCTAssertEqual(event.unsubscribe(target), 0, "the closures are no target's")
        event.send(2, forKey: "a")
        event.send(3, forKey: "b")
        XCTAssertEqual(received.values.suffix(4), ["plain2", "botha2", "bothb3", "plainB3"])

        XCTAssertTrue(plain.cancel())
        XCTAssertFalse(plain.cancel())
        XCTAssertTrue(both.isActive)
        XCTAssertEqual(event.unsubscribeAll(key: "a"), 1, "only the two-key box was left under a")
        XCTAssertEqual(event.keys, ["b"])
        XCTAssertEqual(event.unsubscribeAll(), 2)
        XCTAssertFalse(plainB.isActive || both.isActive)
        XCTAssertEqual(event.keyCount, 0)
    }

    func testUnsubscribeAllForOneKeyAndForEveryKey() {
        let event = KeyedEvent<String, Int>()
        let received = Received<String>()
        let both = event.forKeys(["a", "b"]).subscribe { key, _ in received.append(key) }
        _ = event.subscribe(key: "a") { _ in received.append("a-only") }  // ended by unsubscribeAll(key:)
        _ = event.subscribe(key: "c") { _ in received.append("c") }  // ended by unsubscribeAll()

        XCTAssertEqual(event.unsubscribeAll(key: "a"), 2)
        XCTAssertEqual(event.unsubscribeAll(key: "zzz"), 0)
        event.send(0, forKey: "a")
        event.send(0, forKey: "b")
        XCTAssertEqual(received.values, ["b"])
        XCTAssertTrue(both.isActive, "still registered under b")

        XCTAssertEqual(event.unsubscribeAll(), 2)
        XCTAssertEqual(event.keyCount, 0)
        XCTAssertFalse(both.isActive)
        XCTAssertFalse(both.cancel())
    }

    func testQueueDelivery() {
        let event = KeyedEvent<String, Int>()
        let queue = DispatchQueue(label: "keyed-test")
        let delivered = expectation(description: "delivered on the queue")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let token = event.subscribe(key: "k", delivery: .queue(queue)) { value in
            XCTAssertEqual(DispatchQueue.getSpecific(key: key), true)
            XCTAssertEqual(value, 7)
            delivered.fulfill()
        }
        event.send(7, forKey: "k")
        waitUntilFulfilled([delivered], timeout: 10)
        token.cancel()
    }

    func testSubscriptionBagCancelsKeyedSubscriptions() {
        let event = KeyedEvent<String, Int>()
        var bag: SubscriptionBag? = SubscriptionBag()
        event.forKeys(["x", "y"]).subscribe { _, _ in }.store(in: bag!)
        XCTAssertEqual(event.keyCount, 2)
        bag = nil
        XCTAssertEqual(event.keyCount, 0)
    }

    // MARK: Reentrancy

    func testRemovingAKeysLastSubscriptionsDuringASendToIt() throws {
        let event = KeyedEvent<String, Int>()
        let calls = Received<String>()
        let tokens = SharedVariable<[Subscription]>([])
        let first = event.subscribe(key: "k") { _ in
            calls.append("first")
            for token in tokens.value { token.cancel() }  // empties "k" while it is being sent to
            event.send(2, forKey: "k")  // reentrant send: nobody left
        }
        let second = event.subscribe(key: "k") { _ in calls.append("second") }
        tokens.value = [first, second]
        let keysBefore = ObserverCore.liveKeys
        event.send(1, forKey: "k")
        XCTAssertEqual(calls.values.first, "first")
        XCTAssertLessThanOrEqual(calls.count, 2, "the second may or may not run in this send")
        XCTAssertEqual(event.keyCount, 0)
        XCTAssertEqual(ObserverCore.liveKeys, keysBefore - 1)
        let after = calls.count
        event.send(3, forKey: "k")
        XCTAssertEqual(calls.count, after, "no send that starts later calls them")
        try ObserverCore.reclaimNow()
    }

    func testHandlerSubscribingToTheKeyDuringASendIsNotCalledByIt() {
        let event = KeyedEvent<String, Int>()
        let calls = Received<String>()
        let innerTokens = SharedVariable<[Subscription]>([])
        _ = event.subscribe(key: "k", limit: 1) { _ in
            calls.append("outer")
            let inner = event.subscribe(key: "k") { _ in calls.append("inner") }
            let new = event.subscribe(key: "new") { _ in calls.append("new") }
            innerTokens.update { $0 += [inner, new] }
            event.send(0, forKey: "new")
        }
        event.send(1, forKey: "k")
        XCTAssertEqual(calls.values, ["outer", "new"])
        event.send(2, forKey: "k")
        XCTAssertEqual(calls.values, ["outer", "new", "inner"])
        XCTAssertEqual(innerTokens.value.count, 2)
    }

    // MARK: Concurrency

    func testConcurrentSubscribeAndUnsubscribeOnKeysWhileSending() {
        let event = KeyedEvent<Int, Int>()
        let stableKeys = 8
        let sendsPerSender = 2_000
        let stable = (0..<stableKeys).map { _ in KeyedCounter() }
        var tokens: [Subscription] = []
        for key in 0..<stableKeys {
            tokens.append(event.subscribe(key: key) { _ in stable[key].increment() })
        }
        let transientDeliveries = HeapAtomicWord<Int>(0)
        let stop = HeapAtomicWord<Bool>(false)
        let finishedSenders = HeapAtomicWord<Int>(0)

        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            if worker == 2 {
                // Churn: subscribers come and go on the stable keys and on
                // keys that are created and removed again.
                var round = 0
                while !stop.load(ordering: .relaxed) {
                    let onStable = event.subscribe(key: round % stableKeys) { _ in
                        transientDeliveries.wrappingAdd(1, ordering: .relaxed)
                    }
                    let onFresh = event.forKeys([1_000 + round % 50, 2_000 + round % 7]).subscribe { _, _ in
                        transientDeliveries.wrappingAdd(1, ordering: .relaxed)
                    }
                    onStable.cancel()
                    onFresh.cancel()
                    round += 1
                }
                return
            }
            for round in 0..<sendsPerSender {
                for key in 0..<stableKeys { event.send(round, forKey: key) }
                event.send(round, forKey: 1_000 + round % 50)
            }
            // The last sender to finish stops the churn.
            if finishedSenders.wrappingAdd(1, ordering: .relaxed).newValue == 2 {
                stop.store(true, ordering: .relaxed)
            }
        }

        for key in 0..<stableKeys {
            XCTAssertEqual(stable[key].value, 2 * sendsPerSender, "key \(key)")
        }
        XCTAssertEqual(event.keyCount, stableKeys, "transient keys were all removed")
        XCTAssertEqual(event.subscribersCount, stableKeys)
        for token in tokens { token.cancel() }
        XCTAssertEqual(event.keyCount, 0)
    }

    func testConcurrentSubscribersOnOneKeyCreateItOnce() {
        let event = KeyedEvent<String, Int>()
        let tokens = Locked<[Subscription]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<100 {
                let token = event.subscribe(key: "shared") { _ in }
                tokens.withLock { $0.append(token) }
            }
        }
        XCTAssertEqual(event.keyCount, 1)
        XCTAssertEqual(event.subscribersCount(forKey: "shared"), 800)
        let all = tokens.withLock { $0 }
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in stride(from: worker, to: all.count, by: 8) { XCTAssertTrue(all[index].cancel()) }
        }
        XCTAssertEqual(event.keyCount, 0)
    }

    // MARK: The Keyed observers guide's example

    func testKeyedGuideExample() {
        // What the Keyed observers guide states for its KeyedEvent example.
        final class Portfolio: @unchecked Sendable {
            // @unchecked: `recorded` is only touched while `lock` is held.
            private let lock = NSLock()
            private var recorded: [String] = []
            func add(_ line: String) { lock.withLock { recorded.append(line) } }
            var lines: [String] { lock.withLock { recorded } }
        }

        let prices = KeyedEvent<String, Double>()
        let portfolio = Portfolio()

        // One key, a closure: the token cancels it.
        let apple = prices.subscribe(key: "AAPL") { price in print("AAPL now", price) }

        // Several keys, one subscription; the handler gets the key.
        let tech = prices.forKeys(["MSFT", "GOOG"]).subscribe { symbol, price in print(symbol, price) }

        // A weakly held target, as with Event: no [weak self] needed.
        prices.subscribe(portfolio, key: "AAPL") { portfolio, price in
            portfolio.add("AAPL \(price)")
        }

        prices.send(187.5, forKey: "AAPL")  // the AAPL closure and the portfolio
        prices.send(402.1, forKey: "MSFT")  // the tech subscription only
        prices.send(9.99, forKey: "XYZ")  // nobody: costs a hash and one probe

        apple.cancel()
        tech.cancel()  // removes it from MSFT and GOOG; both keys are freed
        print(prices.keyCount)  // 1: only AAPL (the portfolio) is left

        XCTAssertEqual(portfolio.lines, ["AAPL 187.5"])
        XCTAssertEqual(prices.keyCount, 1)
    }
}
