import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// A `KeyedEvent` whose one subscription is a plain closure under one key
/// keeps that closure with its key and no keymap; the next subscription of
/// any form moves it into the keymap. Every reader of the event sees the
/// same subscriptions in both forms.
final class KeyedSoleHandlerTests: XCTestCase {
    /// Counts its deinitializations: captured by a handler, it shows when
    /// the handler's captures are released.
    private final class Capture: Sendable {
        let deinits: KeyedCounter
        init(_ deinits: KeyedCounter) { self.deinits = deinits }
        deinit { deinits.increment() }
    }

    private func isSole<Key, Value>(_ event: KeyedEvent<Key, Value>) -> Bool {
        if case .sole = event.observers.current { return true }
        return false
    }

    func testOneClosureUnderOneKeyMakesNoKeymapAndReceivesOnlyItsKey() {
        let event = KeyedEvent<String, Int>()
        let received = Received<Int>()
        let token = event.subscribe(key: "a") { received.append($0) }
        XCTAssertTrue(isSole(event))
        XCTAssertNil(event.withExistingLists { _ in true }, "one closure under one key makes no keymap")
        event.send(1, forKey: "a")
        event.send(2, forKey: "b")
        event.send(contentsOf: [3, 4], forKey: "a")
        event.send(contentsOf: [5], forKey: "b")
        XCTAssertEqual(received.values, [1, 3, 4])

        XCTAssertEqual(event.subscribersCount, 1)
        XCTAssertEqual(event.subscribersCount(forKey: "a"), 1)
        XCTAssertEqual(event.subscribersCount(forKey: "b"), 0)
        XCTAssertEqual(event.keyCount, 1)
        XCTAssertEqual(event.keys, ["a"])
        XCTAssertEqual(event.unsubscribeAll(key: "b"), 0)
        XCTAssertEqual(event.unsubscribe(KeyedTarget()), 0)
        XCTAssertTrue(token.isActive)

        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel(), "a second cancel finds nothing")
        event.send(6, forKey: "a")
        XCTAssertEqual(received.values, [1, 3, 4])
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(event.keyCount, 0)
        XCTAssertEqual(event.keys, [])
        XCTAssertNil(event.withExistingLists { _ in true })
        XCTAssertFalse(isSole(event))
    }

    /// `ObserverCore.liveKeys` counts a sole handler's key from its
    /// subscription until its removal, and once only after it moved into a
    /// keymap.
    func testLiveKeysCountsTheSoleHandlersKey() {
        let before = ObserverCore.liveKeys
        let event = KeyedEvent<String, Int>()
        let first = event.subscribe(key: "a") { _ in }
        XCTAssertEqual(ObserverCore.liveKeys - before, 1, "the sole handler's key")
        XCTAssertTrue(first.cancel())
        XCTAssertEqual(ObserverCore.liveKeys - before, 0, "removed with it")

        let sole = event.subscribe(key: "a") { _ in }
        XCTAssertEqual(event.unsubscribeAll(), 1)
        XCTAssertEqual(ObserverCore.liveKeys - before, 0, "removed by unsubscribeAll")

        let moved = event.subscribe(key: "a") { _ in }
        let beside = event.subscribe(key: "a") { _ in }
        XCTAssertEqual(ObserverCore.liveKeys - before, 1, "moved into the keymap: counted there alone")
        let other = event.subscribe(key: "b") { _ in }
        XCTAssertEqual(ObserverCore.liveKeys - before, 2)
        XCTAssertTrue(moved.cancel() && beside.cancel() && other.cancel())
        XCTAssertEqual(ObserverCore.liveKeys - before, 0)

        var doomed: KeyedEvent<String, Int>? = KeyedEvent()
        let orphan = doomed!.subscribe(key: "c") { _ in }
        XCTAssertEqual(ObserverCore.liveKeys - before, 1)
        doomed = nil
        XCTAssertEqual(ObserverCore.liveKeys - before, 0, "removed with its event")
        withExtendedLifetime((sole, orphan)) {}
    }

    func testUnsubscribeAllRemovesTheSoleHandler() {
        let event = KeyedEvent<String, Int>()
        let received = Received<Int>()
        let token = event.subscribe(key: "a") { received.append($0) }
        XCTAssertEqual(event.unsubscribeAll(key: "a"), 1)
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel())
        event.send(1, forKey: "a")

        let second = event.subscribe(key: "a") { received.append($0 * 10) }
        XCTAssertTrue(isSole(event), "an event emptied again takes a sole handler again")
        event.send(2, forKey: "a")
        XCTAssertEqual(event.unsubscribeAll(), 1)
        XCTAssertFalse(second.isActive)
        event.send(3, forKey: "a")
        XCTAssertEqual(received.values, [20])
    }

    /// Every form beside the sole handler moves it into the keymap; the
    /// handler then receives each send once, and its token cancels it there.
    func testTheNextSubscriptionOfEveryFormMovesTheSoleHandlerIntoTheKeymap() {
        let target = KeyedTarget()
        let forms: [(String, (KeyedEvent<String, Int>, Received<String>) -> Subscription)] = [
            ("the same key", { event, seen in event.subscribe(key: "a") { seen.append("second \($0)") } }),
            ("another key", { event, seen in event.subscribe(key: "b") { seen.append("second \($0)") } }),
            ("a limit", { event, seen in event.subscribe(key: "a", limit: 5) { seen.append("second \($0)") } }),
            (
                "a weak target",
                { event, seen in
                    event.subscribe(target, key: "a") { _, value in seen.append("second \(value)") }
                }
            ),
            (
                "several keys",
                { event, seen in event.forKeys(["a", "b"]).subscribe { _, value in seen.append("second \(value)") } }
            ),
            (
                "a queue",
                { event, seen in
                    event.subscribe(key: "a", delivery: .queue(.main)) { seen.append("second \($0)") }
                }
            ),
        ]
        for (name, subscribeSecond) in forms {
            let event = KeyedEvent<String, Int>()
            let seen = Received<String>()
            let first = event.subscribe(key: "a") { seen.append("first \($0)") }
            XCTAssertTrue(isSole(event), name)
            let second = subscribeSecond(event, seen)
            XCTAssertFalse(isSole(event), name)
            XCTAssertNotNil(event.withExistingLists { _ in true }, name)
            event.send(1, forKey: "a")
            XCTAssertEqual(seen.values.filter { $0.hasPrefix("first") }, ["first 1"], name)
            XCTAssertEqual(event.subscribersCount, 2, name)
            XCTAssertTrue(event.keys.contains("a"), name)

            XCTAssertTrue(first.isActive, name)
            XCTAssertTrue(first.cancel(), "the token forwards to the moved subscription: \(name)")
            XCTAssertFalse(first.isActive, name)
            XCTAssertFalse(first.cancel(), name)
            event.send(2, forKey: "a")
            XCTAssertEqual(seen.values.filter { $0.hasPrefix("first") }, ["first 1"], name)
            XCTAssertEqual(event.subscribersCount, 1, name)
            second.cancel()
        }
        withExtendedLifetime(target) {}
    }

    /// A handler that subscribes during a batch send moves the sole handler
    /// while it is being called: it still receives every value once.
    func testABatchSendThatMovesTheSoleHandlerCallsItOncePerValue() {
        let event = KeyedEvent<String, Int>()
        let seen = Received<String>()
        let tokens = Locked<[Subscription]>([])
        let first = event.subscribe(key: "a") { value in
            seen.append("first \(value)")
            if value == 2 {
                let token = event.subscribe(key: "a") { seen.append("second \($0)") }
                tokens.withLock { $0.append(token) }
            }
        }
        event.send(contentsOf: [1, 2, 3, 4], forKey: "a")
        XCTAssertEqual(seen.values, ["first 1", "first 2", "first 3", "second 3", "first 4", "second 4"])
        first.cancel()
        tokens.withLock { $0.forEach { $0.cancel() } }
    }

    /// A key not equal to itself is stored as a sole handler's key as it is
    /// in the keymap: counted, never found by a send or a key's reading,
    /// removed by its token.
    func testAKeyNotEqualToItselfIsCountedNeverFound() {
        let event = KeyedEvent<Double, Int>()
        let received = Received<Int>()
        let token = event.subscribe(key: .nan) { received.append($0) }
        XCTAssertTrue(isSole(event))
        event.send(1, forKey: .nan)
        event.send(contentsOf: [2], forKey: .nan)
        XCTAssertEqual(received.values, [])
        XCTAssertEqual(event.subscribersCount, 1)
        XCTAssertEqual(event.keyCount, 1)
        XCTAssertEqual(event.subscribersCount(forKey: .nan), 0)
        XCTAssertEqual(event.unsubscribeAll(key: .nan), 0)
        XCTAssertTrue(token.cancel())
        XCTAssertEqual(event.keyCount, 0)
    }

    /// A kept token keeps neither the closure's captures nor the key once
    /// its subscription ended: cancelled, moved and then cancelled, or its
    /// event deallocated.
    func testAKeptTokenKeepsNeitherCapturesNorKey() throws {
        let captures = KeyedCounter()
        try ObserverCore.reclaimNow()
        let keyDeinitsBefore = TrackedKey.deinits.load(ordering: .relaxed)

        // Cancelled as the sole handler.
        let event = KeyedEvent<TrackedKey, Int>()
        var capture: Capture? = Capture(captures)
        let cancelled = event.subscribe(key: TrackedKey(1)) { [capture] _ in _ = capture }
        capture = nil
        XCTAssertTrue(cancelled.cancel())
        try ObserverCore.reclaimNow()
        XCTAssertEqual(captures.value, 1, "the cancelled sole handler's captures")
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - keyDeinitsBefore, 1, "its key")

        // Moved into the keymap, then cancelled there.
        capture = Capture(captures)
        let moved = event.subscribe(key: TrackedKey(2)) { [capture] _ in _ = capture }
        capture = nil
        let beside = event.subscribe(key: TrackedKey(3)) { _ in }
        XCTAssertTrue(moved.cancel())
        XCTAssertTrue(beside.cancel())
        try ObserverCore.reclaimNow()
        XCTAssertEqual(captures.value, 2, "the moved handler's captures")
        // Keys 2 (the sole handler's and the keymap's copies) and 3.
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - keyDeinitsBefore, 3, "every key")

        // The event deallocated with its sole handler in place.
        var doomed: KeyedEvent<TrackedKey, Int>? = KeyedEvent()
        capture = Capture(captures)
        let orphan = doomed!.subscribe(key: TrackedKey(4)) { [capture] _ in _ = capture }
        capture = nil
        doomed = nil
        XCTAssertEqual(captures.value, 3, "released with its event, at once")
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - keyDeinitsBefore, 4)
        XCTAssertFalse(orphan.isActive)
        XCTAssertFalse(orphan.cancel())
        withExtendedLifetime((cancelled, moved, beside, orphan)) {}
    }

    /// Two threads send while a third subscribes beside the sole handler
    /// and cancels again: the handler receives every send exactly once,
    /// whichever form each send found it in.
    func testConcurrentSendsWhileTheSoleHandlerMovesDeliverEachValueOnce() {
        let rounds = 200
        let sendsPerThread = 200
        for round in 0..<rounds {
            let event = KeyedEvent<Int, Int>()
            let first = KeyedCounter()
            let second = KeyedCounter()
            let token = event.subscribe(key: 7) { _ in first.increment() }
            DispatchQueue.concurrentPerform(iterations: 3) { index in
                if index == 2 {
                    let beside = event.subscribe(key: round % 2 == 0 ? 7 : 8) { _ in second.increment() }
                    beside.cancel()
                } else {
                    for value in 0..<sendsPerThread { event.send(value, forKey: 7) }
                }
            }
            XCTAssertEqual(first.value, 2 * sendsPerThread, "round \(round)")
            XCTAssertLessThanOrEqual(second.value, 2 * sendsPerThread, "round \(round)")
            XCTAssertEqual(event.subscribersCount, 1)
            XCTAssertTrue(token.cancel())
        }
    }

    /// Two threads send numbered values while the sole handler is
    /// cancelled: a send whose number was taken after the cancel returned
    /// never reaches it, and it receives no value twice.
    func testNoSendThatStartsAfterTheCancelReturnsReachesTheSoleHandler() {
        for _ in 0..<100 {
            let event = KeyedEvent<Int, Int>()
            let numbers = HeapAtomicWord<Int>(0)
            let cancelledAt = HeapAtomicWord<Int>(Int.max)
            let received = Received<Int>()
            let token = event.subscribe(key: 1) { received.append($0) }
            runOnThreads(3) { role in
                if role == 2 {
                    while numbers.load(ordering: .relaxed) < 100 {}
                    token.cancel()
                    cancelledAt.store(numbers.load(ordering: .sequentiallyConsistent), ordering: .relaxed)
                    return
                }
                for _ in 0..<400 {
                    let number = numbers.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
                    event.send(number, forKey: 1)
                }
            }
            let values = received.values
            let limit = cancelledAt.load(ordering: .relaxed)
            XCTAssertTrue(values.allSatisfy { $0 <= limit }, "a send that started after the cancel returned")
            XCTAssertEqual(Set(values).count, values.count, "a value received twice")
            XCTAssertGreaterThanOrEqual(values.count, 1)
        }
    }

    /// A cancel of the sole handler racing the subscription that would move
    /// it: whichever wins, the handler ends, the other subscription stays,
    /// and nothing is counted twice.
    func testACancelRacingTheMoveEndsTheHandlerOnce() {
        for _ in 0..<500 {
            let event = KeyedEvent<Int, Int>()
            let first = KeyedCounter()
            let token = event.subscribe(key: 1) { _ in first.increment() }
            let cancels = KeyedCounter()
            let beside = Locked<Subscription?>(nil)
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    if token.cancel() { cancels.increment() }
                } else {
                    let made = event.subscribe(key: 1) { _ in }
                    beside.withLock { $0 = made }
                }
            }
            XCTAssertEqual(cancels.value, 1)
            XCTAssertFalse(token.isActive)
            XCTAssertFalse(token.cancel())
            event.send(1, forKey: 1)
            XCTAssertEqual(first.value, 0)
            XCTAssertEqual(event.subscribersCount, 1)
            _ = beside.withLock { $0?.cancel() }
            XCTAssertEqual(event.subscribersCount, 0)
        }
    }
}
